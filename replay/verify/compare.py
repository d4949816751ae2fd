"""Comparing two decision logs owner by owner: what agrees, what diverges first, and why.

`compare(expected, actual)` takes the log taken as truth (a recorded outcome, or run A of a diff)
and the log under test (the engine's, or run B). Per owner:

- **Actions** (create, delete, scale, update) are aligned by order: both sequences are compared
  as a whole (an LCS alignment, `difflib.SequenceMatcher`), so one missing decision does not
  shift every later one. Within a *burst* (consecutive decisions of one action and kind at one
  engine instant, or within the time tolerance of each other in a capture: one sync's
  slow-start batch, whose writes upstream issues concurrently) order is not compared. Scalings
  are never a burst: the Deployment controller writes them one after another, each from what
  the last left (a ReplicaSet scaled 3 -> 2 -> 1 within the tolerance is two decisions in that
  order), so their order is always compared.
- **Statuses** are matched as a subsequence: every expected status must appear, in order, among
  the actual ones (real controllers coalesce status writes the engine makes one by one, so extra
  actual statuses are no divergence).
- A matched pair more than `tolerance` seconds apart is a divergence (`late`).
- What the README lists as not modelled is counted apart (`not_modelled`), never as agreement:
  hash *values* of DaemonSet ControllerRevisions and of Deployment ReplicaSets (`hash-value`:
  compared by which revision they name, through a mapping built from the revisions' creation),
  and the order in which a DaemonSet rolling update walks the nodes (`daemonset-node-order`).
"""

from __future__ import annotations

import difflib
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime

import msgspec

from replay.verify.decisions import Decision, DecisionLog, Traced, encode_decision

DEFAULT_TOLERANCE = 5.0  # seconds; see README "Verifying a replay"
# actions whose order within a burst is compared: each is written from what the one before left
ORDERED_ACTIONS = frozenset({"scale"})

NOT_MODELLED = {
    "hash-value": "DaemonSet and Deployment template hashes differ from the capture's: its cluster ran another "
    "Kubernetes release than --kubernetes-version (the Go types change the hash) or defaulted a field the engine "
    "does not (README: Names are a real cluster's); decisions are compared by the revision the hash names",
    "daemonset-node-order": "which node a DaemonSet rolling update takes next is arbitrary upstream (a Go map "
    "walk); the engine walks nodes by name (README: DaemonSet controller, Choices)",
    "not-recorded": "the capture does not hold some fields of these writes (a Metadata-level audit log has no "
    "bodies, so roles were inferred from names and a new ReplicaSet's size is unknown; a watch stream does not say "
    "who deleted): those fields are not compared",
}


class Divergence(msgspec.Struct, kw_only=True, omit_defaults=True):
    """`what`: `missing` (expected, not done), `extra` (done, not expected), `different` (done
    otherwise), `late` (done, but further apart in time than the tolerance), `status` (an
    expected status never reached)."""

    owner: str
    what: str
    expected: Traced | None = None
    actual: Traced | None = None
    fields: list[str] = msgspec.field(default_factory=list)  # for `different`: what differs
    # the actual log's last decision before the two parted (both agreed on it): its reasoning
    # often holds the number the divergence comes from
    previous: Traced | None = None


class OwnerResult(msgspec.Struct, kw_only=True):
    owner: str
    expected: int = 0  # decisions in the expected log
    actual: int = 0  # decisions in the actual log
    matched: int = 0  # expected decisions the actual log agrees with
    not_modelled: int = 0  # expected decisions differing only in what is not modelled
    unobserved: int = 0  # actual decisions of a kind the capture cannot show (not compared)
    divergences: list[Divergence] = msgspec.field(default_factory=list)
    notes: dict[str, int] = msgspec.field(default_factory=dict)  # not-modelled reason -> count

    @property
    def agreement(self) -> float:
        return self.matched / self.expected if self.expected else 1.0

    @property
    def first(self) -> Divergence | None:
        return self.divergences[0] if self.divergences else None


class Comparison(msgspec.Struct, kw_only=True):
    owners: list[OwnerResult]
    latencies: list[float]  # seconds, actual -> expected, over matched pairs
    tolerance: float

    @property
    def agrees(self) -> bool:
        return all(not o.divergences for o in self.owners)

    def totals(self) -> dict[str, int]:
        return {
            "expected": sum(o.expected for o in self.owners),
            "actual": sum(o.actual for o in self.owners),
            "matched": sum(o.matched for o in self.owners),
            "notModelled": sum(o.not_modelled for o in self.owners),
            "unobserved": sum(o.unobserved for o in self.owners),
            "divergences": sum(len(o.divergences) for o in self.owners),
        }

    def notes(self) -> dict[str, int]:
        out: Counter[str] = Counter()
        for o in self.owners:
            out.update(o.notes)
        return dict(sorted(out.items()))

    def latency(self) -> dict[str, float]:
        if not self.latencies:
            return {"count": 0}
        xs = sorted(self.latencies)
        return {
            "count": len(xs),
            "min": xs[0],
            "median": statistics.median(xs),
            "p90": xs[min(len(xs) - 1, int(0.9 * len(xs)))],
            "max": xs[-1],
        }


