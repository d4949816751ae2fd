"""Deterministic identities: uids are uuid5 of the object key, generated names hash stable inputs."""

from __future__ import annotations

import hashlib
import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.api.objects import Pod

KREPLAY_NAMESPACE = uuid.UUID("6f1c5e0a-3d6b-5b8e-9a53-2f0d9c6e7a41")

# Kubernetes' rand.String alphabet (no vowels, no 0/1/3, so no words or look-alikes)
ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


_NAMESPACE_BYTES = KREPLAY_NAMESPACE.bytes


def _uuid5_bytes(name: str) -> bytes:
    """`uuid.uuid5(KREPLAY_NAMESPACE, name).bytes` without building the UUID (its int arithmetic
    and checks cost more than the SHA-1): the first 16 bytes of the digest with the version
    (5) and the RFC 4122 variant bits set, as `uuid.UUID(bytes=..., version=5)` sets them."""
    digest = bytearray(hashlib.sha1(_NAMESPACE_BYTES + name.encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50
    digest[8] = (digest[8] & 0x3F) | 0x80
    return bytes(digest)


def object_uid(kind: str, namespace: str, name: str, position: int) -> str:
    """A uid per incarnation: a pod recreated under the same name gets a new one, as upstream.
    The text of `uuid.uuid5(KREPLAY_NAMESPACE, "<kind>/<namespace>/<name>@<position>")`."""
    h = _uuid5_bytes(f"{kind}/{namespace}/{name}@{position}").hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def issued_by_replay(uid: str) -> bool:
    """Whether a uid is one a replay gave (a version-5 UUID; Kubernetes' own are version 4), so
    a reference holding it means that incarnation and no other."""
    try:
        return uuid.UUID(uid).version == 5
    except ValueError:
        return False


# stream ids already computed: an object's events come close together (a pod's create, bind and
# status changes), and every appended event needs its stream's; emptied when full, so memory
# stays bounded however many objects a history names
_STREAM_IDS: dict[tuple[str, str, str], uuid.UUID] = {}
_STREAM_IDS_MAX = 65_536


def stream_id(kind: str, namespace: str, name: str) -> uuid.UUID:
    """The event-store stream of one object key, across incarnations:
    `uuid.uuid5(KREPLAY_NAMESPACE, "<kind>/<namespace>/<name>")`."""
    key = (kind, namespace, name)
    found = _STREAM_IDS.get(key)
    if found is None:
        if len(_STREAM_IDS) >= _STREAM_IDS_MAX:
            _STREAM_IDS.clear()
        found = _STREAM_IDS[key] = uuid.UUID(bytes=_uuid5_bytes(f"{kind}/{namespace}/{name}"))
    return found


def pod_key(pod: Pod) -> str:
    """A namespaced object's queue key, as cache.MetaNamespaceKeyFunc writes it."""
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def split_key(key: str) -> tuple[str, str]:
    ns, _, name = key.partition("/")
    return ns, name


CLUSTER_STREAM = uuid.uuid5(KREPLAY_NAMESPACE, "cluster")


def generated_suffix(generate_name: str, namespace: str, position: int, attempt: int = 0) -> str:
    """The 5-character suffix for `generateName`, from stable inputs instead of a random source."""
    digest = hashlib.sha256(f"{namespace}/{generate_name}@{position}#{attempt}".encode()).digest()
    return "".join(ALPHABET[b % len(ALPHABET)] for b in digest[:5])
