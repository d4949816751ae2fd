"""Durations, ages and timestamps as kubectl prints them.

`human_duration` mirrors k8s.io/apimachinery/pkg/util/duration.HumanDuration; `age_since` is the AGE
cell (translateTimestampSince); `rfc1123z` is Go's time.RFC1123Z that describe prints.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 time of a manifest body (`2026-11-20T10:01:05Z`), None when there is none or
    it does not parse (printed as kubectl prints a zero time)."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _trunc_div(a: int, b: int) -> int:
    """Integer division rounding toward zero, like Go's int conversion of a float."""
    q = abs(a) // b
    return q if a >= 0 else -q


def human_duration(delta: timedelta) -> str:
    """AGE as kubectl shows it; mirrors duration.HumanDuration (~2-3 significant figures)."""
    us = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    seconds = _trunc_div(us, 1_000_000)
    # upstream tolerates up to 2s of clock skew (excluded) as "now"
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = us // 60_000_000
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = us // 3_600_000_000
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def aware(ts: datetime) -> datetime:
    # our histories carry UTC; a naive time is read as UTC rather than the local zone
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


def age_since(ts: datetime | None, now: datetime) -> str:
    """mirrors translateTimestampSince: `<unknown>` for a zero timestamp."""
    if ts is None:
        return "<unknown>"
    return human_duration(aware(now) - aware(ts))


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def rfc1123z(ts: datetime | None) -> str:
    """Go's time.RFC1123Z, locale-free; a zero metav1.Time prints as year 1 like upstream."""
    if ts is None:
        return "Mon, 01 Jan 0001 00:00:00 +0000"
    ts = aware(ts)
    offset = ts.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hh, mm = divmod(abs(minutes), 60)
    return (
        f"{_DAYS[ts.weekday()]}, {ts.day:02d} {_MONTHS[ts.month - 1]} {ts.year:04d} "
        f"{ts.hour:02d}:{ts.minute:02d}:{ts.second:02d} {sign}{hh:02d}{mm:02d}"
    )
