"""`kreplay verify`: replay a history in memory and compare its decisions with a recorded outcome.

`verify(history)` replays the history (as `kreplay replay` does, into a memory store), builds
the engine's decision log and the recorded one (`replay.verify.decisions`), compares them owner
by owner (`replay.verify.compare`) and returns a `Verification`, which renders as a one-screen
summary (`text`) or as the documented JSON (`to_json`, schema in the README).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import msgspec

from engine import events as ev
from engine.api.state import Cluster
from engine.operations import AnyOperation
from projections.audit_trail import entry_for
from replay.outcome import (
    CONTROLLERS,
    OUTCOME_VERSION,
    Header,
    OutcomeError,
    RecordedWrite,
    read_outcome,
    sidecar_path,
)
from replay.verify import engine_options
from replay.verify.compare import DEFAULT_TOLERANCE, NOT_MODELLED, Comparison, Divergence, compare
from replay.verify.decisions import (
    Decision,
    DecisionLog,
    LeanWrite,
    Traced,
    from_events,
    from_outcome,
)
from replay.why import format_event

JSON_VERSION = 1


class VerifyError(Exception):
    """Input verify cannot work with; the message names the file and what is wrong (exit 1)."""


class Replayed(msgspec.Struct, kw_only=True):
    """A history replayed in memory: its operations and the whole event log."""

    source: str
    operations: list[AnyOperation]
    events: list[ev.AnyEvent]
    cluster: Cluster
    times: list[float] = msgspec.field(default_factory=list)  # each operation's time, in seconds

    def line_at(self, at: str) -> int:
        """The history line of the last operation at or before a time (0 before the first)."""
        from replay.verify.compare import parse_at

        if len(self.times) != len(self.operations):
            self.times = [o.at.timestamp() for o in self.operations]
        i = bisect.bisect_right(self.times, parse_at(at) + 1e-9)
        return self.operations[i - 1].line if i else 0


PACE_HINT = (
    " (with --pace real the controllers write later than at once: a recorded binding or pod status "
    "may come before the paced engine has made its pod; replay it without --pace)"
)


def replay_history(
    path: str | Path,
    *,
    options: Sequence[str] = (),
    settle: timedelta = timedelta(hours=1),
    operations: list[AnyOperation] | None = None,
    pacing: ev.Pacing | None = None,
    resync_period: timedelta | None = None,
) -> Replayed:
    """Replay a history in memory (raises VerifyError for bad input). The engine runs exactly
    as `kreplay replay` runs it (each operation, then to rest within `settle` of virtual time),
    so the events are those `replay` would append; they are kept in memory, not in a store,
    since verify only reads them once. `pacing` (`--pace real`) paces the controllers' writes;
    `resync_period` (`--min-resync-period`) is the informers' ResyncPeriod (None: 12h)."""
    from engine.loop import Engine, LoopError
    from engine.operations import Rejected
    from replay.history import HistoryError, load_history, locate

    if operations is None:
        try:
            operations = load_history(path)
        except HistoryError as exc:
            raise VerifyError(f"error: {exc}") from None
    try:
        with engine_options.applied(options):
            engine = Engine(settle_limit=settle, pacing=pacing, resync_period=resync_period)
            for operation in operations:
                engine.run([operation])
            if engine.now is not None:
                engine.finish(bound=engine.now + settle)
    except Rejected as exc:
        raise VerifyError(f"error: {locate(exc, operations, str(path))}{PACE_HINT if pacing else ''}") from None
    except LoopError as exc:
        raise VerifyError(f"error: {path}: the engine could not replay it: {exc}") from None
    return Replayed(source=str(path), operations=operations, events=engine.take_events(), cluster=engine.cluster)


def _known_objects(events: Sequence[ev.Event]) -> list[tuple[str, dict[str, Any]]]:
    """Objects users created in the replay (not the controllers): what a recorded deletion may
    name without a body."""
    out = []
    for event in events:
        if isinstance(event, ev.ObjectCreated) and event.by not in CONTROLLERS:
            out.append((type(event.object).__name__, msgspec.to_builtins(event.object)))
    return out


