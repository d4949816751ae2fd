"""The seed scenarios are regression tests through the pytest plugin: tests/seeds/*.kreplay.jsonl
are links to examples/*.jsonl, collected by the plugin, each checked against the golden decision
log beside it. Here: the links and goldens are what they claim to be, and the goldens say what
the seed articles' real clusters did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SEEDS = Path(__file__).resolve().parent / "seeds"
EXAMPLES = SEEDS.parent.parent / "examples"


def _golden(name: str) -> list[dict]:
    path = SEEDS / f"{name}.kreplay.golden.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.jsonl")))
def test_every_example_history_is_a_plugin_test_with_a_golden(example: str) -> None:
    link = SEEDS / example.replace(".jsonl", ".kreplay.jsonl")
    assert link.is_symlink() and link.resolve() == (EXAMPLES / example).resolve()
    assert (SEEDS / example.replace(".jsonl", ".kreplay.golden.jsonl")).is_file()


def _actions(golden: list[dict], kind: str) -> list[tuple[str, str]]:
    return [(d["action"], d["key"]) for d in golden if d["kind"] == kind and d["action"] != "status"]


def test_the_statefulset_golden_replaces_pods_from_the_highest_ordinal_down() -> None:
    # the nginx-web article: `set image` replaces nginx-web-2, then -1, then -0, each recreated
    # under the same name before the next goes
    pods = _actions(_golden("nginx-statefulset"), "Pod")
    assert pods[3:9] == [
        ("delete", "ordinal=2"), ("create", "ordinal=2"),
        ("delete", "ordinal=1"), ("create", "ordinal=1"),
        ("delete", "ordinal=0"), ("create", "ordinal=0"),
    ]


def test_the_daemonset_golden_brings_revision_one_back_as_revision_three() -> None:
    # `rollout undo --to-revision=1` of a DaemonSet renumbers the old ControllerRevision (same
    # hash) to 3, as `kubectl rollout history` then lists revisions 2 and 3
    golden = _golden("fluentd-daemonset")
    revisions = [(d["action"], d["key"], d["hash"]) for d in golden if d["kind"] == "ControllerRevision"]
    first_hash = revisions[0][2]
    assert revisions == [("create", "revision=1", first_hash), ("create", "revision=2", revisions[1][2]), ("update", "revision=3", first_hash)]
    undo = next(i for i, d in enumerate(golden) if d["action"] == "update")
    recreated = {d["hash"] for d in golden[undo:] if d["kind"] == "Pod" and d["action"] == "create"}
    assert recreated == {first_hash}
