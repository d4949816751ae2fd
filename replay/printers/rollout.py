"""`rollout history` and `rollout status` with kubectl's wording.

Status messages mirror kubectl's `DaemonSetStatusViewer`, `StatefulSetStatusViewer` and
`DeploymentStatusViewer` (polymorphichelpers/rollout_status.go); history mirrors the
`HistoryViewer`s (polymorphichelpers/history.go): revisions come from the ControllerRevisions
(DaemonSet, StatefulSet) or ReplicaSets (Deployment) the workload controls.
"""

from __future__ import annotations

from engine.api.objects import (
    DaemonSet,
    Deployment,
    KubeObject,
    PodTemplateSpec,
    StatefulSet,
    kind_of,
    replace,
)
from engine.api.state import Cluster
from engine.controllers.statefulset import blocking_pod
from engine.rollback import revisions, template_of
from replay.escape import line, terminal
from replay.printers.sections import PrefixWriter, describe_pod_template
from replay.printers.tabwriter import tabwrite

CHANGE_CAUSE = "kubernetes.io/change-cause"
_GROUP = {"DaemonSet": "daemonset.apps", "StatefulSet": "statefulset.apps", "Deployment": "deployment.apps"}


class RolloutError(Exception):
    pass


def describe_template(template: PodTemplateSpec) -> str:
    """The `Pod Template:` block kubectl prints for one revision: describe's DescribePodTemplate
    written straight to the output, without a tabwriter (printTemplate in history.go), so the
    columns are separated by tabs."""
    w = PrefixWriter()
    describe_pod_template(w, template)
    return terminal(w.text())


def _change_cause(obj: KubeObject) -> str:
    return obj.metadata.annotations.get(CHANGE_CAUSE, "")


def history(cluster: Cluster, workload: KubeObject, revision: int = 0) -> str:
    """`rollout history` (the revisions and their change-causes) or, with `revision`, that
    revision's whole pod template, as kubectl's HistoryViewers print them."""
    noun = f"{_GROUP[kind_of(workload)]}/{workload.metadata.name}"
    history_ = revisions(cluster, workload)
    if revision:
        found = [obj for number, obj in history_ if number == revision]
        if not found:
            raise RolloutError("unable to find the specified revision")
        # a ReplicaSet's template as it is, pod-template-hash label included, as kubectl shows it
        template = found[-1].spec.template if isinstance(workload, Deployment) else template_of(found[-1])  # type: ignore[attr-defined]
        if isinstance(workload, Deployment) and _change_cause(found[-1]):
            # the deployment viewer copies the ReplicaSet's change-cause into the template
            annotations = {**template.metadata.annotations, CHANGE_CAUSE: _change_cause(found[-1])}
            template = replace(template, metadata=replace(template.metadata, annotations=annotations))
        return f"{noun} with revision #{revision}\n{describe_template(template)}"
    if not history_:
        return "No rollout history found."
    rows = [("REVISION", "CHANGE-CAUSE")] + [(str(n), line(_change_cause(obj)) or "<none>") for n, obj in history_]
    text = "".join(f"{a}\t{b}\n" for a, b in rows)
    return noun + " \n" + tabwrite(text, minwidth=0, padding=2).rstrip("\n")


def status(cluster: Cluster, workload: KubeObject) -> tuple[str, bool]:
    """kubectl's one-shot (`--watch=false`) status message and whether the rollout is done."""
    if isinstance(workload, DaemonSet):
        return _daemonset_status(workload)
    if isinstance(workload, StatefulSet):
        text, done = _statefulset_status(workload)
        stuck = blocker(cluster, workload)
        return (f"{text}\n{stuck}" if stuck and not done else text), done
    if isinstance(workload, Deployment):
        return _deployment_status(workload)
    raise RolloutError(f"no status viewer for {kind_of(workload)}")


def blocker(cluster: Cluster, workload: KubeObject) -> str:
    """A line saying which pod the controller is waiting for, when it is waiting for one."""
    if isinstance(workload, StatefulSet) and cluster.now is not None:
        found = blocking_pod(workload, cluster, cluster.now)
        if found is not None:
            pod, why = found
            return f"blocked on pod {pod}: {why}"
    return ""


def _daemonset_status(ds: DaemonSet) -> tuple[str, bool]:
    name, st = ds.metadata.name, ds.status
    if ds.spec.update_strategy.type != "RollingUpdate":
        return "rollout status is only available for RollingUpdate strategy type", False
    if ds.metadata.generation <= st.observed_generation:
        if st.updated_number_scheduled < st.desired_number_scheduled:
            return (
                f'Waiting for daemon set "{name}" rollout to finish: {st.updated_number_scheduled} out of '
                f"{st.desired_number_scheduled} new pods have been updated...",
                False,
            )
        if st.number_available < st.desired_number_scheduled:
            return (
                f'Waiting for daemon set "{name}" rollout to finish: {st.number_available} of '
                f"{st.desired_number_scheduled} updated pods are available...",
                False,
            )
        return f'daemon set "{name}" successfully rolled out', True
    return "Waiting for daemon set spec update to be observed...", False


def _statefulset_status(sts: StatefulSet) -> tuple[str, bool]:
    st, spec = sts.status, sts.spec
    strategy = spec.update_strategy
    if strategy.type != "RollingUpdate":
        return "rollout status is only available for RollingUpdate strategy type", False
    if st.observed_generation == 0 or sts.metadata.generation > st.observed_generation:
        return "Waiting for statefulset spec update to be observed...", False
    replicas = spec.replicas if spec.replicas is not None else 1
    if st.ready_replicas < replicas:
        return f"Waiting for {replicas - st.ready_replicas} pods to be ready...", False
    if strategy.rolling_update is not None and strategy.rolling_update.partition is not None:
        partition = strategy.rolling_update.partition
        if st.updated_replicas < replicas - partition:
            return (
                f"Waiting for partitioned roll out to finish: {st.updated_replicas} out of "
                f"{replicas - partition} new pods have been updated...",
                False,
            )
        return f"partitioned roll out complete: {st.updated_replicas} new pods have been updated...", True
    if st.update_revision != st.current_revision:
        return (
            f"waiting for statefulset rolling update to complete {st.updated_replicas} pods at "
            f"revision {st.update_revision}...",
            False,
        )
    return (
        f"statefulset rolling update complete {st.current_replicas} pods at revision {st.current_revision}...",
        True,
    )


def _deployment_status(d: Deployment) -> tuple[str, bool]:
    name, st = d.metadata.name, d.status
    if d.metadata.generation <= st.observed_generation:
        progressing = next((c for c in st.conditions if c.type == "Progressing"), None)
        if progressing is not None and progressing.reason == "ProgressDeadlineExceeded":
            return f'error: deployment "{name}" exceeded its progress deadline', False
        replicas = d.spec.replicas if d.spec.replicas is not None else 1
        if st.updated_replicas < replicas:
            return (
                f'Waiting for deployment "{name}" rollout to finish: {st.updated_replicas} out of '
                f"{replicas} new replicas have been updated...",
                False,
            )
        if st.replicas > st.updated_replicas:
            return (
                f'Waiting for deployment "{name}" rollout to finish: {st.replicas - st.updated_replicas} '
                "old replicas are pending termination...",
                False,
            )
        if st.available_replicas < st.updated_replicas:
            return (
                f'Waiting for deployment "{name}" rollout to finish: {st.available_replicas} of '
                f"{st.updated_replicas} updated replicas are available...",
                False,
            )
        return f'deployment "{name}" successfully rolled out', True
    return "Waiting for deployment spec update to be observed...", False
