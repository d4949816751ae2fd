"""Which kinds a history may name: Kubernetes' built-in kinds, by API group, and the rule for
custom resources.

The engine models a few kinds (engine.api.objects.KINDS); every other kind a real cluster serves
is kept as an opaque object (its metadata typed, the rest as it came). Which kinds are "real" is
decided here, so a typo still gets a clear error:

- a kind of a built-in API group (the groups `kubectl api-resources` lists on a Kubernetes 1.33
  cluster without add-ons, plus the versions they were served at before, so that captures of
  older clusters read) is known with its plural, short names and scope;
- an apiVersion whose group has a dot and is not a built-in group is a custom resource (upstream
  requires a CRD's group to hold a dot): any kind that is a valid CRD kind name is accepted;
- anything else (a kind unknown in a built-in group, a dotless group no one serves) is refused,
  with the closest known kind as a suggestion (`Deploymnet` -> `Deployment`).

This module is data and pure functions: it imports nothing of the engine.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class BuiltinKind:
    kind: str
    group: str  # "" for the core group
    versions: tuple[str, ...]  # the preferred (current) version first
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.versions[0]}" if self.group else self.versions[0]


def _k(kind: str, group: str, versions: str, plural: str, namespaced: bool, *short: str) -> BuiltinKind:
    return BuiltinKind(kind, group, tuple(versions.split()), plural, namespaced, short)


# `kubectl api-resources` of a 1.33 cluster (kind, group, versions newest first, plural, scope,
# short names); older served versions kept so captures of older clusters read
BUILTIN: tuple[BuiltinKind, ...] = (
    _k("Binding", "", "v1", "bindings", True),
    _k("ComponentStatus", "", "v1", "componentstatuses", False, "cs"),
    _k("ConfigMap", "", "v1", "configmaps", True, "cm"),
    _k("Endpoints", "", "v1", "endpoints", True, "ep"),
    _k("Event", "", "v1", "events", True, "ev"),
    _k("LimitRange", "", "v1", "limitranges", True, "limits"),
    _k("Namespace", "", "v1", "namespaces", False, "ns"),
    _k("Node", "", "v1", "nodes", False, "no"),
    _k("PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", True, "pvc"),
    _k("PersistentVolume", "", "v1", "persistentvolumes", False, "pv"),
    _k("Pod", "", "v1", "pods", True, "po"),
    _k("PodTemplate", "", "v1", "podtemplates", True),
    _k("ReplicationController", "", "v1", "replicationcontrollers", True, "rc"),
    _k("ResourceQuota", "", "v1", "resourcequotas", True, "quota"),
    _k("Secret", "", "v1", "secrets", True),
    _k("ServiceAccount", "", "v1", "serviceaccounts", True, "sa"),
    _k("Service", "", "v1", "services", True, "svc"),
    _k("MutatingWebhookConfiguration", "admissionregistration.k8s.io", "v1 v1beta1", "mutatingwebhookconfigurations", False),
    _k("ValidatingWebhookConfiguration", "admissionregistration.k8s.io", "v1 v1beta1", "validatingwebhookconfigurations", False),
    _k("ValidatingAdmissionPolicy", "admissionregistration.k8s.io", "v1 v1beta1 v1alpha1", "validatingadmissionpolicies", False),
    _k("ValidatingAdmissionPolicyBinding", "admissionregistration.k8s.io", "v1 v1beta1 v1alpha1", "validatingadmissionpolicybindings", False),
    _k("MutatingAdmissionPolicy", "admissionregistration.k8s.io", "v1beta1 v1alpha1", "mutatingadmissionpolicies", False),
    _k("MutatingAdmissionPolicyBinding", "admissionregistration.k8s.io", "v1beta1 v1alpha1", "mutatingadmissionpolicybindings", False),
    _k("CustomResourceDefinition", "apiextensions.k8s.io", "v1 v1beta1", "customresourcedefinitions", False, "crd", "crds"),
    _k("APIService", "apiregistration.k8s.io", "v1 v1beta1", "apiservices", False),
    _k("ControllerRevision", "apps", "v1 v1beta2 v1beta1", "controllerrevisions", True),
    _k("DaemonSet", "apps", "v1 v1beta2", "daemonsets", True, "ds"),
    _k("Deployment", "apps", "v1 v1beta2 v1beta1", "deployments", True, "deploy"),
    _k("ReplicaSet", "apps", "v1 v1beta2", "replicasets", True, "rs"),
    _k("StatefulSet", "apps", "v1 v1beta2 v1beta1", "statefulsets", True, "sts"),
    _k("SelfSubjectReview", "authentication.k8s.io", "v1 v1beta1 v1alpha1", "selfsubjectreviews", False),
    _k("TokenReview", "authentication.k8s.io", "v1 v1beta1", "tokenreviews", False),
    _k("LocalSubjectAccessReview", "authorization.k8s.io", "v1 v1beta1", "localsubjectaccessreviews", True),
    _k("SelfSubjectAccessReview", "authorization.k8s.io", "v1 v1beta1", "selfsubjectaccessreviews", False),
    _k("SelfSubjectRulesReview", "authorization.k8s.io", "v1 v1beta1", "selfsubjectrulesreviews", False),
    _k("SubjectAccessReview", "authorization.k8s.io", "v1 v1beta1", "subjectaccessreviews", False),
    _k("HorizontalPodAutoscaler", "autoscaling", "v2 v1 v2beta2 v2beta1", "horizontalpodautoscalers", True, "hpa"),
    _k("CronJob", "batch", "v1 v1beta1", "cronjobs", True, "cj"),
    _k("Job", "batch", "v1", "jobs", True),
    _k("CertificateSigningRequest", "certificates.k8s.io", "v1 v1beta1", "certificatesigningrequests", False, "csr"),
    _k("ClusterTrustBundle", "certificates.k8s.io", "v1beta1 v1alpha1", "clustertrustbundles", False),
    _k("Lease", "coordination.k8s.io", "v1 v1beta1", "leases", True),
    _k("LeaseCandidate", "coordination.k8s.io", "v1beta1 v1alpha2", "leasecandidates", True),
    _k("EndpointSlice", "discovery.k8s.io", "v1 v1beta1", "endpointslices", True),
    _k("Event", "events.k8s.io", "v1 v1beta1", "events", True, "ev"),
    _k("Ingress", "extensions", "v1beta1", "ingresses", True, "ing"),
    _k("FlowSchema", "flowcontrol.apiserver.k8s.io", "v1 v1beta3 v1beta2 v1beta1", "flowschemas", False),
    _k("PriorityLevelConfiguration", "flowcontrol.apiserver.k8s.io", "v1 v1beta3 v1beta2 v1beta1", "prioritylevelconfigurations", False),
    _k("IngressClass", "networking.k8s.io", "v1 v1beta1", "ingressclasses", False),
    _k("Ingress", "networking.k8s.io", "v1 v1beta1", "ingresses", True, "ing"),
    _k("IPAddress", "networking.k8s.io", "v1 v1beta1", "ipaddresses", False, "ip"),
    _k("NetworkPolicy", "networking.k8s.io", "v1", "networkpolicies", True, "netpol"),
    _k("ServiceCIDR", "networking.k8s.io", "v1 v1beta1", "servicecidrs", False),
    _k("RuntimeClass", "node.k8s.io", "v1 v1beta1", "runtimeclasses", False),
    _k("PodDisruptionBudget", "policy", "v1 v1beta1", "poddisruptionbudgets", True, "pdb"),
    _k("PodSecurityPolicy", "policy", "v1beta1", "podsecuritypolicies", False, "psp"),
    _k("ClusterRoleBinding", "rbac.authorization.k8s.io", "v1 v1beta1", "clusterrolebindings", False),
    _k("ClusterRole", "rbac.authorization.k8s.io", "v1 v1beta1", "clusterroles", False),
    _k("RoleBinding", "rbac.authorization.k8s.io", "v1 v1beta1", "rolebindings", True),
    _k("Role", "rbac.authorization.k8s.io", "v1 v1beta1", "roles", True),
    _k("DeviceClass", "resource.k8s.io", "v1 v1beta2 v1beta1", "deviceclasses", False),
    _k("ResourceClaim", "resource.k8s.io", "v1 v1beta2 v1beta1", "resourceclaims", True),
    _k("ResourceClaimTemplate", "resource.k8s.io", "v1 v1beta2 v1beta1", "resourceclaimtemplates", True),
    _k("ResourceSlice", "resource.k8s.io", "v1 v1beta2 v1beta1", "resourceslices", False),
    _k("PriorityClass", "scheduling.k8s.io", "v1 v1beta1", "priorityclasses", False, "pc"),
    _k("CSIDriver", "storage.k8s.io", "v1 v1beta1", "csidrivers", False),
    _k("CSINode", "storage.k8s.io", "v1 v1beta1", "csinodes", False),
    _k("CSIStorageCapacity", "storage.k8s.io", "v1 v1beta1", "csistoragecapacities", True),
    _k("StorageClass", "storage.k8s.io", "v1 v1beta1", "storageclasses", False, "sc"),
    _k("VolumeAttachment", "storage.k8s.io", "v1 v1beta1", "volumeattachments", False),
    _k("VolumeAttributesClass", "storage.k8s.io", "v1 v1beta1", "volumeattributesclasses", False, "vac"),
    _k("StorageVersionMigration", "storagemigration.k8s.io", "v1alpha1", "storageversionmigrations", False),
)

BUILTIN_GROUPS = frozenset(k.group for k in BUILTIN)
# kind -> its entry in the preferred group (Event and Ingress are served by two groups)
_PREFERRED_GROUP = {"Event": "", "Ingress": "networking.k8s.io"}
BY_KIND: dict[str, BuiltinKind] = {}
for _entry in BUILTIN:
    if _entry.kind not in BY_KIND or _PREFERRED_GROUP.get(_entry.kind) == _entry.group:
        BY_KIND[_entry.kind] = _entry
BY_GROUP_KIND: dict[tuple[str, str], BuiltinKind] = {(k.group, k.kind): k for k in BUILTIN}
CLUSTER_SCOPED_BUILTIN = frozenset(k.kind for k in BUILTIN if not k.namespaced)

# ValidateCustomResourceDefinitionNames: the lower-cased kind is a DNS-1035 label
_CUSTOM_KIND = re.compile(r"^[A-Za-z]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?$")


class UnknownKind(ValueError):
    """A kind no one could mean; `field` is `kind` or `apiVersion`."""

    def __init__(self, message: str, field: str = "kind") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


def split_api_version(api_version: str) -> tuple[str, str]:
    """`apps/v1` -> (`apps`, `v1`); `v1` -> (``, `v1`)."""
    group, _, version = api_version.rpartition("/")
    return group, version


def is_custom_group(group: str) -> bool:
    return "." in group and group not in BUILTIN_GROUPS


def _suggest(kind: str, candidates: list[str]) -> str:
    lowered = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(kind.lower(), list(lowered), n=1, cutoff=0.75)
    return f"; did you mean {lowered[close[0]]!r}?" if close else ""


def check(api_version: str, kind: str) -> BuiltinKind | None:
    """The built-in kind `apiVersion`/`kind` names, None for a custom resource; UnknownKind for
    anything no one could mean."""
    group, version = split_api_version(api_version)
    if not version:
        raise UnknownKind(f"apiVersion {api_version!r} is not GROUP/VERSION or VERSION", "apiVersion")
    if group in BUILTIN_GROUPS:
        entry = BY_GROUP_KIND.get((group, kind))
        if entry is None:
            in_group = [k.kind for k in BUILTIN if k.group == group]
            hint = _suggest(kind, in_group) or _suggest(kind, list(BY_KIND))
            where = f"API group {group!r}" if group else "the core API group (apiVersion v1)"
            raise UnknownKind(f"no kind {kind!r} is served by {where}{hint}")
        if version not in entry.versions:
            raise UnknownKind(f"{kind} is served as apiVersion {entry.api_version!r}, not {api_version!r}", "apiVersion")
        return entry
    if is_custom_group(group):
        if not _CUSTOM_KIND.match(kind):
            raise UnknownKind(f"{kind!r} is not a valid kind for a custom resource (a letter, then letters, digits and '-', at most 63)")
        return None
    entry = BY_KIND.get(kind)
    if entry is not None:
        raise UnknownKind(f"{kind} is served as apiVersion {entry.api_version!r}, not {api_version!r}", "apiVersion")
    raise UnknownKind(
        f"no API group {group!r} is known: built-in kinds are served by Kubernetes' own groups, and a custom resource's group holds a dot (`example.com/v1`)",
        "apiVersion",
    )


def without_api_version(kind: str) -> BuiltinKind:
    """The built-in kind a manifest without apiVersion means, or UnknownKind with a suggestion."""
    entry = BY_KIND.get(kind)
    if entry is None:
        raise UnknownKind(f"no kind {kind!r} is known without an apiVersion (a custom resource needs its own, `example.com/v1`){_suggest(kind, list(BY_KIND))}")
    return entry
