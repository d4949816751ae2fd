"""Taints and tolerations: which taints a pod tolerates, and the tolerations daemon pods get.

Mirrors `Toleration.ToleratesTaint` (k8s.io/api/core/v1/toleration.go),
`FindMatchingUntoleratedTaint` (component-helpers) and daemon util
`AddOrUpdateDaemonPodTolerations`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence

from engine.api.objects import PodSpec, Taint, Toleration, replace
from engine.api.selectors import parse_int64

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"

# The numeric operators accept canonical decimal int64s only: no sign, no leading zero.
_CANONICAL_INT = re.compile(r"0|-?[1-9][0-9]*")


def _canonical_int64(text: str) -> int | None:
    return parse_int64(text) if _CANONICAL_INT.fullmatch(text) else None


def tolerates(toleration: Toleration, taint: Taint, *, comparison_operators: bool = False) -> bool:
    """Whether one toleration tolerates one taint; mirrors Toleration.ToleratesTaint.

    `comparison_operators` is the alpha TaintTolerationComparisonOperators gate (off by
    default): with it off, Lt and Gt tolerate nothing, like any unknown operator.
    """
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator
    if op in ("", "Equal"):  # an empty operator means Equal
        return toleration.value == taint.value
    if op == "Exists":
        return True
    if op in ("Lt", "Gt") and comparison_operators:
        # mirrors compareNumericValues: the taint's value against the toleration's
        want, have = _canonical_int64(toleration.value), _canonical_int64(taint.value)
        if want is None or have is None:
            return False
        return have < want if op == "Lt" else have > want
    return False


def untolerated(
    taints: Iterable[Taint],
    tolerations: Sequence[Toleration],
    effects: Collection[str],
    *,
    comparison_operators: bool = False,
) -> list[Taint]:
    """The taints with an effect in `effects` that no toleration tolerates, in input order.

    Mirrors FindMatchingUntoleratedTaint with an effect filter, but returns all of them.
    """
    return [
        taint
        for taint in taints
        if taint.effect in effects
        and not any(
            tolerates(t, taint, comparison_operators=comparison_operators) for t in tolerations
        )
    ]


DAEMON_DEFAULT_TOLERATIONS: tuple[Toleration, ...] = tuple(
    Toleration(key=key, operator="Exists", effect=effect)
    for key, effect in (
        # survive taint-based eviction when the node turns not ready or unreachable
        ("node.kubernetes.io/not-ready", NO_EXECUTE),
        ("node.kubernetes.io/unreachable", NO_EXECUTE),
        # TaintNodesByCondition: daemon pods run under node pressure and on cordoned nodes
        ("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
        ("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
        ("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
        ("node.kubernetes.io/unschedulable", NO_SCHEDULE),
    )
)
"""Added to every daemon pod, in this order."""

DAEMON_HOST_NETWORK_TOLERATION = Toleration(
    key="node.kubernetes.io/network-unavailable", operator="Exists", effect=NO_SCHEDULE
)
"""Added after the defaults, only to hostNetwork daemon pods."""


def _same_toleration(a: Toleration, b: Toleration) -> bool:
    # mirrors Toleration.MatchToleration: tolerations are unique by key/effect/operator/value
    return (a.key, a.effect, a.operator, a.value) == (b.key, b.effect, b.operator, b.value)


def _add_or_update(tolerations: list[Toleration], toleration: Toleration) -> list[Toleration]:
    # mirrors v1helper.AddOrUpdateTolerationInPodSpec. Its "already equal, leave it" shortcut
    # compares a *Toleration with a Toleration, which Semantic.DeepEqual always calls unequal,
    # so in effect every matching toleration is replaced in place (dropping tolerationSeconds).
    if not any(_same_toleration(t, toleration) for t in tolerations):
        return [*tolerations, toleration]
    return [toleration if _same_toleration(t, toleration) else t for t in tolerations]


def with_daemon_tolerations(spec: PodSpec) -> PodSpec:
    """The spec with the daemon defaults added; mirrors AddOrUpdateDaemonPodTolerations."""
    defaults = DAEMON_DEFAULT_TOLERATIONS
    if spec.host_network:
        defaults += (DAEMON_HOST_NETWORK_TOLERATION,)
    tolerations = list(spec.tolerations)
    for default in defaults:
        tolerations = _add_or_update(tolerations, default)
    return replace(spec, tolerations=tolerations)
