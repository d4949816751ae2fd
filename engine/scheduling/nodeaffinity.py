"""Does a pod's nodeSelector and required node affinity admit a node?

Mirrors `k8s.io/component-helpers/scheduling/corev1/nodeaffinity` and the node-name helpers
of `pkg/controller/daemon/util`. A malformed term never matches; nothing here raises.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.api.objects import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodSpec,
    replace,
)
from engine.api.selectors import Operator, Requirement, SelectorError, requirement

OBJECT_NAME_FIELD = "metadata.name"  # metav1.ObjectNameField

_NODE_SELECTOR_OPS = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
    "Gt": Operator.GREATER_THAN,
    "Lt": Operator.LESS_THAN,
}


def node_selector_matches(node_selector: Mapping[str, str], node: Node) -> bool:
    """spec.nodeSelector: every key present with an equal value; mirrors SelectorFromSet."""
    labels = node.metadata.labels
    return all(labels.get(k) == v for k, v in node_selector.items())


def _expression(req: NodeSelectorRequirement) -> Requirement:
    # mirrors nodeSelectorRequirementsAsSelector: labels.NewRequirement plus Gt and Lt
    op = _NODE_SELECTOR_OPS.get(req.operator)
    if op is None:
        raise SelectorError(f"{req.operator!r} is not a valid node selector operator")
    return requirement(req.key, op, req.values)


def _term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    # mirrors newNodeSelectorTerm + nodeSelectorTerm.match; a parse error makes the term
    # fail, which LazyErrorNodeSelector reports only if no other term matches
    try:
        expressions = [_expression(r) for r in term.match_expressions]
    except SelectorError:
        return False
    for field in term.match_fields:
        # mirrors nodeSelectorRequirementsAsFieldSelector; only metadata.name is a valid key
        # (ValidateNodeFieldSelectorRequirement)
        if (
            field.key != OBJECT_NAME_FIELD
            or field.operator not in ("In", "NotIn")
            or len(field.values) != 1
        ):
            return False
    labels = node.metadata.labels
    if not all(r.matches(labels) for r in expressions):
        return False
    # upstream skips matchFields for a node without a name (its fields set is empty)
    name = node.metadata.name
    return not name or all((name == f.values[0]) == (f.operator == "In") for f in term.match_fields)


def node_selector_terms_match(required: NodeSelector, node: Node) -> bool:
    """Terms are ORed; an empty term or an empty list matches nothing.

    Mirrors nodeaffinity.NewLazyErrorNodeSelector(required).Match(node) with errors ignored.
    """
    return any(
        _term_matches(term, node)
        for term in required.node_selector_terms
        if term.match_expressions or term.match_fields  # isEmptyNodeSelectorTerm: skipped
    )


def _required(spec: PodSpec) -> NodeSelector | None:
    affinity = spec.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    return affinity.node_affinity.required_during_scheduling_ignored_during_execution


def required_node_affinity_matches(spec: PodSpec, node: Node) -> bool:
    """nodeSelector AND required node affinity; mirrors GetRequiredNodeAffinity(pod).Match."""
    if not node_selector_matches(spec.node_selector, node):
        return False
    required = _required(spec)
    return required is None or node_selector_terms_match(required, node)


def pod_target_node(spec: PodSpec) -> str:
    """The node a daemon pod is for, or ""; mirrors daemon util GetTargetNodeName."""
    if spec.node_name:
        return spec.node_name
    required = _required(spec)
    for term in required.node_selector_terms if required is not None else ():
        for field in term.match_fields:
            if field.key == OBJECT_NAME_FIELD and field.operator == "In":
                # the first such requirement decides; several values is an error upstream
                return field.values[0] if len(field.values) == 1 else ""
    return ""


def with_node_name_affinity(spec: PodSpec, node_name: str) -> PodSpec:
    """Pin a pod to one node by required node affinity, keeping the rest of its affinity.

    Mirrors daemon util ReplaceDaemonSetPodNodeNameNodeAffinity: the required terms are
    replaced by one `metadata.name In [node_name]` matchFields term.
    """
    term = NodeSelectorTerm(
        match_fields=[
            NodeSelectorRequirement(key=OBJECT_NAME_FIELD, operator="In", values=[node_name])
        ]
    )
    affinity = spec.affinity or Affinity()
    node_affinity = affinity.node_affinity or NodeAffinity()
    required = node_affinity.required_during_scheduling_ignored_during_execution or NodeSelector()
    node_affinity = replace(
        node_affinity,
        required_during_scheduling_ignored_during_execution=replace(
            required, node_selector_terms=[term]
        ),
    )
    return replace(spec, affinity=replace(affinity, node_affinity=node_affinity))