class Verification(msgspec.Struct, kw_only=True):
    history: str
    outcome: str
    header: Header
    comparison: Comparison
    options: list[str]
    events: list[ev.AnyEvent]
    ignored: dict[str, int]  # recorded writes that are no decision, by why

    @property
    def agrees(self) -> bool:
        return self.comparison.agrees

    # --- output -----------------------------------------------------------------------------------

    def to_json(self, *, all_divergences: bool = False) -> dict[str, Any]:
        c = self.comparison
        totals = c.totals()
        return {
            "kind": "Verification",
            "version": JSON_VERSION,
            "history": self.history,
            "outcome": self.outcome,
            "engineOptions": self.options,
            "agrees": self.agrees,
            "timeTolerance": c.tolerance,
            "totals": {
                "recorded": totals["expected"],
                "engine": totals["actual"],
                "matched": totals["matched"],
                "notModelled": totals["notModelled"],
                "unobserved": totals["unobserved"],
                "divergences": totals["divergences"],
                "agreement": round(totals["matched"] / totals["expected"], 6) if totals["expected"] else 1.0,
            },
            "latency": c.latency(),
            "notModelled": [
                {"what": k, "decisions": n, "why": NOT_MODELLED.get(k, "")} for k, n in c.notes().items()
            ],
            "ignoredWrites": self.ignored,
            "owners": [
                {
                    "owner": o.owner,
                    "recorded": o.expected,
                    "engine": o.actual,
                    "matched": o.matched,
                    "notModelled": o.not_modelled,
                    "unobserved": o.unobserved,
                    "divergences": len(o.divergences),
                    "agreement": round(o.agreement, 6),
                    "firstDivergence": divergence_json(o.first, self.events) if o.first else None,
                    **({"allDivergences": [divergence_json(d, self.events) for d in o.divergences]}
                       if all_divergences else {}),
                }
                for o in c.owners
            ],
        }

    def text(self, *, all_divergences: bool = False) -> str:
        c = self.comparison
        t = c.totals()
        lines = [f"verify {self.history} against {self.outcome} (time tolerance {c.tolerance:g}s)"]
        if self.options:
            lines.append(f"engine options: {', '.join(self.options)} (the engine is made to differ on purpose)")
        diverging = [o for o in c.owners if o.divergences]
        pct = 100.0 * t["matched"] / t["expected"] if t["expected"] else 100.0
        if diverging:
            lines.append(
                f"DIVERGES: {len(diverging)} of {len(c.owners)} owners; {t['matched']}/{t['expected']} recorded "
                f"decisions agree ({pct:.1f}%), {t['notModelled']} not modelled, {t['divergences']} divergences"
            )
        elif t["matched"] == 0 and t["expected"] == t["notModelled"]:
            # "AGREES: 0/3 (0.0%)" read as a failure: say that nothing could be compared at all
            lines.append(
                f"NOTHING COMPARED: the {t['expected']} recorded decisions are all of what the engine does not "
                f"model (below), so none agrees and none diverges, across {len(c.owners)} owners"
            )
        else:
            lines.append(
                f"AGREES: {t['matched']}/{t['expected']} recorded decisions agree ({pct:.1f}%), "
                f"{t['notModelled']} not modelled, across {len(c.owners)} owners"
            )
        lines.append("")
        width = max([len(o.owner) for o in c.owners] + [5])
        lines.append(f"{'OWNER':<{width}}  AGREE   MATCHED  NOT-MODELLED  DIVERGENCES")
        for o in c.owners:
            agree = "    -" if o.expected and o.not_modelled == o.expected else f"{100 * o.agreement:5.1f}%"
            lines.append(
                f"{o.owner:<{width}}  {agree:<6}  {o.matched:>3}/{o.expected:<3}  {o.not_modelled:>12}  "
                f"{len(o.divergences):>11}"
            )
        lat = c.latency()
        if lat.get("count"):
            lines.append("")
            lines.append(
                f"latency (capture minus engine) over {lat['count']} matched decisions: min {lat['min']:.3f}s, "
                f"median {lat['median']:.3f}s, p90 {lat['p90']:.3f}s, max {lat['max']:.3f}s"
            )
        for what, n in c.notes().items():
            lines.append(f"not modelled ({n} decisions): {NOT_MODELLED.get(what, what)}")
        if t["unobserved"]:
            lines.append(
                f"unobserved ({t['unobserved']} engine decisions): of kinds this {self.header.format or ''} capture "
                f"cannot show, so not compared"
            )
        for why, n in self.ignored.items():
            lines.append(f"recorded writes that are no decision ({n}): {why}")
        if self.header.inferred:
            lines.append(
                f"inferred by the import ({len(self.header.inferred)} objects): "
                + "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(self.header.inferred.items())[:3])
                + (" ..." if len(self.header.inferred) > 3 else "")
            )
        for o in diverging:
            shown = o.divergences if all_divergences else o.divergences[:1]
            for i, d in enumerate(shown):
                lines.append("")
                head = "first divergence" if i == 0 else f"divergence {i + 1}"
                more = f" (and {len(o.divergences) - 1} more; --all to list)" if not all_divergences and i == 0 and len(o.divergences) > 1 else ""
                lines.append(f"{head}, {o.owner}{more}:")
                lines.extend("  " + x for x in explain(d, self.events, expected_name="capture recorded",
                                                      actual_name="engine did"))
        return "\n".join(lines)


