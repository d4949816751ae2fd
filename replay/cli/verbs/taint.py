"""`kreplay taint nodes NAME KEY=VALUE:EFFECT KEY:EFFECT- KEY-`: node taints, as kubectl
parses and merges them (kubectl/pkg/cmd/taint), appended as a merge patch of spec.taints."""

from __future__ import annotations

import argparse
from typing import Any

from replay.cli.common import (
    Parents,
    Subparsers,
    UsageError,
    UserError,
    add_at,
    add_bool,
    add_dry_run,
    add_selector,
)
from replay.cli.output import add_output_flags

DESCRIPTION = """Update the taints on one or more nodes.

  *  A taint consists of a key, value, and effect. As an argument here, it is expressed as key=value:effect.
  *  The key must begin with a letter or number, and may contain letters, numbers, hyphens, dots, and underscores, up to 253 characters.
  *  Optionally, the key can begin with a DNS subdomain prefix and a single '/', like example.com/my-app.
  *  The value is optional. If given, it must begin with a letter or number, and may contain letters, numbers, hyphens, dots, and underscores, up to 63 characters.
  *  The effect must be NoSchedule, PreferNoSchedule or NoExecute.
  *  Currently taint can only apply to node."""

EXAMPLES = """  # Update node 'node-1' with a taint with key 'dedicated' and value 'special-user' and effect 'NoSchedule'
  # If a taint with that key and effect already exists, its value is replaced as specified
  kreplay taint nodes node-1 dedicated=special-user:NoSchedule --overwrite

  # Remove from node 'node-1' the taint with key 'dedicated' and effect 'NoSchedule' if one exists
  kreplay taint nodes node-1 dedicated:NoSchedule-

  # Remove from node 'node-1' all the taints with key 'dedicated'
  kreplay taint nodes node-1 dedicated-

  # Evict what does not tolerate maintenance from node-2 (the taint manager acts on NoExecute)
  kreplay taint node node-2 maintenance=true:NoExecute"""

EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("taint", parents=[parents.store, parents.write], help="Update the taints on one or more nodes", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay taint NODE NAME KEY_1=VAL_1:TAINT_EFFECT_1 ... KEY_N=VAL_N:TAINT_EFFECT_N [options]")
    p.add_argument("arguments", nargs="*", metavar="NODE NAME KEY=VAL:EFFECT")
    add_bool(p, "--all", help="Select all nodes in the cluster")
    add_bool(p, "--overwrite", help="If true, allow taints to be overwritten, otherwise reject taint updates that overwrite existing taints.")
    add_selector(p)
    add_at(p)
    add_dry_run(p)
    add_output_flags(p, tables=False)
    p.set_defaults(func=cmd_taint)


def _text(taint: dict[str, Any]) -> str:
    """Taint.ToString."""
    key, value, effect = taint.get("key", ""), taint.get("value", ""), taint.get("effect", "")
    if not effect:
        return f"{key}={value}:" if value else key
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def parse_taint(spec: str) -> dict[str, str]:
    from engine.api.validation.formats import label_value, qualified_name

    parts = spec.split(":")
    value = effect = ""
    if len(parts) == 1:
        key = parts[0]
    elif len(parts) == 2:
        effect = parts[1]
        if effect not in EFFECTS:
            raise UserError(f"error: invalid taint effect: {effect}, unsupported taint effect")
        kv = parts[0].split("=")
        if len(kv) > 2:
            raise UserError(f"error: invalid taint spec: {spec}")
        key = kv[0]
        if len(kv) == 2:
            value = kv[1]
            problems = label_value(value)
            if problems:
                raise UserError(f"error: invalid taint spec: {spec}, {'; '.join(problems)}")
    else:
        raise UserError(f"error: invalid taint spec: {spec}")
    problems = qualified_name(key)
    if problems:
        raise UserError(f"error: invalid taint spec: {spec}, {'; '.join(problems)}")
    return {k: v for k, v in (("key", key), ("value", value), ("effect", effect)) if v}


def parse_taints(specs: list[str]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    add: list[dict[str, str]] = []
    remove: list[dict[str, str]] = []
    for spec in specs:
        if spec.endswith("-"):
            taint = parse_taint(spec[:-1])
            remove.append({k: v for k, v in taint.items() if k != "value"})
            continue
        taint = parse_taint(spec)
        if not taint.get("effect"):
            raise UserError(f"error: invalid taint spec: {spec}")
        if any(t["key"] == taint["key"] and t["effect"] == taint["effect"] for t in add):
            raise UserError(f"error: duplicated taints with the same key and effect: {_text(taint)}")
        add.append(taint)
    return add, remove


def reorganize(old: list[dict[str, Any]], add: list[dict[str, str]], remove: list[dict[str, str]], overwrite: bool) -> tuple[str, list[dict[str, Any]]]:
    """reorganizeTaints: the new taints first, then the old ones they do not replace."""
    new: list[dict[str, Any]] = [dict(t) for t in add]
    for taint in old:
        if not any(t["key"] == taint.get("key") and t.get("effect") == taint.get("effect") for t in new):
            new.append(taint)
    added = len(old) != len(new)
    deleted = False
    errors = []
    for r in remove:
        before = len(new)
        if r.get("effect"):
            new = [t for t in new if not (t.get("key") == r["key"] and t.get("effect") == r["effect"])]
        else:
            new = [t for t in new if t.get("key") != r["key"]]
        deleted = len(new) != before
        if not deleted:
            errors.append(f'taint "{_text(r)}" not found')
    if errors:
        raise UserError("error: " + (errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"))
    if (added and deleted) or overwrite:
        return "modified", new
    return ("tainted" if added else "untainted"), new


def cmd_taint(args: argparse.Namespace) -> int:
    from engine.api.objects import to_builtins
    from engine.operations import Patch
    from replay.cli import resources
    from replay.cli.common import (
        commit,
        live_targets,
        load_cluster,
        noun,
        open_store,
        operation_time,
        report_errors,
    )
    from replay.cli.output import check_format

    resource_args: list[str] = []
    specs: list[str] = []
    for arg in args.arguments:
        is_taint = "=" in arg or ":" in arg or arg.endswith("-")
        if is_taint:
            specs.append(arg)
        elif specs:
            raise UsageError(f"all resources must be specified before taint changes: {arg}", verb="taint")
        else:
            resource_args.append(arg)
    if not resource_args:
        raise UsageError("one or more resources must be specified as <resource> <name>", verb="taint")
    if not specs:
        raise UsageError("at least one taint update is required", verb="taint")
    if len(resource_args) < 2 and not args.all and not args.selector:
        raise UsageError("at least one resource name must be specified since 'all' parameter is not set", verb="taint")
    add, remove = parse_taints(specs)
    for taint in add:
        if any(r["key"] == taint["key"] and r.get("effect") == taint["effect"] for r in remove):
            raise UsageError(f"can not both modify and remove the following taint(s) in the same command: {_text(taint)}", verb="taint")
    check_format(args, tables=False)
    with open_store(args, write=True) as store:
        cluster = load_cluster(store)
        source = resources.Source(cluster, store)
        infos, errors = live_targets(args, resource_args, source, verb="taint")
        at = operation_time(args, cluster)
        operations, messages, targets = [], [], []
        for info in infos:
            if info.kind != "Node":
                raise UserError(f"error: invalid resource type {resources.plural(info.kind)}, only node types are supported")
            old = [to_builtins(t) for t in info.obj.spec.taints]
            if not args.overwrite:
                existing = [t["key"] for t in add for o in old if o.get("key") == t["key"] and o.get("effect") == t["effect"]]
                if existing:
                    raise UserError(f"error: node {info.name} already has {','.join(existing)} taint(s) with same effect(s) and --overwrite is false")
            operation, new = reorganize(old, add, remove, args.overwrite)
            operations.append(Patch(at=at, kind="Node", namespace="", name=info.name, merge={"spec": {"taints": new or None}}, actor="kubectl"))
            messages.append(f"{noun(info.obj)} {operation}")
            targets.append(("Node", "", info.name))
        commit(store, operations, args, messages, targets)
    return report_errors(errors)
