"""A history test's failure text: the first divergence per owner between the golden (or
recorded) decision log and the engine's, and with -v the aligned context around it."""

from __future__ import annotations

from pathlib import Path

from replay.verify import decisions

CONTEXT = 3


def _text(d: decisions.Decision | None) -> str:
    return "(nothing)" if d is None else decisions.encode_decision(d).decode()


def golden_report(
    expected: decisions.DecisionLog, actual: decisions.DecisionLog, history: Path, golden: Path, verbose: bool
) -> str:
    parts: list[str] = []
    owners = sorted(set(expected.owners) | set(actual.owners))
    diverged = 0
    for owner in owners:
        want = expected.owners.get(owner, [])
        got = actual.owners.get(owner, [])
        index = next(
            (i for i in range(max(len(want), len(got)))
             if i >= len(want) or i >= len(got) or want[i].decision != got[i].decision),
            None,
        )
        if index is None:
            continue
        diverged += 1
        w = want[index] if index < len(want) else None
        g = got[index] if index < len(got) else None
        lines = [f"{owner}: first divergence at decision {index + 1}"]
        lines.append(f"  golden: {_text(w.decision if w else None)}")
        lines.append(f"  engine: {_text(g.decision if g else None)}")
        if g is not None:
            lines.append(f"  engine's reason: {g.reason or '-'}: {g.message or '-'} (history line {g.line or '-'}, event {g.source or '-'}, trigger #{g.trigger})")
        if verbose:
            lo = max(0, index - CONTEXT)
            hi = index + CONTEXT + 1
            lines.append("  aligned context (golden | engine):")
            for i in range(lo, max(min(hi, len(want)), min(hi, len(got)))):
                a = want[i].decision if i < len(want) else None
                b = got[i].decision if i < len(got) else None
                mark = "  " if a == b else "!="
                lines.append(f"  {mark} {i + 1:>4} {_text(a)}")
                if a != b:
                    lines.append(f"          {_text(b)}")
        parts.append("\n".join(lines))
    if not parts:
        return ""
    head = f"{history}: {diverged} of {len(owners)} owners diverge from {golden.name}"
    tail = "(pytest --kreplay-update rewrites the golden if the change is intended)"
    return "\n".join([head, *parts, tail])


def outcome_report(history: Path, sidecar: Path, replayed: object, verbose: bool) -> str:
    raise NotImplementedError("verifying against a recorded outcome needs kreplay verify")