def parse_at(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 time with any number of fractional digits."""
    if not text:
        return 0.0
    t = text.strip()
    if t.endswith("Z"):
        t = t[:-1] + "+00:00"
    frac = ""
    head, dot, rest = t.partition(".")
    if dot:
        digits = ""
        i = 0
        while i < len(rest) and rest[i].isdigit():
            digits += rest[i]
            i += 1
        frac, t = "0." + digits, head + rest[i:]
    try:
        base = datetime.fromisoformat(t).timestamp()
    except ValueError:
        return 0.0
    return base + (float(frac) if frac else 0.0)


# --- hash values: compared by the revision they name -------------------------------------------

_MAPPED_OWNERS = ("DaemonSet/", "Deployment/", "ReplicaSet/")


def _revision_hashes(log: DecisionLog) -> dict[tuple[str, str], str]:
    """(owner, revision key) -> hash, from the creations of DaemonSet ControllerRevisions and
    Deployment ReplicaSets."""
    out: dict[tuple[str, str], str] = {}
    for traced in log:
        d = traced.decision
        if d.action != "create" or not d.hash:
            continue
        if (d.kind == "ControllerRevision" and d.owner.startswith("DaemonSet/")) or (
            d.kind == "ReplicaSet" and d.owner.startswith("Deployment/")
        ):
            out.setdefault((d.owner, d.key), d.hash)
    return out


def hash_mapping(expected: DecisionLog, actual: DecisionLog) -> dict[str, str]:
    """Expected hash -> actual hash, for revisions both logs created under the same role."""
    mine, theirs = _revision_hashes(expected), _revision_hashes(actual)
    return {h: theirs[k] for k, h in mine.items() if k in theirs}


def _translate(d: Decision, mapping: dict[str, str]) -> tuple[Decision, bool]:
    if not d.hash or not d.owner.startswith(_MAPPED_OWNERS) or d.hash not in mapping:
        return d, False
    new = mapping[d.hash]
    if new == d.hash:
        return d, False
    name = d.name.replace(d.hash, new) if d.name else d.name
    return msgspec.structs.replace(d, hash=new, name=name), True


# --- aligning ------------------------------------------------------------------------------------


_BLANK = {"replicas": None, "hash": "", "name": "", "revision": "", "controller": ""}


def _blanked(d: Decision, blank: frozenset[tuple[str, str, str]]) -> Decision:
    """The decision without the fields the capture did not record for its action and kind."""
    if not blank:
        return d
    fields = {f: _BLANK[f] for a, k, f in blank if a == d.action and k == d.kind and f in _BLANK}
    return msgspec.structs.replace(d, **fields) if fields else d


def _is_ds_pod(d: Decision) -> bool:
    return d.kind == "Pod" and d.owner.startswith("DaemonSet/") and d.key.startswith("node=")


def _align_key(d: Decision, strip_nodes: bool = True) -> bytes:
    if strip_nodes and _is_ds_pod(d):
        d = msgspec.structs.replace(d, key="node=*")
    return encode_decision(d)


def _bursts(
    items: list[tuple[Traced, Decision, float]], tolerance: float, strip_nodes: bool = True
) -> list[tuple[Traced, Decision, float]]:
    """Sort each burst (same action and kind, within `tolerance` of the burst's first) by key.
    A scaling is a burst of its own: scalings keep their order (above)."""
    out: list[tuple[Traced, Decision, float]] = []
    burst: list[tuple[Traced, Decision, float]] = []

    def flush() -> None:
        if len(burst) > 1:
            burst.sort(key=lambda x: _align_key(x[1], strip_nodes))
        out.extend(burst)
        burst.clear()

    for item in items:
        if burst:
            first = burst[0]
            same = (first[1].action, first[1].kind) == (item[1].action, item[1].kind) and item[1].action not in ORDERED_ACTIONS
            if not same or item[2] - first[2] > tolerance:
                flush()
        burst.append(item)
    flush()
    return out


def _differing(a: Decision, b: Decision) -> list[str]:
    fa, fb = msgspec.structs.asdict(a), msgspec.structs.asdict(b)
    return [k for k in fa if fa[k] != fb[k]]


def _compare_owner(
    owner: str,
    expected: list[Traced],
    actual: list[Traced],
    mapping: dict[str, str],
    tolerance: float,
    burst_tolerance: float,
    latencies: list[float],
    strip_nodes: bool = True,
    blank: frozenset[tuple[str, str, str]] = frozenset(),
    observed: frozenset[tuple[str, str]] | None = None,
) -> OwnerResult:
    result = OwnerResult(owner=owner, expected=len(expected), actual=len(actual))
    divergences: list[tuple[float, int, Divergence]] = []

    def diverge(at: float, d: Divergence) -> None:
        divergences.append((at, len(divergences), d))

    def note(reason: str) -> None:
        result.notes[reason] = result.notes.get(reason, 0) + 1

    exp: list[tuple[Traced, Decision, float]] = []
    translated: set[int] = set()
    unrecorded: set[int] = set()
    for t in expected:
        d, changed = _translate(t.decision, mapping)
        if changed:
            translated.add(id(t))
        if t.unrecorded:
            unrecorded.add(id(t))
        exp.append((t, _blanked(d, blank), parse_at(t.at)))
    act = []
    for t in actual:
        d = t.decision
        if observed is not None and d.action != "status" and (d.action, d.kind) not in observed:
            result.unobserved += 1
            continue
        act.append((t, _blanked(d, blank), parse_at(t.at)))

    exp_actions = _bursts([x for x in exp if x[1].action != "status"], burst_tolerance, strip_nodes)
    act_actions = _bursts([x for x in act if x[1].action != "status"], 0.0, strip_nodes)
    act_nodes = Counter(encode_decision(x[1]) for x in act_actions if _is_ds_pod(x[1]))

    def matched(e: tuple[Traced, Decision, float], a: tuple[Traced, Decision, float]) -> None:
        latency = e[2] - a[2]
        if abs(latency) > tolerance:
            diverge(min(e[2], a[2]), Divergence(owner=owner, what="late", expected=e[0], actual=a[0]))
            return
        latencies.append(latency)
        if e[1] != a[1]:  # differs only in the DaemonSet pod's node
            if act_nodes.get(encode_decision(e[1]), 0) > 0:
                act_nodes[encode_decision(e[1])] -= 1
                result.not_modelled += 1
                note("daemonset-node-order")
            else:
                diverge(e[2], Divergence(owner=owner, what="different", expected=e[0], actual=a[0],
                                         fields=_differing(e[1], a[1])))
            return
        if _is_ds_pod(e[1]):
            act_nodes[encode_decision(e[1])] -= 1
        if id(e[0]) in unrecorded:
            result.not_modelled += 1
            note("not-recorded")
        elif id(e[0]) in translated:
            result.not_modelled += 1
            note("hash-value")
        else:
            result.matched += 1

    ek = [_align_key(x[1], strip_nodes) for x in exp_actions]
    ak = [_align_key(x[1], strip_nodes) for x in act_actions]
    for tag, i1, i2, j1, j2 in _opcodes(ek, ak):
        if tag == "equal":
            for k in range(i2 - i1):
                matched(exp_actions[i1 + k], act_actions[j1 + k])
            continue
        # where the sequences part, the expected decision and what was done instead are one
        # divergence (`different`); the rest of the block is missing or extra
        pairs = 1 if (i2 > i1 and j2 > j1) else 0
        for k in range(pairs):
            e, a = exp_actions[i1 + k], act_actions[j1 + k]
            diverge(min(e[2], a[2]), Divergence(owner=owner, what="different", expected=e[0], actual=a[0],
                                                fields=_differing(e[1], a[1])))
        for k in range(i1 + pairs, i2):
            e = exp_actions[k]
            diverge(e[2], Divergence(owner=owner, what="missing", expected=e[0]))
        for k in range(j1 + pairs, j2):
            a = act_actions[k]
            diverge(a[2], Divergence(owner=owner, what="extra", actual=a[0]))
    action_divergences = list(divergences)
    divergences.clear()
    lockstep = _lockstep(owner, exp_actions, act_actions, ek, ak)
    if lockstep is not None:
        # the alignment finds the most agreement; the reader needs where the two first part, in
        # order: that pair leads (in place of the alignment's first, so nothing is counted twice)
        at, pair = lockstep
        if not action_divergences or action_divergences[0][2].what not in ("late",) or action_divergences[0][0] > at:
            action_divergences[:1] = [(at, -1, pair)]

    # statuses: a subsequence, in order, within the tolerance
    act_status = [x for x in act if x[1].action == "status"]
    pointer = 0
    for e in (x for x in exp if x[1].action == "status"):
        found = None
        for j in range(pointer, len(act_status)):
            a = act_status[j]
            if a[2] - e[2] > tolerance:
                break
            if a[1].status == e[1].status and abs(e[2] - a[2]) <= tolerance:
                found = j
                break
        if found is None:
            nearest = act_status[pointer] if pointer < len(act_status) else None
            diverge(e[2], Divergence(owner=owner, what="status", expected=e[0],
                                     actual=nearest[0] if nearest else None,
                                     fields=_status_fields(e[1], nearest[1] if nearest else None)))
            continue
        latencies.append(e[2] - act_status[found][2])
        result.matched += 1
        pointer = found + 1

    # the first divergence is the first place the action sequences part, or the first status
    # never reached, whichever came first; the rest follow in time
    status_divergences = list(divergences)
    heads = [x for x in (action_divergences[:1] + status_divergences[:1])]
    rest = action_divergences[1:] + status_divergences[1:]
    if len(heads) == 2 and heads[1][0] < heads[0][0]:
        heads.reverse()
    ordered = heads[:1] + sorted(heads[1:] + rest, key=lambda x: (x[0], x[1]))
    result.divergences = [d for _, _, d in ordered]
    return result


def _opcodes(a: list[bytes], b: list[bytes]) -> list[tuple[str, int, int, int, int]]:
    """SequenceMatcher's opcodes, with the common head and tail taken off first (the usual case
    is two logs that agree almost everywhere; the matcher is quadratic on repeated items)."""
    n = min(len(a), len(b))
    head = 0
    while head < n and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    out: list[tuple[str, int, int, int, int]] = []
    if head:
        out.append(("equal", 0, head, 0, head))
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    if mid_a or mid_b:
        if not mid_a or not mid_b:
            out.append(("insert" if not mid_a else "delete", head, head + len(mid_a), head, head + len(mid_b)))
        else:
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=False).get_opcodes():
                out.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        out.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return out


def _lockstep(
    owner: str,
    exp: list[tuple[Traced, Decision, float]],
    act: list[tuple[Traced, Decision, float]],
    ek: list[bytes],
    ak: list[bytes],
) -> tuple[float, Divergence] | None:
    """Where the two action sequences, walked side by side, first differ."""
    for k in range(max(len(ek), len(ak))):
        e = exp[k] if k < len(ek) else None
        a = act[k] if k < len(ak) else None
        previous = act[k - 1][0] if 0 < k <= len(act) else None
        if e is not None and a is not None:
            if ek[k] == ak[k]:
                continue
            return min(e[2], a[2]), Divergence(owner=owner, what="different", expected=e[0], actual=a[0],
                                               fields=_differing(e[1], a[1]), previous=previous)
        if e is not None:
            return e[2], Divergence(owner=owner, what="missing", expected=e[0], previous=previous)
        if a is not None:
            return a[2], Divergence(owner=owner, what="extra", actual=a[0], previous=previous)
    return None


def _status_fields(e: Decision, a: Decision | None) -> list[str]:
    if a is None:
        return sorted(e.status)
    return sorted(k for k in set(e.status) | set(a.status) if e.status.get(k) != a.status.get(k))


def compare(
    expected: DecisionLog,
    actual: DecisionLog,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    expected_is_capture: bool = True,
    owners: Callable[[str], bool] | None = None,
    observed: frozenset[tuple[str, str]] | None = None,
) -> Comparison:
    """Compare owner by owner (every owner of either log, sorted). `expected_is_capture`: the
    expected log is a real cluster's (bursts span the tolerance, hash values and DaemonSet node
    order are not modelled); otherwise both are engine logs and everything is compared.
    `observed`: the (action, kind) pairs the capture can show (None: all); the actual log's
    other actions are counted as unobserved, not compared."""
    mapping = hash_mapping(expected, actual) if expected_is_capture else {}
    blank = frozenset((t.decision.action, t.decision.kind, f) for t in expected for f in t.unrecorded)
    latencies: list[float] = []
    results: list[OwnerResult] = []
    names: Sequence[str] = sorted(set(expected.owners) | set(actual.owners))
    for owner in names:
        if owners is not None and not owners(owner):
            continue
        results.append(
            _compare_owner(
                owner,
                expected.owners.get(owner, []),
                actual.owners.get(owner, []),
                mapping,
                tolerance,
                tolerance if expected_is_capture else 0.0,
                latencies,
                strip_nodes=expected_is_capture,
                blank=blank,
                observed=observed,
            )
        )
    return Comparison(owners=results, latencies=latencies, tolerance=tolerance)
