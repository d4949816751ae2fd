"""`kreplay diff A B`: two runs compared semantically, not line by line.

A and B are stores (a store URL, or a SQLite file) or histories (replayed in memory). The result
(`RunDiff`) holds, in the order a reader wants it:

1. a summary per workload (`WorkloadSummary`): each rollout's duration (from the user's write
   that started it to the owner's last decision before the next such write, its dependents'
   decisions included), the most pods unavailable at once (from the owner's status decisions:
   DaemonSet `desiredNumberScheduled - numberAvailable`, Deployment `unavailableReplicas`,
   StatefulSet `replicas - availableReplicas`), and the pods created and deleted for it (a
   Deployment's through its ReplicaSets);
2. the objects that differ at the end, field by field (`ObjectDiff`): objects are matched by role
   where their names are random (a DaemonSet pod by node, a ReplicaSet's pod by revision, in
   order), and fields that differ between any two runs (uids, resourceVersions, timestamps,
   generated names) are not compared;
3. per owner, the two decision timelines aligned (`=` both, `-` only A, `+` only B, `~` one
   decision taken otherwise) and the first divergence (`replay.verify.compare`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import msgspec

from engine import events as ev
from engine.api.state import Cluster
from replay.verify.compare import Comparison, _opcodes, compare, parse_at
from replay.verify.decisions import OWNER_KINDS, DecisionLog, Traced, encode_decision, from_events

JSON_VERSION = 1


class DiffError(Exception):
    """Input diff cannot work with (exit 1); the message names it."""


class Run(msgspec.Struct, kw_only=True):
    """One side of a diff: where it came from, its event log and its cluster at the end."""

    source: str
    events: list[ev.AnyEvent]
    cluster: Cluster


def _is_history(text: str) -> bool:
    return text.endswith((".jsonl", ".json", ".jsonl.gz")) and ":" not in text.split("/")[0]


def load_run(text: str, *, options: Sequence[str] = (), pacing: ev.Pacing | None = None, resync_period: timedelta | None = None) -> Run:
    """A store URL or SQLite file (read), or a history (replayed in memory, paced by `pacing`,
    its informers resynced every `resync_period`, None: 12h; a store is read as it was run)."""
    from engine.store import EventStore, StoreError

    if _is_history(text):
        from replay.verify.verification import VerifyError, replay_history

        try:
            replayed = replay_history(text, options=options, pacing=pacing, resync_period=resync_period)
        except VerifyError as exc:
            raise DiffError(str(exc)) from None
        return Run(source=text, events=replayed.events, cluster=replayed.cluster)
    url = text
    if ":" not in text or (Path(text).exists() and not text.startswith(("sqlite:", "postgresql:", "memory:"))):
        if not Path(text).exists():
            raise DiffError(f"error: {text}: no such history or store (a history ends in .jsonl; a store is sqlite:PATH or postgresql://...)")
        url = f"sqlite:{text}"
    try:
        store = EventStore(url, create=False, readonly=True)
    except StoreError as exc:
        raise DiffError(f"error: {text}: {str(exc).removeprefix('error: ')}") from None
    try:
        events = list(store.read())
        cluster = store.cluster_at()
    except StoreError as exc:
        raise DiffError(f"error: {text}: {str(exc).removeprefix('error: ')}") from None
    finally:
        store.close()
    if not events:
        raise DiffError(f"error: {text}: the store holds no events")
    return Run(source=text, events=events, cluster=cluster)


# --- the summary ----------------------------------------------------------------------------------


class Rollout(msgspec.Struct, kw_only=True):
    line: int  # the history line of the user's write (0 if unknown)
    start: str
    end: str
    seconds: float
    max_unavailable: int = 0  # the most pods unavailable at once during it


class WorkloadSummary(msgspec.Struct, kw_only=True):
    owner: str
    rollouts: list[Rollout] = msgspec.field(default_factory=list)
    max_unavailable: int = 0
    pods_created: int = 0
    pods_deleted: int = 0


def _unavailable(kind: str, status: dict[str, Any]) -> int:
    if kind == "DaemonSet":
        return max(0, int(status.get("desiredNumberScheduled", 0)) - int(status.get("numberAvailable", 0)))
    if kind == "Deployment":
        return int(status.get("unavailableReplicas", 0))
    if kind == "StatefulSet":
        return max(0, int(status.get("replicas", 0)) - int(status.get("availableReplicas", 0)))
    return 0


def _workload_of(owner: str, log: DecisionLog, rs_parent: dict[str, str]) -> str:
    return rs_parent.get(owner, owner)


def summarise(run: Run, log: DecisionLog) -> dict[str, WorkloadSummary]:
    """Per workload (DaemonSet, StatefulSet, Deployment, stand-alone ReplicaSet)."""
    # a Deployment's ReplicaSets, by their owner ids
    rs_parent: dict[str, str] = {}
    for owner in log.owners:
        if owner.startswith("ReplicaSet/") and "@revision=" in owner:
            ns_name = owner.split("/", 1)[1].split("@", 1)[0]
            rs_parent[owner] = f"Deployment/{ns_name}"
    out: dict[str, WorkloadSummary] = {}
    decisions: dict[str, list[Traced]] = {}
    for owner, items in log.owners.items():
        workload = _workload_of(owner, log, rs_parent)
        summary = out.setdefault(workload, WorkloadSummary(owner=workload))
        decisions.setdefault(workload, []).extend(items)
        kind = owner.split("/", 1)[0]
        for t in items:
            d = t.decision
            if d.kind == "Pod" and d.action == "create":
                summary.pods_created += 1
            elif d.kind == "Pod" and d.action == "delete":
                summary.pods_deleted += 1
            elif d.action == "status" and owner == workload:
                summary.max_unavailable = max(summary.max_unavailable, _unavailable(kind, d.status))
    # rollouts: each user write of the workload, to its last decision before the next one
    starts: dict[str, list[tuple[float, str, int]]] = {}
    for event in run.events:
        if isinstance(event, ev.ObjectCreated | ev.ObjectUpdated) and event.line:
            kind = type(event.object).__name__
            if kind in OWNER_KINDS:
                meta = event.object.metadata
                owner = f"{kind}/{meta.namespace}/{meta.name}"
                at = event.at.isoformat().replace("+00:00", "Z")
                starts.setdefault(owner, []).append((event.at.timestamp(), at, event.line))
    for workload, summary in out.items():
        kind = workload.split("/", 1)[0]
        items = sorted(
            ((parse_at(t.at), t.at, t.decision) for t in decisions.get(workload, []) if t.at),
            key=lambda x: x[0],
        )
        marks = starts.get(workload, [])
        for i, (start, start_text, line) in enumerate(marks):
            stop = marks[i + 1][0] if i + 1 < len(marks) else float("inf")
            inside = [x for x in items if start <= x[0] < stop]
            if not inside:
                continue
            end, end_text = inside[-1][0], inside[-1][1]
            worst = max(
                (_unavailable(kind, d.status) for _, _, d in inside if d.action == "status" and d.owner == workload),
                default=0,
            )
            summary.rollouts.append(
                Rollout(line=line, start=start_text, end=end_text, seconds=round(end - start, 6), max_unavailable=worst)
            )
    return out


# --- the end state --------------------------------------------------------------------------------

_VOLATILE_META = ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "managedFields", "generateName")


class FieldChange(msgspec.Struct, kw_only=True):
    path: str
    a: Any = None
    b: Any = None


class ObjectDiff(msgspec.Struct, kw_only=True):
    object: str  # `Kind namespace/role` (role: the name, or the role of a generated name)
    change: str  # `changed`, `only-a`, `only-b`
    fields: list[FieldChange] = msgspec.field(default_factory=list)


def _strip(obj: dict[str, Any]) -> dict[str, Any]:
    meta = dict(obj.get("metadata") or {})
    for key in _VOLATILE_META:
        meta.pop(key, None)
    if obj.get("metadata", {}).get("generateName"):
        meta.pop("name", None)
    meta["ownerReferences"] = [{k: v for k, v in r.items() if k != "uid"} for r in meta.get("ownerReferences") or []]
    if not meta["ownerReferences"]:
        meta.pop("ownerReferences")
    out = {**obj, "metadata": meta}
    return _drop_times(out)


def _drop_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_times(v) for k, v in value.items()
                if not (k.endswith(("Time", "Timestamp")) or k in ("startTime", "volumeName", "claimName"))}
    if isinstance(value, list):
        return [_drop_times(v) for v in value]
    return value


def _role(kind: str, obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or ""
    where = f"{ns}/" if ns else ""
    if not meta.get("generateName"):
        return f"{kind} {where}{meta.get('name')}"
    labels = meta.get("labels") or {}
    refs = meta.get("ownerReferences") or [{}]
    owner = f"{refs[0].get('kind', '')}/{refs[0].get('name', '')}"
    spec = obj.get("spec") or {}
    node = spec.get("nodeName") or ""
    if refs[0].get("kind") == "DaemonSet":
        from replay.verify.decisions import _ds_node

        return f"{kind} {where}{meta.get('generateName')}* (of {owner}, node={_ds_node(obj)})"
    hash_ = labels.get("pod-template-hash") or ""
    return f"{kind} {where}{meta.get('generateName')}* (of {owner}{', hash=' + hash_ if hash_ else ''}{', node=' + node if node else ''})"


def _flatten(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for k in sorted(value):
            _flatten(value[k], f"{path}.{k}" if path else k, out)
    elif isinstance(value, list) and value and any(isinstance(v, dict | list) for v in value):
        for i, v in enumerate(value):
            _flatten(v, f"{path}[{i}]", out)
    else:
        out[path] = value


def _objects(cluster: Cluster) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for kind in sorted(cluster.objects):
        for obj in cluster.list(kind):
            data = msgspec.to_builtins(obj)
            out.setdefault(_role(kind, data), []).append(_strip(data))
    for items in out.values():
        items.sort(key=lambda o: msgspec.json.encode(o, order="sorted"))
    return out


def end_state_diff(a: Cluster, b: Cluster) -> list[ObjectDiff]:
    ea, eb = _objects(a), _objects(b)
    diffs: list[ObjectDiff] = []
    for role in sorted(set(ea) | set(eb)):
        xs, ys = ea.get(role, []), eb.get(role, [])
        for i in range(max(len(xs), len(ys))):
            name = role if max(len(xs), len(ys)) == 1 else f"{role} #{i + 1}"
            if i >= len(xs):
                diffs.append(ObjectDiff(object=name, change="only-b"))
                continue
            if i >= len(ys):
                diffs.append(ObjectDiff(object=name, change="only-a"))
                continue
            fa: dict[str, Any] = {}
            fb: dict[str, Any] = {}
            _flatten(xs[i], "", fa)
            _flatten(ys[i], "", fb)
            changes = [FieldChange(path=p, a=fa.get(p), b=fb.get(p)) for p in sorted(set(fa) | set(fb)) if fa.get(p) != fb.get(p)]
            if changes:
                diffs.append(ObjectDiff(object=name, change="changed", fields=changes))
    return diffs


# --- timelines ------------------------------------------------------------------------------------


class Step(msgspec.Struct, kw_only=True, omit_defaults=True):
    mark: str  # `=` both, `-` only A, `+` only B, `~` taken otherwise
    a: Traced | None = None
    b: Traced | None = None


def timeline(a: list[Traced], b: list[Traced]) -> list[Step]:
    ka = [encode_decision(t.decision) for t in a]
    kb = [encode_decision(t.decision) for t in b]
    steps: list[Step] = []
    for tag, i1, i2, j1, j2 in _opcodes(ka, kb):
        if tag == "equal":
            steps.extend(Step(mark="=", a=a[i1 + k], b=b[j1 + k]) for k in range(i2 - i1))
            continue
        pairs = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        steps.extend(Step(mark="~", a=a[i1 + k], b=b[j1 + k]) for k in range(pairs))
        steps.extend(Step(mark="-", a=a[k]) for k in range(i1 + pairs, i2))
        steps.extend(Step(mark="+", b=b[k]) for k in range(j1 + pairs, j2))
    return steps


# --- the diff -------------------------------------------------------------------------------------


class RunDiff(msgspec.Struct, kw_only=True):
    a: Run
    b: Run
    log_a: DecisionLog
    log_b: DecisionLog
    summary_a: dict[str, WorkloadSummary]
    summary_b: dict[str, WorkloadSummary]
    objects: list[ObjectDiff]
    comparison: Comparison

    @property
    def same(self) -> bool:
        return not self.objects and self.comparison.agrees


def diff_runs(a: Run, b: Run) -> RunDiff:
    log_a, log_b = from_events(a.events), from_events(b.events)
    workloads_a = {o.split("@", 1)[0] for o in log_a.owners if not o.startswith("ReplicaSet/") or "@" not in o}
    workloads_b = {o.split("@", 1)[0] for o in log_b.owners if not o.startswith("ReplicaSet/") or "@" not in o}
    if (workloads_a or workloads_b) and not (workloads_a & workloads_b):
        raise DiffError(
            f"error: {a.source} and {b.source} share no workload ({', '.join(sorted(workloads_a)[:3]) or 'none'} vs "
            f"{', '.join(sorted(workloads_b)[:3]) or 'none'}): they are runs of unrelated clusters, there is nothing to align"
        )
    comparison = compare(log_a, log_b, tolerance=float("inf"), expected_is_capture=False)
    return RunDiff(
        a=a,
        b=b,
        log_a=log_a,
        log_b=log_b,
        summary_a=summarise(a, log_a),
        summary_b=summarise(b, log_b),
        objects=end_state_diff(a.cluster, b.cluster),
        comparison=comparison,
    )


# --- output ---------------------------------------------------------------------------------------


def _secs(r: Rollout | None) -> str:
    return "-" if r is None else f"{r.seconds:g}s"


def text(d: RunDiff, *, timelines: bool = True) -> str:
    from replay.verify.verification import describe, explain

    lines = [f"diff A={d.a.source} B={d.b.source}"]
    owners_diverging = [o for o in d.comparison.owners if o.divergences]
    lines.append(
        "SAME: the two runs took the same decisions and ended in the same state"
        if d.same
        else f"DIFFERENT: {len(owners_diverging)} of {len(d.comparison.owners)} owners decided otherwise; "
        f"{_objects_differ(len(d.objects))} at the end"
    )
    lines.append("")
    workloads = sorted(set(d.summary_a) | set(d.summary_b))
    lines.append(f"{'WORKLOAD, ROLLOUT':<44}  {'DURATION A | B':<16}  MOST UNAVAILABLE A | B")
    for w in workloads:
        sa, sb = d.summary_a.get(w), d.summary_b.get(w)
        lines.append(w)
        ra, rb = (sa.rollouts if sa else []), (sb.rollouts if sb else [])
        for i in range(max(len(ra), len(rb))):
            x = ra[i] if i < len(ra) else None
            y = rb[i] if i < len(rb) else None
            line = (x or y).line if (x or y) else 0
            label = f"  line {line}" if line else f"  rollout {i + 1}"
            dur = f"{_secs(x)} | {_secs(y)}"
            mu = f"{x.max_unavailable if x else '-'} | {y.max_unavailable if y else '-'}"
            lines.append(f"{label:<44}  {dur:<16}  {mu}")
        pc = f"{sa.pods_created if sa else '-'} | {sb.pods_created if sb else '-'}"
        pd = f"{sa.pods_deleted if sa else '-'} | {sb.pods_deleted if sb else '-'}"
        lines.append(f"  pods created {pc}, deleted {pd}; most unavailable at once "
                     f"{sa.max_unavailable if sa else '-'} | {sb.max_unavailable if sb else '-'}")
    if d.objects:
        lines.append("")
        lines.append(f"at the end ({_objects_differ(len(d.objects))}):")
        for o in d.objects[:40]:
            if o.change != "changed":
                lines.append(f"  {o.object}: only in {'A' if o.change == 'only-a' else 'B'}")
                continue
            lines.append(f"  {o.object}:")
            for f in o.fields[:8]:
                lines.append(f"    {f.path}: {_short(f.a)} -> {_short(f.b)}")
            if len(o.fields) > 8:
                lines.append(f"    ... and {len(o.fields) - 8} more fields")
        if len(d.objects) > 40:
            lines.append(f"  ... and {len(d.objects) - 40} more objects")
    for o in d.comparison.owners:
        if not o.divergences:
            continue
        lines.append("")
        lines.append(f"{o.owner}: {o.matched} of {o.expected} decisions of A also in B; first divergence:")
        lines.extend("  " + x for x in explain(o.divergences[0], d.b.events, expected_name="A did", actual_name="B did"))
        if timelines:
            lines.append("  timeline (= both, - only A, + only B, ~ taken otherwise):")
            for step in timeline(d.log_a.owners.get(o.owner, []), d.log_b.owners.get(o.owner, [])):
                left = f"{step.a.at} {describe(step.a.decision)}" if step.a else ""
                right = f"{step.b.at} {describe(step.b.decision)}" if step.b else ""
                if step.mark == "=":
                    lines.append(f"    = {left}")
                elif step.mark == "~":
                    lines.append(f"    ~ A {left}")
                    lines.append(f"      B {right}")
                elif step.mark == "-":
                    lines.append(f"    - {left}")
                else:
                    lines.append(f"    + {right}")
    return "\n".join(lines)


def _objects_differ(n: int) -> str:
    return f"{n} object differs" if n == 1 else f"{n} objects differ"


def _short(v: Any) -> str:
    if v is None:
        return "(none)"
    text_ = msgspec.json.encode(v).decode()
    return text_ if len(text_) <= 60 else text_[:57] + "..."


def to_json(d: RunDiff) -> dict[str, Any]:
    from replay.verify.verification import divergence_json, traced_json

    workloads = sorted(set(d.summary_a) | set(d.summary_b))
    return {
        "kind": "Diff",
        "version": JSON_VERSION,
        "a": d.a.source,
        "b": d.b.source,
        "same": d.same,
        "summary": [
            {
                "workload": w,
                "a": msgspec.to_builtins(d.summary_a[w]) if w in d.summary_a else None,
                "b": msgspec.to_builtins(d.summary_b[w]) if w in d.summary_b else None,
            }
            for w in workloads
        ],
        "objects": [msgspec.to_builtins(o) for o in d.objects],
        "owners": [
            {
                "owner": o.owner,
                "a": o.expected,
                "b": o.actual,
                "matched": o.matched,
                "divergences": len(o.divergences),
                "firstDivergence": divergence_json(o.divergences[0], d.b.events) if o.divergences else None,
                "timeline": [
                    {"mark": s.mark, "a": traced_json(s.a, d.a.events), "b": traced_json(s.b, d.b.events)}
                    for s in timeline(d.log_a.owners.get(o.owner, []), d.log_b.owners.get(o.owner, []))
                ],
            }
            for o in d.comparison.owners
        ],
    }


def pods_by_owner(log: DecisionLog) -> Counter[str]:
    return Counter(t.decision.owner for t in log if t.decision.kind == "Pod" and t.decision.action == "create")
