"""controller.ComputeHash as upstream computes it: ReplicaSet and DaemonSet revision names
identical to a real cluster's.

The vectors are every Deployment-made ReplicaSet in Sieve's recorded cluster states (Kubernetes
1.18, see tests/data/sieve_compute_hash.json's provenance); the Quantity rows are upstream's
quantity_test.go tables (TestQuantityString, TestQuantityParseEmit).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.api.gotypes import (
    DEFAULT_KUBERNETES_VERSION,
    KUBERNETES_VERSIONS,
    check_version,
    renderer,
)
from engine.api.gotypes.quantity import canonical, parse
from engine.controllers.hashing import compute_hash, fnv1a_32, safe_encode, spew_template

SIEVE = json.loads((Path(__file__).parent / "data" / "sieve_compute_hash.json").read_text())
VECTORS = SIEVE["vectors"]


def test_the_sieve_vectors_cover_every_operator_deployment_it_recorded() -> None:
    assert len(VECTORS) == 10
    assert len(SIEVE["statefulSetRevisions"]) == 20
    assert len(SIEVE["appliedDeployments"]) == 6
    assert SIEVE["provenance"]["license"].startswith("BSD-2-Clause")


@pytest.mark.parametrize("vector", VECTORS, ids=[v["replicaSet"] for v in VECTORS])
def test_a_replicaset_recorded_on_1_18_is_named_by_computehash_of_its_deployment_template(
    vector: dict,
) -> None:
    hash_ = compute_hash(vector["template"], vector["collisionCount"], "1.18")
    assert hash_ == vector["podTemplateHash"]
    assert vector["replicaSet"].endswith("-" + hash_)


def test_the_collision_count_is_hashed_as_eight_little_endian_bytes_after_the_dump() -> None:
    template = VECTORS[0]["template"]
    dump = spew_template(template, "1.18").encode()
    for count in (0, 1, 2, 300, 2**31 - 1):
        expected = safe_encode(str(fnv1a_32(dump + count.to_bytes(4, "little") + bytes(4))))
        assert compute_hash(template, count, "1.18") == expected
    assert compute_hash(template, None, "1.18") == VECTORS[0]["podTemplateHash"]
    assert compute_hash(template, 0, "1.18") != compute_hash(template, None, "1.18")


def test_the_dump_is_go_spew_percent_sharp_v_of_the_go_struct() -> None:
    text = spew_template(
        {
            "metadata": {"labels": {"b": "2", "a": "1"}},
            "spec": {"containers": [{"name": "c", "image": "i"}], "securityContext": {}},
        },
        "1.18",
    )
    assert text.startswith(
        "(v1.PodTemplateSpec){ObjectMeta:(v1.ObjectMeta){Name:(string) GenerateName:(string) "
    )
    # a zero metav1.Time, nil pointers and slices typed, maps sorted, struct pointers followed
    assert (
        "CreationTimestamp:(v1.Time){Time:(time.Time){wall:(uint64)0 ext:(int64)0 loc:(*time.Location)<nil>}}"
        in text
    )
    assert "DeletionTimestamp:(*v1.Time)<nil>" in text
    assert "Labels:(map[string]string)map[a:1 b:2]" in text
    assert (
        "InitContainers:([]v1.Container)<nil> Containers:([]v1.Container)[{Name:(string)c Image:(string)i Command:([]string)<nil>"
        in text
    )
    assert (
        "SecurityContext:(*v1.PodSecurityContext){SELinuxOptions:(*v1.SELinuxOptions)<nil>" in text
    )
    assert text.endswith("TopologySpreadConstraints:([]v1.TopologySpreadConstraint)<nil>}}")


def test_a_quantity_is_dumped_as_the_informer_parses_its_canonical_text() -> None:
    r = renderer("1.18")
    assert r.render("100m", "resource.Quantity") == (
        "(resource.Quantity){i:(resource.int64Amount){value:(int64)100 scale:(resource.Scale)-3} "
        "d:(resource.infDecAmount){Dec:(*inf.Dec)<nil>} s:(string)100m Format:(resource.Format)DecimalSI}"
    )
    # 512Mi is canonical but ParseQuantity caches no string for it (512 & 7 == 0)
    assert "s:(string) Format:(resource.Format)BinarySI" in r.render("512Mi", "resource.Quantity")
    assert r.render("0.1", "resource.Quantity") == r.render("100m", "resource.Quantity")


def test_an_int_or_string_is_dumped_with_its_type() -> None:
    r = renderer("1.18")
    assert (
        r.render(8080, "intstr.IntOrString")
        == "(intstr.IntOrString){Type:(intstr.Type)0 IntVal:(int32)8080 StrVal:(string)}"
    )
    assert (
        r.render("http", "intstr.IntOrString")
        == "(intstr.IntOrString){Type:(intstr.Type)1 IntVal:(int32)0 StrVal:(string)http}"
    )


# TestQuantityString: (canonical, an alternate spelling) -> String()
QUANTITY_STRING = [
    ("1Gi", "1024Mi"),
    ("300Mi", "307200Ki"),
    ("6Ki", ""),
    ("1001Gi", "1025024Mi"),
    ("1Ti", "1024Gi"),
    ("5", "5000m"),
    ("500m", "0.5"),
    ("1G", "1000M"),
    ("1G", "0.001T"),
    ("1m", "1000u"),
    ("80m", ""),
    ("1080m", "1.08"),
    ("1080m", "1080000000n"),
    ("300M", ""),
    ("1T", ""),
    ("1234567M", ""),
    ("1234567m", ""),
    ("3k", ""),
    ("1025", ""),
    ("0", ""),
    ("1e9", ".001e12"),
    ("1e-3", "0.001e0"),
    ("1e-9", "1000e-12"),
    ("80e-3", ""),
    ("300e6", ""),
    ("1e12", ""),
    ("1e3", ""),
    ("3e3", ""),
    ("0", "00"),
    ("1n", ""),
    ("80n", ""),
    ("1080n", ""),
    ("1u", ""),
    ("80u", ""),
    ("1080u", ""),
]


@pytest.mark.parametrize(("expect", "alternate"), QUANTITY_STRING)
def test_quantity_string_is_upstreams_canonical_form(expect: str, alternate: str) -> None:
    assert canonical(expect) == expect
    assert parse(expect)["s"] == expect  # "did not copy canonical string on parse"
    if alternate:
        assert parse(alternate)["s"] == ""
        assert canonical(alternate) == expect


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("1Ki", "1Ki"),
        ("1Mi", "1Mi"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
    ],
)
def test_quantity_parse_emit(text: str, expect: str) -> None:
    assert canonical(text) == expect
    assert canonical("-" + text) == "-" + expect


def test_every_supported_release_has_a_type_layout_and_the_default_is_the_newest() -> None:
    assert DEFAULT_KUBERNETES_VERSION == KUBERNETES_VERSIONS[-1]
    for version in KUBERNETES_VERSIONS:
        layout = renderer(version)
        assert layout.root == "corev1.PodTemplateSpec"
        assert compute_hash(VECTORS[0]["template"], None, version)


def test_the_same_template_hashes_differently_on_releases_with_other_go_types() -> None:
    template = VECTORS[0]["template"]
    assert compute_hash(template, None, "1.18") != compute_hash(template, None, "1.33")


@pytest.mark.parametrize(
    ("text", "version"), [("1.33", "1.33"), ("v1.18", "1.18"), ("1.32.4", "1.32")]
)
def test_a_kubernetes_version_is_named_by_its_minor_release(text: str, version: str) -> None:
    assert check_version(text) == version


@pytest.mark.parametrize("text", ["1.19", "2.0", "latest", "1", "1.33.x"])
def test_an_unsupported_kubernetes_version_is_refused_naming_the_supported_ones(text: str) -> None:
    with pytest.raises(ValueError, match="choose one of 1.18, 1.32"):
        check_version(text)


# --- `replay --kubernetes-version`: chosen, recorded in the log, kept on --append -------------

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
WEB_APP = str(EXAMPLES / "web-app-deployment.jsonl")


def kreplay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from replay.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def log_lines(capsys: pytest.CaptureFixture[str], store: str) -> list[dict]:
    code, out, err = kreplay(capsys, "log", "-o", "json", "--store", store)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def replica_set_names(capsys: pytest.CaptureFixture[str], store: str) -> list[str]:
    code, out, err = kreplay(capsys, "get", "rs", "-o", "name", "--store", store)
    assert code == 0, err
    return sorted(out.split())


def test_replay_records_the_chosen_release_first_and_names_replicasets_with_its_go_types(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = f"sqlite:{tmp_path / 'old.db'}", f"sqlite:{tmp_path / 'new.db'}"
    assert kreplay(capsys, "replay", WEB_APP, "--kubernetes-version", "v1.18", "--store", old)[0] == 0
    assert kreplay(capsys, "replay", WEB_APP, "--store", new)[0] == 0
    first_old, first_new = log_lines(capsys, old)[0], log_lines(capsys, new)[0]
    assert (first_old["type"], first_old["kubernetes_version"], first_old["position"]) == ("ClusterConfigured", "1.18", 1)
    assert (first_new["type"], first_new["kubernetes_version"]) == ("ClusterConfigured", DEFAULT_KUBERNETES_VERSION)
    names_old, names_new = replica_set_names(capsys, old), replica_set_names(capsys, new)
    assert len(names_old) == len(names_new) == 3
    assert not set(names_old) & set(names_new)  # the same templates, other Go types: other names


def test_a_history_appended_without_a_version_keeps_the_recorded_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole, parts = f"sqlite:{tmp_path / 'whole.db'}", f"sqlite:{tmp_path / 'parts.db'}"
    assert kreplay(capsys, "replay", WEB_APP, "--kubernetes-version", "1.33", "--store", whole)[0] == 0
    assert kreplay(capsys, "replay", WEB_APP, "--lines", "1-4", "--kubernetes-version", "1.33", "--store", parts)[0] == 0
    assert kreplay(capsys, "replay", WEB_APP, "--lines", "5-", "--append", "--store", parts)[0] == 0
    assert log_lines(capsys, parts) == log_lines(capsys, whole)


def test_naming_another_release_on_append_records_the_upgrade_and_keeps_existing_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = f"sqlite:{tmp_path / 'k.db'}"
    assert kreplay(capsys, "replay", WEB_APP, "--lines", "1-4", "--kubernetes-version", "1.18", "--store", store)[0] == 0
    (before,) = replica_set_names(capsys, store)
    assert kreplay(capsys, "replay", WEB_APP, "--lines", "5-", "--append", "--kubernetes-version", "1.36", "--store", store)[0] == 0
    configured = [e for e in log_lines(capsys, store) if e["type"] == "ClusterConfigured"]
    assert [e["kubernetes_version"] for e in configured] == ["1.18", "1.36"]
    assert "(was 1.18)" in configured[1]["message"]
    assert before in replica_set_names(capsys, store)  # found by its template, as upstream


def test_an_unsupported_kubernetes_version_is_a_usage_error_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "k.db"
    code, out, err = kreplay(capsys, "replay", WEB_APP, "--kubernetes-version", "1.20", "--store", f"sqlite:{store}")
    assert code == 2 and out == ""
    assert "error: --kubernetes-version: Kubernetes version '1.20' is not supported: choose one of 1.18, 1.32, 1.33, 1.34, 1.35, 1.36" in err
    assert not store.exists()


REVISIONS = SIEVE["statefulSetRevisions"]


@pytest.mark.parametrize("revision", REVISIONS, ids=[f"{r['controllerRevision']}@{r['source'].split('/')[1]}" for r in REVISIONS])
def test_a_statefulset_revision_recorded_on_1_18_is_named_by_hash_controller_revision(revision: dict) -> None:
    from engine.controllers.hashing import statefulset_revision_hash

    assert statefulset_revision_hash(revision["data"], revision["collisionCount"]) == revision["hash"]
    assert revision["controllerRevision"].endswith("-" + revision["hash"])


APPLIED = SIEVE["appliedDeployments"]


@pytest.mark.parametrize("applied", APPLIED, ids=[a["replicaSet"] for a in APPLIED])
def test_replaying_a_users_deployment_on_1_18_makes_the_replicaset_the_real_cluster_made(
    applied: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The manifest as its user applied it (Sieve kept kubectl's last-applied-configuration):
    the engine's defaults, its Deployment controller and ComputeHash give the recorded name."""
    history = tmp_path / "h.jsonl"
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    lines = [{"at": "2026-01-01T00:00:00Z", "op": "apply", "object": node}, {"at": "2026-01-01T00:00:01Z", "op": "apply", "object": applied["manifest"]}]
    history.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = f"sqlite:{tmp_path / 'k.db'}"
    code, out, err = kreplay(capsys, "replay", str(history), "--kubernetes-version", "1.18", "--store", store)
    assert code == 0, err
    assert replica_set_names(capsys, store) == [f"replicaset.apps/{applied['replicaSet']}"]
