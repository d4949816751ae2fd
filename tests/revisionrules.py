"""The ControllerRevision-editing rule the DaemonSet and StatefulSet machines share.

The DaemonSet and StatefulSet indexes keep their revision-history answer between syncs while its
inputs are the same objects (`DaemonSetIndex._history`, `StatefulSetIndex._history`). A user who
edits the revisions (deletes one, orphans it, drops its hash label, renumbers it, copies it with
or without an owner) changes those inputs: every sync after it, checked against the full
recomputation (`default_actors(check=True)`), must see the change. The edit is followed by a
patch of the workload's annotations (`poke`) or not: the StatefulSet controller has no revision
handlers (upstream's neither), so without one the next sync that meets the edit is a later
rule's. The machine needs `cluster`, `now`, `run` (apply one operation, then fold its events)
and `revisions_edited`, which the rule sets: the invariants the controller keeps only over
revisions it wrote itself (unique numbers, a name's number never going down) then give way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from engine import operations as op
from engine.api.objects import ControllerRevision, decode_object, to_manifest
from engine.controllers.revisions import HASH_LABEL

EDITS = ("delete", "orphan", "drop-hash-label", "renumber", "copy-owned", "copy-orphan")


def revisions_in(machine: Any, namespace: str) -> list[ControllerRevision]:
    return sorted(
        (c for c in machine.cluster.list("ControllerRevision", namespace) if isinstance(c, ControllerRevision)),
        key=lambda c: c.metadata.name,
    )


def edit_revision_rule(kind: str, namespace: str, name: str) -> Callable[..., None]:
    """A Hypothesis rule editing one ControllerRevision of `namespace`, then perhaps poking the
    `kind` `name` (an annotation) so that its controller syncs at once."""

    @precondition(lambda self: bool(revisions_in(self, namespace)))
    @rule(data=st.data(), edit=st.sampled_from(EDITS), number=st.integers(min_value=1, max_value=12), poke=st.booleans())
    def edit_a_revision(self: Any, data: st.DataObject, edit: str, number: int, poke: bool) -> None:
        target = data.draw(st.sampled_from(revisions_in(self, namespace)), label="revision")
        revision = target.metadata.name
        self.revisions_edited = True
        if edit == "delete":
            self.run(op.Delete(at=self.now, kind="ControllerRevision", namespace=namespace, name=revision))
        elif edit == "orphan":
            self.run(op.Patch(at=self.now, kind="ControllerRevision", namespace=namespace, name=revision, merge={"metadata": {"ownerReferences": None}}))
        elif edit == "drop-hash-label":
            self.run(op.Patch(at=self.now, kind="ControllerRevision", namespace=namespace, name=revision, merge={"metadata": {"labels": {HASH_LABEL: None}}}))
        elif edit == "renumber":
            self.run(op.Patch(at=self.now, kind="ControllerRevision", namespace=namespace, name=revision, merge={"revision": number}))
        else:
            manifest = to_manifest(target)
            kept = ("labels", "annotations") if edit == "copy-orphan" else ("labels", "annotations", "ownerReferences")
            metadata = {k: v for k, v in manifest["metadata"].items() if k in kept}
            manifest["metadata"] = {**metadata, "name": f"copy-{self.cluster.position}", "namespace": namespace}
            self.run(op.Apply(at=self.now, object=decode_object(manifest)))
        if poke and self.cluster.get(kind, namespace, name) is not None:
            note(f"  poke {kind} {name}")
            merge = {"metadata": {"annotations": {"poke": str(self.cluster.position)}}}
            self.run(op.Patch(at=self.now, kind=kind, namespace=namespace, name=name, merge=merge))

    return edit_a_revision
