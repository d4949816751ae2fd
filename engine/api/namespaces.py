"""What a Namespace (kept as an opaque object) holds beyond its metadata: `spec.finalizers` and
`status` (phase and conditions), read and written by the API server and the namespace
controller alike. Imports only the API objects."""

from __future__ import annotations

from typing import Any

from engine.api.objects import KubeObject, OpaqueObject

# the finalizer namespaceStrategy.PrepareForCreate puts in every Namespace's spec.finalizers; the
# namespace controller removes it once the namespace is empty (FinalizerKubernetes)
KUBERNETES_FINALIZER = "kubernetes"
# the namespaces lifecycle admission never lets go (its immortalNamespaces)
IMMORTAL = ("default", "kube-public", "kube-system")


def is_namespace(obj: KubeObject | None) -> bool:
    """A core/v1 Namespace."""
    return isinstance(obj, OpaqueObject) and obj.kind == "Namespace" and obj.api_version == "v1"


def spec_of(ns: OpaqueObject) -> dict[str, Any]:
    spec = ns.unmodeled.get("spec")
    return spec if isinstance(spec, dict) else {}


def finalizers(ns: OpaqueObject) -> list[str]:
    """A Namespace's spec.finalizers (`kubernetes` until the namespace controller is done)."""
    found = spec_of(ns).get("finalizers")
    return [f for f in found if isinstance(f, str)] if isinstance(found, list) else []


def status_of(ns: OpaqueObject) -> dict[str, Any]:
    status = ns.unmodeled.get("status")
    return status if isinstance(status, dict) else {}


def terminating(ns: KubeObject) -> bool:
    """A Namespace whose phase is Terminating (the API server's first delete set it)."""
    return isinstance(ns, OpaqueObject) and status_of(ns).get("phase") == "Terminating"


def finalized(obj: KubeObject) -> bool:
    """Nothing holds `obj` once it is being deleted: no metadata finalizer, and for a Namespace
    no spec.finalizers either (mirrors ShouldDeleteNamespaceDuringUpdate)."""
    if obj.metadata.finalizers:
        return False
    return not (isinstance(obj, OpaqueObject) and is_namespace(obj) and finalizers(obj))
