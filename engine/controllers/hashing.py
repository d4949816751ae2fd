"""Revision hashes and names: Kubernetes' alphabet, FNV, Go's JSON bytes and go-spew's dump.

- `statefulset_revision_hash` is upstream's `history.HashControllerRevision` exactly: FNV-1 32
  over the revision's JSON patch bytes, then the decimal collisionCount, SafeEncodeString'd.
- `compute_hash` is upstream's `controller.ComputeHash` exactly (DaemonSet revision hashes,
  Deployment pod-template-hash, so ReplicaSet and ControllerRevision names): FNV-1a 32 over
  go-spew's `%#v` of the Go `v1.PodTemplateSpec` of a Kubernetes release (engine/api/gotypes),
  then the collisionCount as 8 bytes (`binary.LittleEndian.PutUint32` into `make([]byte, 8)`).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import msgspec

from engine.api.gotypes import DEFAULT_KUBERNETES_VERSION, renderer

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
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
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


_KEY_ENCODER = msgspec.json.Encoder(order="deterministic")


def compute_hash(
    template: dict[str, Any], collision_count: int | None, version: str = DEFAULT_KUBERNETES_VERSION
) -> str:
    """Mirrors controller.ComputeHash(&template, collisionCount) on a `version` (`1.33`) cluster.

    `template` is the stored (API-defaulted) pod template as JSON. The FNV state after the
    template is cached per (version, template): a DaemonSet's template is hashed on every sync.
    """
    h = _template_fnv(version, _KEY_ENCODER.encode(template))
    if collision_count is not None:
        h = fnv1a_32((collision_count & 0xFFFFFFFF).to_bytes(8, "little"), h)
    return safe_encode(str(h))


def spew_template(template: dict[str, Any], version: str = DEFAULT_KUBERNETES_VERSION) -> str:
    """The text ComputeHash hashes: go-spew's `%#v` of the template as `version`'s Go type."""
    return renderer(version).render(template)


@lru_cache(maxsize=4096)
def _template_fnv(version: str, encoded: bytes) -> int:
    return fnv1a_32(spew_template(msgspec.json.decode(encoded), version).encode())
