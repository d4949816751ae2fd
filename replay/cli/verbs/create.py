"""`kreplay create -f FILE...`: like apply, but an object that already exists is an error."""

from __future__ import annotations

import argparse

from replay.cli.common import (
    Parents,
    Subparsers,
    add_at,
    add_bool,
    add_dry_run,
    add_filenames,
    add_record,
)
from replay.cli.output import add_output_flags

DESCRIPTION = """Create a resource from a file or from stdin.

 JSON and YAML formats are accepted. An object that already exists is refused with AlreadyExists, as the API server refuses it; the others are created."""

EXAMPLES = """  # Create the fluentd-elasticsearch DaemonSet from its manifest
  kreplay create -f fluentd-elasticsearch.yaml

  # Create a pod based on the JSON passed into stdin
  cat pod.json | kreplay create -f -

  # Show what would be created, and what the controllers would then do
  kreplay create -f nginx-web.yaml --dry-run=server"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("create", parents=[parents.store, parents.namespace, parents.write], help="Create a resource from a file or from stdin", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay create -f FILENAME [options]")
    add_filenames(p, "to use to create the resource")
    add_at(p)
    add_record(p)
    add_bool(p, "--save-config", help="Accepted for kubectl compatibility; the last-applied configuration is not kept.")
    add_dry_run(p)
    add_output_flags(p, tables=False)
    p.set_defaults(func=cmd_create)


def cmd_create(args: argparse.Namespace) -> int:
    from replay.cli.applying import apply_files

    return apply_files(args, create_only=True)
