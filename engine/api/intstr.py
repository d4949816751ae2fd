"""IntOrString arithmetic shared by the workload controllers (mirrors k8s.io/apimachinery intstr)."""

from __future__ import annotations

import math

from engine.api.objects import IntOrString


def scaled_value(value: IntOrString, total: int, round_up: bool) -> int:
    """Mirrors intstr.GetScaledValueFromIntOrPercent; a string without `%` is an error."""
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise ValueError(f"invalid value for IntOrString: invalid type: string is not a percentage: {value!r}")
    try:
        percent = int(value[:-1])
    except ValueError:
        raise ValueError(f"invalid value for IntOrString: invalid value {value!r}") from None
    exact = percent * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)
