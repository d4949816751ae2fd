"""`kreplay why TYPE NAME`: the decisions that created, changed or deleted an object, and what
the controller is waiting for now."""

from __future__ import annotations

import argparse

from replay.cli.common import Parents, Subparsers

DESCRIPTION = """Explain the decisions that created, changed or deleted an object: every recorded step about it, oldest first, who took it, the reason code, the numbers behind it and the event that caused it; then, for a StatefulSet rollout that waits, the pod it waits for.

 The object need not exist any more: a pod a rollout replaced still has its story."""

EXAMPLES = """  # Why is this pod where it is, or why did it go?
  kreplay why pod/web-app-845f4c874c-sngkn

  # TYPE NAME works too, with flags anywhere
  kreplay why pod fluentd-elasticsearch-abcde -n kube-system

  # What the StatefulSet controller did with nginx-web, and what it waits for
  kreplay why sts nginx-web"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("why", parents=[parents.store, parents.namespace], help="Explain the decisions that created, changed or deleted an object", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay why (TYPE NAME | TYPE/NAME) [options]")
    p.add_argument("target", nargs="+", metavar="TYPE/NAME")
    p.add_argument("--reason", action="append", default=[], metavar="CODE[,CODE...]", help="Only the steps with these reason codes (e.g. rolling-update,scale-down)")
    p.add_argument("--tail", type=int, default=0, metavar="N", help="Only the last N steps")
    p.add_argument("-o", "--output", default="", choices=["", "json"], help="Output format: text (default) or json")
    p.set_defaults(func=cmd_why)


def cmd_why(args: argparse.Namespace) -> int:
    from engine.api.objects import CLUSTER_SCOPED
    from projections import audit_trail
    from replay.cli import resources
    from replay.cli.common import UsageError, UserError, iso, load_cluster, open_store, out
    from replay.escape import line
    from replay.printers import rollout
    from replay.why import CONTROLLER_OF, dependents, explain, step_json, steps

    selection = resources.parse(resources.Request(args=args.target), verb="why")
    pairs = selection.tuples or [(k, n) for k in selection.types for n in selection.names]
    if len(pairs) != 1:
        raise UsageError(f"expected one object, as TYPE/NAME or TYPE NAME (e.g. ds/fluentd-elasticsearch), got {' '.join(args.target)!r}", verb="why")
    kind, name = pairs[0]
    namespace = "" if kind in CLUSTER_SCOPED else args.namespace
    with open_store(args) as store:
        # only the object's own stream, and a StatefulSet's pods for its blocker
        if kind == "StatefulSet":
            cluster = _statefulset_view(store, namespace, name) or load_cluster(store)
        else:
            from projections import cluster_state

            cluster = cluster_state.objects(store, [(kind, namespace, name)])
        if args.tail < 0:
            raise UsageError("--tail: expected a non-negative number of steps", verb="why")
        reasons = [r for text in args.reason for r in text.split(",") if r]
        trail = audit_trail.load(store)
        extra = []
        if kind in CONTROLLER_OF:
            # a workload's story includes its controller's decisions on its dependents (a
            # Deployment's ScalingReplicaSet steps are recorded on its ReplicaSets)
            # (through the store's index: only the streams of objects that ever named it as
            # their owner; the whole log on a store written before the index existed)
            candidates = store.dependents(kind, namespace, name)
            events = store.read() if candidates is None else (e for stream in candidates for e in stream)
            for dep in sorted(dependents(events, kind, namespace, name)):
                extra.extend(trail.about(*dep))
        fold = kind in CONTROLLER_OF
        text = explain(trail, cluster, kind, namespace, name, extra=extra, reasons=reasons, tail=args.tail, fold=fold)
        if text is None:
            raise UserError(f"error: nothing was ever recorded about {kind} {line(namespace) + '/' if namespace else ''}{line(name)}")
        workload = cluster.get(kind, namespace, name)
        stuck = rollout.blocker(cluster, workload) if workload is not None else ""
        if args.output == "json":
            import json

            chosen = steps(trail.about(kind, namespace, name), extra, kind=kind, reasons=reasons, tail=args.tail, fold=fold)
            doc = {
                "kind": kind,
                "namespace": namespace,
                "name": name,
                "exists": workload is not None,
                "steps": [step_json(s) for s in chosen],
                "waitingFor": stuck,
            }
            out(json.dumps(doc, indent=2))
            return 0
        if stuck:
            text += f"\n\nnow ({iso(cluster.now)}): {line(stuck)}"
        out(text)
    return 0


def _statefulset_view(store: object, namespace: str, name: str) -> object:
    """A StatefulSet, the pods that ever named it as owner and the pods named for its ordinals
    (`blocking_pod` reads those), each from its stream through the store's index (None: a store
    without the index)."""
    from engine import events as ev
    from engine.api.objects import StatefulSet
    from engine.controllers.statefulset import pod_name, replicas_of, start_ordinal
    from projections import cluster_state

    key = ("StatefulSet", namespace, name)
    stream = store.stream(*key)  # type: ignore[attr-defined]
    # its last state (its failed syncs and refused requests come after it in its stream)
    last = next((e for e in reversed(stream) if isinstance(e, ev.ObjectEvent | ev.ObjectDeleted)), None)
    sts = last.object if isinstance(last, ev.ObjectEvent) else None
    pods = []
    if isinstance(sts, StatefulSet):
        start = start_ordinal(sts)
        pods = [("Pod", namespace, pod_name(sts, o)) for o in range(start, start + replicas_of(sts))]
    return cluster_state.with_dependents(store, [key], None, ("Pod",), also=pods)  # type: ignore[arg-type]
