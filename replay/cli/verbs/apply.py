"""`kreplay apply -f FILE...`: append manifests at the store's virtual time, as kubectl apply
does, saying for each object whether it was created, configured or left unchanged."""

from __future__ import annotations

import argparse

from replay.cli.common import Parents, Subparsers, add_at, add_dry_run, add_filenames, add_record
from replay.cli.output import add_output_flags

DESCRIPTION = """Apply a configuration to a resource by file name or stdin. The resource name must be specified. This resource will be created if it doesn't exist yet.

 JSON and YAML formats are accepted: files, directories (-R to recurse), '-' for stdin, several documents per file, and List objects. Each object is appended to the store's event log at its current virtual time (or --at), and the controllers run to rest."""

EXAMPLES = """  # Apply the configuration in web-app.yaml to the cluster, recording the command as the change-cause
  kreplay apply -f web-app.yaml --record=true

  # Apply a Service and a StatefulSet in one go
  kreplay apply -f service-nginx.yaml -f nginx-web.yaml

  # Apply every manifest in a directory and its subdirectories
  kreplay apply -R -f manifests/

  # Apply the JSON passed into stdin
  cat pod.json | kreplay apply -f -

  # Show what the controllers would do, without appending anything
  kreplay apply -f web-app.yaml --dry-run=server"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("apply", parents=[parents.store, parents.namespace, parents.write], help="Apply a configuration to a resource by file name or stdin", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay apply (-f FILENAME) [options]")
    add_filenames(p, "that contain the configuration to apply")
    add_at(p)
    p.add_argument("--cause", default=None, help="The change-cause to record (kubernetes.io/change-cause), instead of the command line --record would record.")
    add_record(p)
    add_dry_run(p)
    add_output_flags(p, tables=False)
    p.set_defaults(func=cmd_apply, verb="apply")
    return None


def cmd_apply(args: argparse.Namespace) -> int:
    from replay.cli.applying import apply_files

    return apply_files(args, create_only=False)
