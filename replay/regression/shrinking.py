"""Shrinking a failing history: the smallest history that still fails the same way.

"The same way" (`--until same-divergence`, the default) means: replayed and compared with the
same reference (the golden decision log beside the history, else its recorded outcome, through
`kreplay verify`), the owner whose divergence came first in the original diverges first in the
very same way: the same kind of divergence (`different`, `missing`, `extra`, `status`, `late`)
between the same two decisions, as `verify` describes them (positions, lines and instants
aside). `--until any-divergence` accepts any divergence of any owner.

The search: what follows the line the divergence came from is dropped, then delta debugging
(ddmin) over the objects the lines are about (an object's lines go or stay together), then over
the lines, then each line's object simplified (fewer
replicas, fewer containers, no claim templates) where the failure stays, then ddmin again if a
simplification took. A candidate the history format or the engine refuses counts as not
failing, so the result is always a valid history. The history's other lines are left as they
are, in their order, so times never go backwards.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from replay.outcome import sidecar_path
from replay.regression.ddmin import ddmin
from replay.regression.goldens import GoldenError, compare_with_golden, golden_path, read_golden
from replay.regression.simplify import variants
from replay.verify import decisions
from replay.verify.compare import Comparison, Divergence
from replay.verify.verification import VerifyError, describe, replay_history, verify

UNTIL = {
    "same-divergence": "verify fails with the same first divergence",
    "any-divergence": "verify fails (any divergence of any owner)",
}
ALIASES = {text: name for name, text in UNTIL.items()}


class ShrinkError(Exception):
    """A history that cannot be shrunk (it does not fail, it has no reference, bad input)."""


class Signature(msgspec.Struct, frozen=True):
    owner: str
    what: str
    expected: str
    actual: str

    def text(self) -> str:
        return (
            f"{self.owner}: {self.what}: expected {self.expected or 'nothing'}; "
            f"engine {self.actual or 'nothing'}"
        )


def signature(d: Divergence) -> Signature:
    fields = d.fields if d.what == "status" else ()
    return Signature(
        owner=d.owner,
        what=d.what,
        expected=describe(d.expected.decision, fields) if d.expected is not None else "",
        actual=describe(d.actual.decision, fields) if d.actual is not None else "",
    )


class ShrinkResult(msgspec.Struct, kw_only=True):
    lines_before: int
    lines_after: int
    bytes_before: int
    bytes_after: int
    tests: int  # candidate histories replayed
    seconds: float  # wall time (a figure for people; nothing depends on it)
    target: Signature | None
    simplified: list[str]  # what the simplification pass changed, by line
    output: str


class Reference:
    """What a history is compared with: its golden decision log, or its recorded outcome."""

    def __init__(self, history: Path, *, golden: Path | None = None, outcome: Path | None = None, options: Sequence[str] = ()) -> None:
        self.options = list(options)
        self.golden: decisions.DecisionLog | None = None
        self.outcome: Path | None = None
        golden = golden or golden_path(history)
        if outcome is None and golden.exists():
            try:
                self.golden = read_golden(golden)
            except GoldenError as exc:
                raise ShrinkError(f"error: {exc}") from None
            self.name = str(golden)
        else:
            path = outcome or sidecar_path(history)
            if not path.exists():
                raise ShrinkError(
                    f"error: {history} has neither a golden decision log ({golden.name}) nor a recorded outcome "
                    f"({path.name}) to compare with: nothing says what it should do"
                )
            self.outcome = path
            self.name = str(path)

    def compare(self, history: Path, owner: str | None = None) -> Comparison:
        """Replay `history` and compare it with the reference (only `owner`, when given);
        raises VerifyError for a history that is refused."""
        if self.golden is not None:
            replayed = replay_history(history, options=self.options)
            actual = decisions.from_events(replayed.events)
            return compare_with_golden(self.golden, actual, (lambda o: o == owner) if owner else None)
        return verify(history, outcome=self.outcome, options=self.options).comparison


def first_divergence(comparison: Comparison, owner: str | None = None) -> Divergence | None:
    """The first divergence of `owner`, or of the first owner (by name) that diverges."""
    for o in comparison.owners:
        if (owner is None or o.owner == owner) and o.divergences:
            return o.divergences[0]
    return None


def _numbered(text: str) -> list[tuple[int, str]]:
    return [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]


def _object_of(line: str) -> str:
    """Which object a line is about (`Deployment/default/web`), or the line itself when it names
    none (kubelet, advance): the unit of the first, coarse pass."""
    from replay.kinds import UnknownKind, resolve

    try:
        parsed = json.loads(line)
    except ValueError:
        return line
    if not isinstance(parsed, dict):
        return line
    op = parsed.get("op")
    if op == "apply" and isinstance(parsed.get("object"), dict):
        obj = parsed["object"]
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        kind = str(obj.get("kind", ""))
        ns = "" if kind == "Node" else str(meta.get("namespace") or "default")
        return f"{kind}/{ns}/{meta.get('name', '')}"
    if op == "node-condition":
        return f"Node//{parsed.get('name', '')}"
    if op == "pod-status":
        return f"Pod/{parsed.get('namespace', 'default')}/{parsed.get('name') or parsed.get('owner', '')}"
    if "kind" in parsed and "name" in parsed:
        try:
            kind = resolve(str(parsed["kind"]))
        except UnknownKind:
            return line
        ns = "" if kind == "Node" else str(parsed.get("namespace") or "default")
        return f"{kind}/{ns}/{parsed['name']}"
    return line


def _ddmin_objects(lines: list[str], fails: Callable[[list[str]], bool]) -> list[str]:
    """Delta debugging over the objects the lines are about (all of an object's lines go or stay
    together), before the lines one by one: a capture of many workloads shrinks to the one that
    diverges in a few replays."""
    groups: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        groups.setdefault(_object_of(line), []).append(i)
    if len(groups) < 2 or len(groups) == len(lines):
        return lines
    keys = list(groups)

    def fails_with(kept: list[str]) -> bool:
        indices = sorted(i for key in kept for i in groups[key])
        return fails([lines[i] for i in indices])

    kept = ddmin(keys, fails_with)
    return [lines[i] for i in sorted(i for key in kept for i in groups[key])]


def shrink(
    history: Path,
    output: Path,
    *,
    until: str = "same-divergence",
    golden: Path | None = None,
    outcome: Path | None = None,
    options: Sequence[str] = (),
    simplify: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> ShrinkResult:
    """Shrink `history` (which must fail) and write the smallest failing history to `output`."""
    started = time.perf_counter()
    until = ALIASES.get(until, until)
    if until not in UNTIL:
        raise ShrinkError(f"--until {until!r}: expected one of {', '.join(repr(k) for k in UNTIL)} (or {UNTIL['same-divergence']!r})")
    try:
        text = history.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ShrinkError(f"error: {history}: cannot read the history: {exc}") from None
    numbered = _numbered(text)
    lines = [line for _, line in numbered]
    reference = Reference(history, golden=golden, outcome=outcome, options=options)
    try:
        original = reference.compare(history)
    except VerifyError as exc:
        raise ShrinkError(str(exc)) from None
    first = first_divergence(original)
    if first is None:
        raise ShrinkError(f"error: {history} agrees with {reference.name}: there is no failure to shrink")
    target = signature(first) if until == "same-divergence" else None
    tests = 0

    with tempfile.TemporaryDirectory(prefix="kreplay-shrink-") as scratch:
        candidate_path = Path(scratch) / history.name

        def fails(candidate: list[str]) -> bool:
            nonlocal tests
            tests += 1
            if progress is not None:
                progress(tests, len(candidate))
            candidate_path.write_text("\n".join(candidate) + "\n", encoding="utf-8")
            try:
                comparison = reference.compare(candidate_path, target.owner if target else None)
            except VerifyError:
                return False  # not a valid history (refused): never the answer
            found = first_divergence(comparison, target.owner if target else None)
            if found is None:
                return False
            return target is None or signature(found) == target

        current = list(lines)
        # the engine never looks ahead: what came after the line the divergence came from
        # cannot have caused it, so try without it first (one replay that often halves the work)
        cause = max((t.line for t in (first.expected, first.actual) if t is not None), default=0)
        if 0 < cause < numbered[-1][0]:
            before = [line for n, line in numbered if n <= cause]
            if fails(before):
                current = before
        current = _ddmin_objects(current, fails)
        current = ddmin(current, fails) if len(current) > 1 else current
        simplified: list[str] = []
        if simplify:
            changed = True
            while changed:
                changed = False
                for i, line in enumerate(current):
                    try:
                        parsed: Any = json.loads(line)
                    except ValueError:
                        continue
                    for what, smaller in variants(parsed):
                        candidate = list(current)
                        candidate[i] = json.dumps(smaller, separators=(", ", ": "))
                        if fails(candidate):
                            current = candidate
                            simplified.append(f"line {i + 1}: {what}")
                            changed = True
                            break
            if simplified and len(current) > 1:
                current = ddmin(current, fails)

    body = "\n".join(current) + "\n"
    partial = output.with_name(f".{output.name}.{os.getpid()}.partial")
    partial.write_text(body, encoding="utf-8")
    partial.replace(output)
    return ShrinkResult(
        lines_before=len(lines),
        lines_after=len(current),
        bytes_before=len(text.encode()),
        bytes_after=len(body.encode()),
        tests=tests,
        seconds=time.perf_counter() - started,
        target=target,
        simplified=simplified,
        output=str(output),
    )


def shrunk_path(history: Path) -> Path:
    """`web.kreplay.jsonl` -> `web.kreplay.shrunk.jsonl` (not itself collected as a test)."""
    name = history.name
    stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else name
    return history.with_name(stem + ".shrunk.jsonl")