# --- describing decisions -----------------------------------------------------------------------


def describe(d: Decision, fields: Sequence[str] = ()) -> str:
    """`create Pod node=node-1 hash=98d88b864`, `scale ReplicaSet revision=2 to 3`, `status
    updatedNumberScheduled=2 ...` (a status names the given fields, or all)."""
    if d.action == "status":
        keys = [k for k in (fields or sorted(d.status)) if k in d.status and (fields or d.status[k] != [])]
        return "status " + " ".join(f"{k}={_value(d.status[k])}" for k in keys)
    parts = [d.action, d.kind, d.key]
    if d.name:
        parts.append(f"name={d.name}")
    if d.revision and d.key != f"revision={d.revision}":
        parts.append(f"revision={d.revision}")
    if d.hash:
        parts.append(f"hash={d.hash}")
    if d.replicas is not None and d.action in ("scale", "create") and d.kind == "ReplicaSet":
        parts.append(f"replicas={d.replicas}")
    if d.controller and d.controller not in ("daemonset-controller", "statefulset-controller",
                                             "deployment-controller", "replicaset-controller"):
        parts.append(f"by {d.controller}")
    return " ".join(parts)


def _value(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ",".join(str(x) for x in v) + "]"
    return str(v)


def _where(t: Traced) -> str:
    bits = [t.at or "-"]
    if t.position:
        bits.append(f"event #{t.position}")
    if t.source and not t.source.startswith("#"):
        bits.append(t.source)
    if t.record:
        bits.append(f"sidecar line {t.record}")
    if t.line:
        bits.append(f"history line {t.line}")
    return ", ".join(bits)


def explain(d: Divergence, events: Sequence[ev.Event], *, expected_name: str, actual_name: str) -> list[str]:
    """The lines that say what diverged, where both sides came from and the engine's reasoning."""
    fields = d.fields if d.what == "status" else ()
    width = max(len(expected_name), len(actual_name), len("engine's reason")) + 1
    out = []
    label = {"missing": "missing", "extra": "extra decision", "different": "different decision",
             "late": "outside the time tolerance", "status": "status never reached"}[d.what]
    out.append(f"{'what':<{width}} {label}" + (f" (differs in {', '.join(d.fields)})" if d.fields and d.what == "different" else ""))
    if d.expected is not None:
        out.append(f"{expected_name + ':':<{width}} {describe(d.expected.decision, fields)}")
        out.append(f"{'':<{width}}   at {_where(d.expected)}")
    else:
        out.append(f"{expected_name + ':':<{width}} nothing")
    if d.actual is not None:
        prefix = actual_name if d.what != "status" else actual_name.replace(" did", "'s status then")
        out.append(f"{prefix + ':':<{width}} {describe(d.actual.decision, fields)}")
        out.append(f"{'':<{width}}   at {_where(d.actual)}")
        if d.actual.reason or d.actual.message:
            out.append(f"{'reason:':<{width}} [{d.actual.reason}] {d.actual.message}".rstrip())
        if d.actual.trigger and 0 < d.actual.trigger <= len(events):
            cause = events[d.actual.trigger - 1]
            out.append(f"{'because:':<{width}} {format_event(entry_for(cause), None, with_position=True)}")
    else:
        out.append(f"{actual_name + ':':<{width}} nothing" + (" (no such decision at all)" if d.what == "missing" else ""))
    p = d.previous
    if p is not None and (p.reason or p.message):
        label = "last agreed:" if actual_name == "engine did" else "before that:"
        out.append(f"{label:<{width}} {describe(p.decision)} ({_where(p)})")
        out.append(f"{'':<{width}}   [{p.reason}] {p.message}".rstrip())
    return out


def traced_json(t: Traced | None, events: Sequence[ev.Event]) -> dict[str, Any] | None:
    if t is None:
        return None
    out: dict[str, Any] = {"decision": msgspec.to_builtins(t.decision), "at": t.at}
    for name in ("position", "line", "source", "record", "reason", "message", "trigger"):
        value = getattr(t, name)
        if value:
            out[name] = value
    if t.trigger and 0 < t.trigger <= len(events):
        out["triggerText"] = format_event(entry_for(events[t.trigger - 1]), None, with_position=True)
    return out


def divergence_json(d: Divergence, events: Sequence[ev.Event]) -> dict[str, Any]:
    return {
        "what": d.what,
        "fields": d.fields,
        "recorded": traced_json(d.expected, events),
        "engine": traced_json(d.actual, events),
        "engineBefore": traced_json(d.previous, events),
    }


# --- verify ---------------------------------------------------------------------------------------


def load_outcome(history: str | Path, outcome: str | Path | None) -> tuple[Path, Header, list[LeanWrite]]:
    path = Path(outcome) if outcome else sidecar_path(history)
    if not path.exists():
        raise VerifyError(
            f"error: {history} has no recorded outcome: {path} does not exist (`kreplay import` writes it beside "
            f"the history; pass --outcome FILE if it lives elsewhere)"
        )
    try:
        header, writes = read_outcome_lean(path)
    except OutcomeError as exc:
        raise VerifyError(f"error: {exc}") from None
    return path, header, writes


_LEAN = msgspec.json.Decoder(Header | LeanWrite)


def read_outcome_lean(path: Path) -> tuple[Header, list[LeanWrite]]:
    """The sidecar as `read_outcome` reads it, with only what decisions need of each body.
    Anything the lean reading refuses is read again by `read_outcome`, whose error names the
    line."""
    try:
        records = [_LEAN.decode(line) for line in path.read_bytes().splitlines() if line.strip()]
    except (msgspec.DecodeError, OSError):
        read_outcome(path)  # raises OutcomeError naming file and line
        raise OutcomeError(f"{path}: not a recorded outcome") from None
    if not records or not isinstance(records[0], Header) or records[0].outcome_version != OUTCOME_VERSION or any(
        isinstance(r, Header) for r in records[1:]
    ):
        read_outcome(path)
        raise OutcomeError(f"{path}: not a recorded outcome")
    writes = [r for r in records[1:] if isinstance(r, LeanWrite)]
    return records[0], writes


def ignored_writes(writes: Sequence[RecordedWrite] | Sequence[LeanWrite]) -> dict[str, int]:
    """Recorded writes that are no decision, counted by why."""
    from replay.verify.decisions import _WATCHED  # the kinds a decision is about

    out: dict[str, int] = {}
    for w in writes:
        why = ""
        if not w.applied:
            why = f"refused ({w.code})"
        elif w.controller not in CONTROLLERS:
            why = f"not a workload controller ({w.controller})"
        elif w.kind not in _WATCHED:
            why = f"kind not compared ({w.kind})"
        elif w.object is None and w.verb not in ("create", "delete"):
            why = "a status or update write without a body (a Metadata-level audit log): what it wrote is not recorded"
        if why:
            out[why] = out.get(why, 0) + 1
    return dict(sorted(out.items()))


def _observed(header: Header, writes: Sequence[RecordedWrite] | Sequence[LeanWrite], recorded: DecisionLog) -> frozenset[tuple[str, str]] | None:
    """What the capture can show of the controllers' actions: everything for an audit log whose
    controller writes all have bodies; else only the kinds of action it did record (a watch
    stream does not say who deleted a pod; a Metadata-level audit log has no names for
    generated pods)."""
    from replay.verify.decisions import _WATCHED

    compared = [w for w in writes if w.applied and w.controller in CONTROLLERS and w.kind in _WATCHED]
    if header.format in ("audit", "engine", "") and all(w.object is not None or w.verb == "delete" for w in compared) and not recorded.unattributed:
        return None
    return frozenset((t.decision.action, t.decision.kind) for t in recorded)


def _capture(path: str | Path, fmt: str = "") -> tuple[list[AnyOperation], Header, list[RecordedWrite]] | None:
    """A raw capture (audit log, watch stream, SimKube trace, snapshot) imported in memory, as
    `kreplay import` would write it; None if the file is not one."""
    from replay.history import HistoryError, parse_lines
    from replay.importers import CaptureError, import_captures
    from replay.importers.common import encode_line

    try:
        result = import_captures([str(path)], fmt)
    except CaptureError as exc:
        if fmt:
            raise VerifyError(f"error: {exc}") from None
        return None
    name = f"{path} (imported)"
    try:
        operations = parse_lines(((n, encode_line(line)) for n, line in enumerate(result.lines, 1)), source=name)
    except HistoryError as exc:
        raise VerifyError(f"error: {exc}") from None
    header = Header(history=name, sources=list(result.sources), format=result.format,
                    inferred=dict(result.inferred), times=result.times)
    return operations, header, list(result.writes)


def verify(
    history: str | Path,
    *,
    outcome: str | Path | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    options: Sequence[str] = (),
    settle: timedelta = timedelta(hours=1),
    capture_format: str = "",
    pacing: ev.Pacing | None = None,
    resync_period: timedelta | None = None,
) -> Verification:
    """Replay `history` and compare the engine's decisions with its recorded outcome. `history`
    may also be a raw capture without a sidecar: it is imported in memory first (in
    `capture_format`, or the format its first bytes tell)."""
    operations = None
    if capture_format:
        captured = _capture(history, capture_format)
        assert captured is not None
        operations, header, writes = captured
        path: Path | str = f"{history} (imported in memory)"
    elif outcome is None and not sidecar_path(history).exists() and Path(history).is_file():
        from replay.history import HistoryError, load_history

        try:
            load_history(history)
        except HistoryError as exc:
            captured = _capture(history)
            if captured is None:
                raise VerifyError(
                    f"error: {exc} (and it is no capture kreplay import reads; a history needs its recorded outcome "
                    f"{sidecar_path(history).name} beside it)"
                ) from None
            operations, header, writes = captured
            path = f"{history} (imported in memory)"
    if operations is None:
        from replay.history import HistoryError, load_history

        path, header, writes = load_outcome(history, outcome)  # type: ignore[assignment]
        try:
            operations = load_history(history)
        except HistoryError as exc:
            raise VerifyError(f"error: {exc}") from None
    compared = [w for w in writes if w.applied and w.controller in CONTROLLERS]
    if not compared:
        fmt = f" ({header.format} capture)" if header.format else ""
        raise VerifyError(
            f"error: {path}: the recorded outcome{fmt} holds no applied write by a controller kreplay models, "
            f"so there is nothing to verify the engine's decisions against"
        )
    replayed = replay_history(history, options=options, settle=settle, operations=operations, pacing=pacing, resync_period=resync_period)
    engine_log = from_events(replayed.events)
    recorded = from_outcome(writes, known=_known_objects(replayed.events), line_at=replayed.line_at,
                            deleter_unknown=header.format == "watch")
    comparison = compare(recorded, engine_log, tolerance=tolerance, observed=_observed(header, writes, recorded))
    ignored = ignored_writes(writes)
    if recorded.unattributed:
        ignored["no body and no role to infer (e.g. a generated pod name a Metadata-level audit log does not hold)"] = recorded.unattributed
    return Verification(
        history=str(history),
        outcome=str(path),
        header=header,
        comparison=comparison,
        options=list(options),
        events=replayed.events,
        ignored=dict(sorted(ignored.items())),
    )


def decision_log(replayed: Replayed) -> DecisionLog:
    return from_events(replayed.events)
