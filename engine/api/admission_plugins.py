"""Mutating admission plugins kube-apiserver runs on pod writes, after defaulting.

- `default_toleration_seconds` mirrors plugin/pkg/admission/defaulttolerationseconds: every pod
  created or updated gets `node.kubernetes.io/not-ready:NoExecute` and
  `node.kubernetes.io/unreachable:NoExecute` tolerations (operator Exists, 300 s) unless it
  already tolerates that taint's NoExecute effect (a toleration with that key or an empty key,
  and effect NoExecute or empty). With the node lifecycle controller's taints this is what
  evicts a Deployment's pods five minutes after their node stops being Ready.
"""

from __future__ import annotations

from engine.api.objects import Pod, Toleration, replace

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300  # --default-not-ready-toleration-seconds / -unreachable-


def _tolerates_no_execute(toleration: Toleration, key: str) -> bool:
    return toleration.key in (key, "") and toleration.effect in ("NoExecute", "")


def default_toleration_seconds(pod: Pod, seconds: int = DEFAULT_TOLERATION_SECONDS) -> Pod:
    """The pod with the default NoExecute tolerations added; mirrors Plugin.Admit."""
    tolerations = pod.spec.tolerations
    added = [
        Toleration(key=key, operator="Exists", effect="NoExecute", toleration_seconds=seconds)
        for key in (NOT_READY_TAINT, UNREACHABLE_TAINT)
        if not any(_tolerates_no_execute(t, key) for t in tolerations)
    ]
    if not added:
        return pod
    return replace(pod, spec=replace(pod.spec, tolerations=[*tolerations, *added]))
