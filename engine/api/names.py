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


def object_uid(kind: str, namespace: str, name: str, position: int) -> str:
    """A uid per incarnation: a pod recreated under the same name gets a new one, as upstream."""
    return str(uuid.uuid5(KREPLAY_NAMESPACE, f"{kind}/{namespace}/{name}@{position}"))


def issued_by_replay(uid: str) -> bool:
    """Whether a uid is one a replay gave (a version-5 UUID; Kubernetes' own are version 4), so
    a reference holding it means that incarnation and no other."""
    try:
        return uuid.UUID(uid).version == 5
    except ValueError:
        return False


def stream_id(kind: str, namespace: str, name: str) -> uuid.UUID:
    """The event-store stream of one object key, across incarnations."""
    return uuid.uuid5(KREPLAY_NAMESPACE, f"{kind}/{namespace}/{name}")


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
