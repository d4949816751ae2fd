"""ControllerRevision history shared by the DaemonSet and StatefulSet controllers.

Mirrors `constructHistory`/`snapshot`/`dedupCurHistories`/`Match` and `cleanupHistory` in
pkg/controller/daemon/update.go (and `truncateHistory` for StatefulSets): one revision per
distinct template, decided by template equality (`data` equality), never by the hash; a
template equal to an older revision re-uses that revision and bumps its number to max+1.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import msgspec

from engine import commands as cmd
from engine.api.objects import (
    ControllerRevision,
    KubeObject,
    ObjectMeta,
    kind_of,
    replace,
    to_builtins,
)
from engine.api.selectors import Selector
from engine.api.state import Cluster
from engine.controllers.ownership import claim, owner_ref_to

HASH_LABEL = "controller-revision-hash"


class History(msgspec.Struct, kw_only=True):
    """Where a workload's history stands after this sync (possibly with revisions to create)."""

    current: ControllerRevision
    old: list[ControllerRevision]
    commands: list[cmd.Command]
    blocked: bool = False  # a hash collision was found: status got collisionCount+1, sync stops


def template_data(template: Any) -> dict[str, Any]:
    from engine.controllers.hashing import revision_data

    return revision_data(to_builtins(template))


def construct_history(
    cluster: Cluster,
    owner: KubeObject,
    selector: Selector,
    data: dict[str, Any],
    name_for: Callable[[int | None], tuple[str, str]],
    labels: dict[str, str],
    collision_count: int | None,
    pods: Collection[KubeObject],
    pod_hash_label: Callable[[ControllerRevision], str] = lambda cr: cr.metadata.labels.get(HASH_LABEL, ""),
) -> History:
    """Find or create the revision matching `data`; `name_for(collisionCount)` -> (name, hash)."""
    histories, commands = claim(cluster, owner, "ControllerRevision", selector)
    crs = []
    for h in histories:
        if not isinstance(h, ControllerRevision):
            continue
        if HASH_LABEL not in h.metadata.labels:
            # mirrors constructHistory: a revision without the unique label gets its own name
            h = replace(h, metadata=replace(h.metadata, labels={**h.metadata.labels, HASH_LABEL: h.metadata.name}))
            commands.append(cmd.UpdateObject(object=h, reason="revision-labelled", message=f"revision {h.metadata.name} had no {HASH_LABEL} label: set to its name"))
        crs.append(h)
    current: list[ControllerRevision] = []
    old: list[ControllerRevision] = []
    for h in crs:  # each revision's data compared once (a template is a deep dict)
        (current if h.data == data else old).append(h)
    next_revision = max((h.revision for h in old), default=0) + 1
    kind = kind_of(owner)
    label = f"{kind} {owner.metadata.name}"
    if not current:
        name, hash_ = name_for(collision_count)
        existing = cluster.get("ControllerRevision", owner.metadata.namespace, name)
        if existing is not None:
            # a different template hashed to the same name: salt the hash and retry next sync
            count = (collision_count or 0) + 1
            status = replace(owner.status, collision_count=count)  # type: ignore[attr-defined]
            commands.append(
                cmd.UpdateStatus(
                    object=replace(owner, status=status),
                    reason="hash-collision",
                    message=f"ControllerRevision {name} exists with another template: collisionCount becomes {count}",
                )
            )
            return History(current=existing, old=old, commands=commands, blocked=True)  # type: ignore[arg-type]
        cr = ControllerRevision(
            metadata=ObjectMeta(
                name=name,
                namespace=owner.metadata.namespace,
                labels={**labels, HASH_LABEL: hash_},
                annotations=dict(owner.metadata.annotations),
                owner_references=[owner_ref_to(owner)],
            ),
            data=data,
            revision=next_revision,
        )
        commands.append(
            cmd.CreateObject(
                object=cr,
                reason="revision-created",
                message=f"the template of {label} is new: recorded as revision {next_revision} ({name})",
            )
        )
        return History(current=cr, old=old, commands=commands)
    # mirrors dedupCurHistories: keep the highest revision (the later one on ties)
    keep = current[0]
    for h in current[1:]:
        if h.revision >= keep.revision:
            keep = h
    if len(current) > 1:
        # mirrors dedupCurHistories: every daemon pod not on the kept hash is relabelled to it
        kept_hash = pod_hash_label(keep)
        for pod in pods:
            if pod.metadata.labels.get(HASH_LABEL) != kept_hash:
                relabelled = {**pod.metadata.labels, HASH_LABEL: kept_hash}
                commands.append(
                    cmd.UpdateObject(
                        object=replace(pod, metadata=replace(pod.metadata, labels=relabelled)),
                        reason="revision-deduplicated",
                        message=f"{len(current)} revisions hold this template; pods take the hash of {keep.metadata.name}",
                    )
                )
    for dup in current:
        if dup is keep:
            continue
        commands.append(
            cmd.delete_of(
                dup,
                "revision-deduplicated",
                f"revision {dup.metadata.name} duplicates {keep.metadata.name} (revision {keep.revision})",
            )
        )
    if keep.revision < next_revision:
        commands.append(
            cmd.UpdateObject(
                object=replace(keep, revision=next_revision),
                reason="revision-reused",
                message=(
                    f"the template of {label} equals revision {keep.revision} ({keep.metadata.name}): "
                    f"no new revision, its number becomes {next_revision}"
                ),
            )
        )
        keep = replace(keep, revision=next_revision)
    return History(current=keep, old=old, commands=commands)


def cleanup_history(
    owner: KubeObject, old: list[ControllerRevision], live_hashes: Collection[str], limit: int
) -> list[cmd.Command]:
    """Mirrors cleanupHistory: delete the oldest unused revisions beyond revisionHistoryLimit."""
    to_kill = len(old) - limit
    commands: list[cmd.Command] = []
    for h in sorted(old, key=lambda h: (h.revision, h.metadata.name)):
        if to_kill <= 0:
            break
        if h.metadata.labels.get(HASH_LABEL) in live_hashes:
            continue  # a live pod still runs this revision
        commands.append(
            cmd.delete_of(
                h,
                "revision-history-limit",
                f"{len(old)} old revisions exceed revisionHistoryLimit {limit}: deleting the oldest "
                f"unused one, revision {h.revision}",
            )
        )
        to_kill -= 1
    return commands
