"""What `label` and `annotate` share: `KEY=VALUE` and `KEY-` arguments after the resources,
kubectl's --overwrite rule, and the merge patch on metadata that carries the change."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from replay.cli.common import (
    UsageError,
    UserError,
    add_all_namespaces,
    add_at,
    add_bool,
    add_dry_run,
    add_filenames,
    add_record,
    add_selector,
)
from replay.cli.output import add_output_flags


def add_flags(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("arguments", nargs="*", metavar="TYPE NAME KEY=VAL")
    add_bool(p, "--overwrite", help=f"If true, allow {what}s to be overwritten, otherwise reject {what} updates that overwrite existing {what}s.")
    add_bool(p, "--all", help="Select all resources, in the namespace of the specified resource types")
    add_all_namespaces(p)
    add_selector(p)
    add_bool(p, "--list", help=f"If true, display the {what}s for a given resource.")
    p.add_argument("--resource-version", default="", help=f"If non-empty, the {what} update will only succeed if this is the current resource-version for the object. Only valid when specifying a single resource.")
    add_filenames(p, f"identifying the resource to update the {what}")
    add_at(p)
    add_record(p)
    add_dry_run(p)
    add_output_flags(p, tables=False)


def split(arguments: Sequence[str], verb: str) -> tuple[list[str], dict[str, str], list[str]]:
    """GetResourcesAndPairs: resources first, then KEY=VALUE (set) and KEY- (remove)."""
    resources: list[str] = []
    sets: dict[str, str] = {}
    removes: list[str] = []
    pairs_started = False
    for arg in arguments:
        is_pair = "=" in arg or arg.endswith("-")
        if is_pair:
            pairs_started = True
            if "=" in arg:
                key, _, value = arg.partition("=")
                if not key:
                    raise UsageError(f"invalid {verb} format: {arg}", verb=verb)
                sets[key] = value
            else:
                removes.append(arg[:-1])
        elif pairs_started:
            raise UsageError(f"all resources must be specified before {verb} changes: {arg}", verb=verb)
        else:
            resources.append(arg)
    for key in removes:
        if key in sets:
            raise UsageError(f"can not both modify and remove the following {verb}(s) in the same command: {key}", verb=verb)
    return resources, sets, removes


def run(args: argparse.Namespace, *, what: str, field: str, validate: Callable[[str, str], None], message: Callable[[dict[str, str], dict[str, str]], str]) -> int:
    """label/annotate: one merge patch per object on `metadata.<field>`."""
    from engine.operations import Patch
    from replay.cli import resources
    from replay.cli.common import (
        cause_of,
        commit,
        live_targets,
        load_cluster,
        noun,
        open_store,
        operation_time,
        out,
        report_errors,
    )
    from replay.cli.output import check_format

    verb = "label" if what == "label" else "annotate"
    resource_args, sets, removes = split(args.arguments, verb)
    if not sets and not removes and not args.list:
        raise UsageError(f"at least one {what} update is required", verb=verb)
    for key, value in sets.items():
        validate(key, value)
    check_format(args, tables=False)
    with open_store(args, write=True) as store:
        cluster = load_cluster(store)
        source = resources.Source(cluster, store)
        infos, errors = live_targets(args, resource_args, source, verb=verb)
        if args.list:
            for info in infos:
                current = getattr(_metadata(info.obj), field)
                out(f"Listing {what}s for {info.kind}.{resources.plural(info.kind).partition('.')[2] or ''}/{info.name}:".replace("./", "/"))
                for key in sorted(current):
                    out(f"{key}={current[key]}")
            return report_errors(errors)
        if args.resource_version and len(infos) > 1:
            raise UserError("error: --resource-version may only be used with a single resource")
        at = operation_time(args, cluster)
        operations, messages, targets = [], [], []
        for info in infos:
            current = dict(getattr(_metadata(info.obj), field))
            if not args.overwrite:
                for key, value in sets.items():
                    if key in current and current[key] != value:
                        raise UserError(f"error: '{key}' already has a value ({current[key]}), and --overwrite is false")
            if args.resource_version and _metadata(info.obj).resource_version != args.resource_version:
                raise UserError(f'Error from server (Conflict): Operation cannot be fulfilled on {resources.plural(info.kind)} "{info.name}": the object has been modified; please apply your changes to the latest version and try again')
            after = {**current, **sets}
            for key in removes:
                if key not in after:
                    out(f'{what} "{key}" not found.')
                after.pop(key, None)
            change: dict[str, str | None] = {k: v for k, v in sets.items() if current.get(k) != v}
            change.update({k: None for k in removes if k in current})
            cause = cause_of(args)
            if change or cause:
                operations.append(Patch(at=at, kind=info.kind, namespace=info.namespace, name=info.name, merge={"metadata": {field: change}} if change else {}, actor="kubectl", cause=cause))
            messages.append(f"{noun(info.obj)} {message(current, after)}")
            targets.append((info.kind, info.namespace, info.name))
        commit(store, operations, args, messages, targets)
    return report_errors(errors)


def _metadata(obj: Any) -> Any:
    """An object's metadata, typed or (a kind shown as its manifest) read from the manifest."""
    if not isinstance(obj, dict):
        return obj.metadata
    from types import SimpleNamespace

    meta = obj.get("metadata") or {}
    return SimpleNamespace(
        labels=dict(meta.get("labels") or {}),
        annotations=dict(meta.get("annotations") or {}),
        resource_version=str(meta.get("resourceVersion") or ""),
    )
