"""A history test's failure text, made by `kreplay verify`'s own code: its comparison
(`replay.verify.compare`) and its description of a divergence (`verification.explain`), per owner
the first divergence; with -v the aligned decision timelines around it (`diff.timeline`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from engine import events as ev
from replay.regression.goldens import compare_with_golden
from replay.verify import decisions
from replay.verify.compare import OwnerResult
from replay.verify.diff import timeline
from replay.verify.verification import describe, explain

CONTEXT = 4  # aligned steps shown before and after the first divergence with -v
UPDATE_HINT = "(pytest --kreplay-update rewrites the golden if the change is intended)"


def _context(expected: Sequence[decisions.Traced], actual: Sequence[decisions.Traced], names: tuple[str, str]) -> list[str]:
    steps = timeline(list(expected), list(actual))
    first = next((i for i, s in enumerate(steps) if s.mark != "="), None)
    if first is None:
        return []
    lo, hi = max(0, first - CONTEXT), min(len(steps), first + CONTEXT + 1)
    out = [f"aligned decisions ({steps[lo:hi].__len__()} of {len(steps)}; = both, - only {names[0]}, + only {names[1]}, ~ taken otherwise):"]
    if lo:
        out.append(f"  ... {lo} before")
    for s in steps[lo:hi]:
        if s.mark == "~" and s.a is not None and s.b is not None:
            out.append(f"  ~ {names[0]}: {describe(s.a.decision)}")
            out.append(f"    {names[1]}: {describe(s.b.decision)}")
        else:
            t = s.a if s.a is not None else s.b
            assert t is not None
            out.append(f"  {s.mark} {describe(t.decision)}")
    if hi < len(steps):
        out.append(f"  ... {len(steps) - hi} after")
    return out


def _owner_block(
    o: OwnerResult,
    events: Sequence[ev.Event],
    expected: decisions.DecisionLog,
    actual: decisions.DecisionLog,
    names: tuple[str, str],
    verbose: bool,
) -> list[str]:
    d = o.first
    assert d is not None
    more = f" (and {len(o.divergences) - 1} more)" if len(o.divergences) > 1 else ""
    lines = [f"first divergence, {o.owner}{more}:"]
    lines += ["  " + x for x in explain(d, events, expected_name=names[0], actual_name=names[1])]
    if verbose:
        lines += ["  " + x for x in _context(expected.owners.get(o.owner, []), actual.owners.get(o.owner, []), ("golden" if names[0] == "golden" else "recorded", "engine"))]
    return lines


def golden_report(
    golden: decisions.DecisionLog,
    actual: decisions.DecisionLog,
    events: Sequence[ev.Event],
    history: Path,
    golden_path: Path,
    verbose: bool,
) -> str:
    """"" when the engine's decisions are the golden's, else the first divergence per owner."""
    comparison = compare_with_golden(golden, actual)
    diverging = [o for o in comparison.owners if o.divergences]
    if not diverging:
        return ""
    t = comparison.totals()
    lines = [
        f"{history}: the decisions differ from {golden_path.name} for {len(diverging)} of {len(comparison.owners)} owners "
        f"({t['matched']}/{t['expected']} golden decisions agree, {t['divergences']} divergences)"
    ]
    for o in diverging:
        lines.append("")
        lines += _owner_block(o, events, golden, actual, ("golden", "engine did"), verbose)
    lines += ["", UPDATE_HINT]
    return "\n".join(lines)


def outcome_report(history: Path, sidecar: Path | None, verbose: bool) -> str:
    """`kreplay verify` of the history against its recorded outcome (`None`: a raw capture,
    imported in memory): "" when it agrees."""
    from replay.verify.decisions import from_events, from_outcome
    from replay.verify.verification import _known_objects, load_outcome, verify

    result = verify(history, outcome=sidecar)
    if result.agrees:
        return ""
    lines = [result.text()]
    if verbose and sidecar is not None:
        _, _, writes = load_outcome(history, sidecar)
        engine_log = from_events(result.events)
        recorded = from_outcome(writes, known=_known_objects(result.events))
        for o in result.comparison.owners:
            if o.divergences:
                lines += ["", f"{o.owner}:"]
                lines += ["  " + x for x in _context(recorded.owners.get(o.owner, []), engine_log.owners.get(o.owner, []), ("recorded", "engine"))]
    return "\n".join(lines)
