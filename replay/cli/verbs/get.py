"""`kreplay get`: kubectl's tables, `-o wide|json|yaml|name|jsonpath|custom-columns`, `-l`,
`-L`, `-A`, `--sort-by`, `--no-headers`, over every argument form the resource builder takes."""

from __future__ import annotations

import argparse
import sys

from replay.cli.common import (
    Parents,
    Subparsers,
    UsageError,
    add_all_namespaces,
    add_bool,
    add_filenames,
    add_selector,
    add_time_travel,
    write,
)
from replay.cli.output import add_output_flags

DESCRIPTION = """Display one or many resources.

 Prints a table of the most important information about the specified resources. You can filter the list using a label selector and the --selector flag. If the desired resource type is namespaced you will only see results in the current namespace if you don't specify any namespace.

 Kinds the engine models (pods, nodes, daemonsets, statefulsets, deployments, replicasets, controllerrevisions, persistentvolumeclaims, services) come from the replayed cluster; events, namespaces and endpoints are derived from it and its log, as a real cluster would show them."""

EXAMPLES = """  # List all pods in ps output format
  kreplay get pods

  # List all pods in ps output format with more information (such as node name)
  kreplay get pods -o wide

  # List one daemon set in the kube-system namespace (flags may come anywhere)
  kreplay get ds -n kube-system fluentd-elasticsearch

  # List a single pod in JSON output format
  kreplay get -o json pod web-app-65c67c478c-5hvmf

  # List resource information in custom columns
  kreplay get pods -l app=web-app -o custom-columns='NAME:.metadata.name,IMAGE:.spec.containers[*].image,STATUS:.status.phase'

  # List the names of pods, one per line, sorted by creation time
  kreplay get pods -o jsonpath='{range .items[*]}{.metadata.name}{"\\n"}{end}' --sort-by=.metadata.creationTimestamp

  # List all daemon sets and stateful sets together, and one of each by TYPE/NAME
  kreplay get ds,sts -A
  kreplay get ds/fluentd-elasticsearch sts/nginx-web -A

  # List what kubectl's "all" category holds, and the events the controllers recorded
  kreplay get all
  kreplay get events --sort-by=.lastTimestamp"""

USAGE = "kreplay get [(-o|--output=)json|yaml|name|jsonpath|jsonpath-as-json|jsonpath-file|custom-columns|custom-columns-file|wide] (TYPE[.VERSION][.GROUP] [NAME | -l label] | TYPE[.VERSION][.GROUP]/NAME ...) [flags] [options]"


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("get", parents=[parents.store, parents.namespace], help="Display one or many resources", description=DESCRIPTION, epilog=EXAMPLES, usage=USAGE)
    p.add_argument("resources", nargs="*", metavar="TYPE")
    add_all_namespaces(p)
    add_selector(p)
    add_filenames(p, "identifying the resource to get")
    add_bool(p, "--ignore-not-found", help="If the requested object does not exist the command will return exit code 0.")
    add_output_flags(p)
    add_time_travel(p)
    p.set_defaults(func=cmd_get)


def cmd_get(args: argparse.Namespace) -> int:
    from replay.cli import resources
    from replay.cli.common import load_cluster, open_store
    from replay.cli.output import check_format, render_objects

    if not args.resources and not args.filename:
        sys.stderr.write(
            'You must specify the type of resource to get. Use "kreplay get --help" for the kinds kreplay knows.\n\n'
        )
        raise UsageError("Required resource not specified.", verb="get")
    check_format(args)
    request = resources.Request.of(args, args.resources)
    with open_store(args) as store:
        cluster = load_cluster(store, args)
        source = resources.Source(cluster, store)
        result = resources.build(request, source, verb="get", allow_empty_selector=True)
        infos = result.infos
        errors = list(result.errors)
        if result.selection.documents:
            # -f names objects: show them as the cluster has them
            found = []
            for info in infos:
                live = source.get(info.kind, info.namespace, info.name)
                if live is None:
                    errors.append(resources.not_found(info.kind, info.name))
                else:
                    found.append(live)
            infos = found
        if args.ignore_not_found:
            errors = [e for e in errors if "(NotFound)" not in e]
        multiple_types = len(result.selection.types) > 1 or (args.resources[:1] == ["all"]) or len({k for k, _ in result.selection.tuples}) > 1
        text = render_objects(
            args,
            infos,
            now=cluster.now,
            single_item=result.selection.single_item,
            multiple_types=multiple_types,
            all_namespaces=args.all_namespaces,
        )
        write(text)
        human = (args.output or "").split("=")[0] in ("", "wide")
        if not infos and not errors and human and not args.ignore_not_found:
            kinds = result.selection.types or [k for k, _ in result.selection.tuples]
            from engine.api.objects import CLUSTER_SCOPED

            namespaced = not args.all_namespaces and all(k not in CLUSTER_SCOPED and k != "Namespace" for k in kinds)
            sys.stderr.write(f"No resources found in {args.namespace} namespace.\n" if namespaced else "No resources found\n")
        for error in errors:
            sys.stderr.write(error + "\n")
    return 1 if errors else 0
