"""The paced controllers' client-side token buckets (`replay --pace real`), as folded state.

A bucket lives in the cluster state (engine.api.state), not in the engine: it is refilled and
spent by the fold of the log (PacingConfigured sets it up; each write a paced controller
records spends a token), so a later `--append`, or a run resumed from the store, continues
each controller's bucket where the log left it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from fractions import Fraction


class TokenBucket:
    """client-go's token bucket (`flowcontrol.NewTokenBucketRateLimiter`) in virtual time, with
    exact fractions so that the instants never depend on float rounding."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = Fraction(qps)
        self.burst = burst
        self.tokens = Fraction(burst)
        self.last: datetime | None = None

    def _refill(self, now: datetime) -> None:
        if self.last is not None and now > self.last:
            elapsed = Fraction((now - self.last) // timedelta(microseconds=1), 1_000_000)
            self.tokens = min(Fraction(self.burst), self.tokens + elapsed * self.qps)
        if self.last is None or now > self.last:
            self.last = now

    def take(self, now: datetime) -> bool:
        """Spend a token at `now` if there is one."""
        self._refill(now)
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def next_token(self, now: datetime) -> datetime:
        """The first instant after `now` with a whole token (rounded up to the microsecond)."""
        self._refill(now)
        return now + timedelta(microseconds=max(1, _ceil_micros((1 - self.tokens) / self.qps)))

    def reserve(self, now: datetime) -> timedelta:
        """x/time/rate's `Reserve`: take a token at `now` even if it is not there yet (the
        tokens go below zero) and say how long to wait for it (the workqueue's
        BucketRateLimiter)."""
        self._refill(now)
        self.tokens -= 1
        return timedelta(0) if self.tokens >= 0 else timedelta(microseconds=_ceil_micros(-self.tokens / self.qps))

    def copy(self) -> TokenBucket:
        return TokenBucket.restore(self.state())

    def spend(self, now: datetime) -> None:
        """A write went out at `now`: one token less (never below zero: writes made by an
        unpaced run went out without waiting)."""
        self._refill(now)
        self.tokens = max(Fraction(0), self.tokens - 1)

    def available(self, now: datetime) -> bool:
        """Whether a write may go out at `now` (it spends its token when it is recorded)."""
        self._refill(now)
        return self.tokens >= 1

    def state(self) -> tuple[str, int, str, datetime | None]:
        return (str(self.qps), self.burst, str(self.tokens), self.last)

    @classmethod
    def restore(cls, state: tuple[str, int, str, datetime | None]) -> TokenBucket:
        qps, burst, tokens, last = state
        bucket = cls(1, burst)
        bucket.qps, bucket.tokens, bucket.last = Fraction(qps), Fraction(tokens), last
        return bucket


def _ceil_micros(seconds: Fraction) -> int:
    """`seconds` in whole microseconds, rounded up."""
    return -((-seconds.numerator * 1_000_000) // seconds.denominator)
