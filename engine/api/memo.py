"""Answers of pure functions of a struct, kept by the struct's encoding.

Admission repeats itself: every pod a controller creates carries its template's spec, so
defaulting it (SetDefaults_PodSpec and the rest) and validating it (ValidatePodSpec) compute the
same answer again and again, ~20 µs a pod. Both are pure functions of the spec's value, and two
specs with the same msgpack encoding have the same value (field by field, dict keys in the same
order, ints, floats and booleans told apart), so the answer for one is the answer for the other.
The key costs ~0.1 µs. Each memo is emptied when full, so memory stays bounded whatever a
history holds (a DaemonSet's pods differ by their node affinity: those simply miss).
"""

from __future__ import annotations

from typing import Generic, TypeVar

import msgspec

V = TypeVar("V")

_ENCODER = msgspec.msgpack.Encoder()


class ByEncoding(Generic[V]):
    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self.answers: dict[bytes, V] = {}

    @staticmethod
    def key(obj: object) -> bytes | None:
        """The encoding of `obj`, or None when it has none (then nothing is kept)."""
        try:
            return _ENCODER.encode(obj)
        except (TypeError, msgspec.EncodeError):
            return None

    def get(self, key: bytes | None) -> V | None:
        return self.answers.get(key) if key is not None else None

    def put(self, key: bytes | None, value: V) -> None:
        if key is None:
            return
        if len(self.answers) >= self.limit:
            self.answers.clear()
        self.answers[key] = value
