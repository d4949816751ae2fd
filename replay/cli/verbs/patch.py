"""`kreplay patch TYPE NAME -p PATCH [--type strategic|merge|json]`: a `patch` operation."""

from __future__ import annotations

import argparse
from typing import Any

from replay.cli.common import (
    Parents,
    Subparsers,
    add_all_namespaces,
    add_at,
    add_dry_run,
    add_filenames,
    add_record,
)
from replay.cli.output import add_output_flags

DESCRIPTION = """Update fields of a resource using strategic merge patch, a JSON merge patch, or a JSON patch.

 JSON and YAML formats are accepted.

 A strategic merge patch (the default) merges lists of containers, volumes, ports, env and mounts by their keys, as the API server does; kreplay applies it to the current object and records the equivalent JSON merge patch in the log."""

EXAMPLES = """  # Partially update a node using a strategic merge patch, specifying the patch as JSON
  kreplay patch node node-1 -p '{"spec":{"unschedulable":true}}'

  # Update a container's image; spec.containers[*].name is required because it's a merge key
  kreplay patch sts nginx-web -p '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.15.0"}]}}}}'

  # A canary: only ordinals from 2 up take the next template
  kreplay patch statefulset nginx-web -p '{"spec":{"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":2}}}}'

  # Update a container's image using a JSON patch with positional arrays
  kreplay patch statefulset nginx-web --type='json' -p='[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value":"nginx:1.16.0"}]'"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("patch", parents=[parents.store, parents.namespace, parents.write], help="Update fields of a resource", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay patch (-f FILENAME | TYPE NAME) [-p PATCH|--patch-file FILE] [options]")
    p.add_argument("resources", nargs="*", metavar="TYPE NAME")
    p.add_argument("-p", "--patch", default=None, help="The patch to be applied to the resource JSON file.")
    p.add_argument("--patch-file", default="", help="A file containing a patch to be applied to the resource.")
    p.add_argument("--type", default="strategic", help="The type of patch being provided; one of [json merge strategic]")
    add_all_namespaces(p)
    add_filenames(p, "identifying the resource to update")
    add_at(p)
    add_record(p)
    add_dry_run(p)
    add_output_flags(p, tables=False)
    p.set_defaults(func=cmd_patch)


def _shortened(text: str, most: int = 200) -> str:
    """The patch as an error echoes it: whole, as kubectl does, unless it is long."""
    return text if len(text) <= most else f"{text[:most]}... ({len(text):,} characters)"


def _patch_text(args: argparse.Namespace) -> str:
    from replay.cli.common import UsageError, UserError

    if args.patch is not None and args.patch_file:
        raise UsageError("--patch and --patch-file are mutually exclusive", verb="patch")
    if args.patch_file:
        try:
            with open(args.patch_file, encoding="utf-8-sig") as f:
                return f.read()
        except OSError as exc:
            raise UserError(f"error: {args.patch_file}: {exc.strerror}") from None
    if not args.patch:
        raise UsageError("must specify -p to patch", verb="patch")
    return str(args.patch)


def cmd_patch(args: argparse.Namespace) -> int:
    from engine.operations import Patch
    from replay import strategic
    from replay.cli import resources
    from replay.cli.common import (
        UsageError,
        UserError,
        cause_of,
        commit,
        live_targets,
        load_cluster,
        noun,
        open_store,
        operation_time,
        report_errors,
        touched,
    )
    from replay.cli.output import check_format
    from replay.printers.manifests import manifest
    from replay.safeload import InputError, load_yaml_documents

    if args.type not in ("json", "merge", "strategic"):
        raise UsageError(f"--type must be one of [json merge strategic], not \"{args.type}\"", verb="patch")
    text = _patch_text(args)
    try:  # read as every manifest is, within the limits on input (a patch is user input too)
        documents = load_yaml_documents(text, args.patch_file or "--patch")
    except InputError as exc:
        raise UserError(f'error: unable to parse "{_shortened(text)}": {exc}') from None
    body = documents[0].data if documents else None
    if args.type == "json" and not isinstance(body, list):
        raise UserError(f'error: unable to parse "{_shortened(text)}": a JSON patch is a list of operations')
    if args.type != "json" and not isinstance(body, dict):
        raise UserError(f'error: unable to parse "{_shortened(text)}": a {args.type} patch is a JSON object')
    check_format(args, tables=False)
    with open_store(args, write=True) as store:
        cluster = load_cluster(store)
        source = resources.Source(cluster, store)
        infos, errors = live_targets(args, args.resources, source, verb="patch")
        at = operation_time(args, cluster)
        operations, keys = [], []
        for info in infos:
            cause = cause_of(args)
            if args.type == "json":
                operation = Patch(at=at, kind=info.kind, namespace=info.namespace, name=info.name, json_patch=body, actor="kubectl", cause=cause)
            else:
                merge = body
                if args.type == "strategic":
                    before = manifest(info.obj)
                    try:
                        after = strategic.apply(before, body)
                    except strategic.StrategicPatchError as exc:
                        raise UserError(f"error: {exc}") from None
                    merge = strategic.merge_patch_between(before, after)
                operation = Patch(at=at, kind=info.kind, namespace=info.namespace, name=info.name, merge=merge, actor="kubectl", cause=cause)
            operations.append(operation)
            keys.append(info)

        def messages(outcome: Any) -> list[str]:
            return [f"{noun(i.obj)} patched" + ("" if touched(outcome, i.kind, i.namespace, i.name) else " (no change)") for i in keys]

        commit(store, operations, args, messages, [(i.kind, i.namespace, i.name) for i in keys])
    return report_errors(errors)
