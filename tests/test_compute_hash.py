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
