"""Revision hashes and names: Kubernetes' alphabet, FNV, and Go's JSON bytes.

- `statefulset_revision_hash` is upstream's `history.HashControllerRevision` exactly: FNV-1 32
  over the revision's JSON patch bytes, then the decimal collisionCount, SafeEncodeString'd.
- `template_hash` stands in for `controller.ComputeHash` (DaemonSet revision hashes, Deployment
  pod-template-hash). Upstream hashes a Go spew dump of the struct, which cannot be reproduced
  outside Go; we hash Go-style JSON of the template instead, with the collisionCount as 8
  little-endian bytes, so names keep their shape (alphabet, length), determinism and salting.
"""

from __future__ import annotations

import json
from typing import Any

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def safe_encode(text: str) -> str:
    """Mirrors rand.SafeEncodeString: each byte mapped into a 27-letter vowel-free alphabet."""
    return "".join(SAFE_ALPHABET[b % len(SAFE_ALPHABET)] for b in text.encode())


def fnv1_32(data: bytes, h: int = _FNV_OFFSET) -> int:
    for b in data:
        h = ((h * _FNV_PRIME) & 0xFFFFFFFF) ^ b
    return h


def fnv1a_32(data: bytes, h: int = _FNV_OFFSET) -> int:
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def go_json(value: Any) -> bytes:
    """Go encoding/json bytes of a map: sorted keys, compact, HTML-safe escapes."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text.encode()


def revision_data(template: dict[str, Any]) -> dict[str, Any]:
    """A ControllerRevision's `data`: `{"spec":{"template":{..., "$patch":"replace"}}}`."""
    return {"spec": {"template": {**template, "$patch": "replace"}}}


def with_go_zero_values(template: dict[str, Any]) -> dict[str, Any]:
    """A pod template as Go's encoding/json writes it: struct fields without omitempty stay.

    The API server never drops `metadata.creationTimestamp` (a struct, written as null) or a
    container's `resources` (a struct, written as `{}`), so revision data made by marshalling
    the object (StatefulSet `getPatch`) holds them; the StatefulSet revision hash depends on it.
    """
    meta = {"creationTimestamp": None, **(template.get("metadata") or {})}
    spec = dict(template.get("spec") or {})
    for field in ("initContainers", "containers", "ephemeralContainers"):
        if field in spec:
            spec[field] = [{"resources": {}, **c} for c in spec[field]]
    return {**template, "metadata": meta, "spec": spec}


def statefulset_revision_hash(data: dict[str, Any], collision_count: int | None) -> str:
    """Mirrors history.HashControllerRevision (FNV-1, not FNV-1a)."""
    h = fnv1_32(go_json(data))
    if collision_count is not None:
        h = fnv1_32(str(collision_count).encode(), h)
    return safe_encode(str(h))


def template_hash(template: dict[str, Any], collision_count: int | None) -> str:
    """Stands in for controller.ComputeHash (FNV-1a; see the module docstring)."""
    h = fnv1a_32(go_json(template))
    if collision_count is not None:
        h = fnv1a_32((collision_count & 0xFFFFFFFF).to_bytes(8, "little"), h)
    return safe_encode(str(h))
