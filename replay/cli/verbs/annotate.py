"""`kreplay annotate TYPE NAME KEY=VAL KEY-`: annotations set or removed by a merge patch."""

from __future__ import annotations

import argparse

from replay.cli.common import Parents, Subparsers

DESCRIPTION = """Update the annotations on one or more resources.

 All Kubernetes objects support the ability to store additional data with the object as annotations. Annotations are key/value pairs that can be larger than labels and include arbitrary string values such as structured JSON.

 Attempting to set an annotation that already exists will fail unless --overwrite is set. If --resource-version is specified and does not match the current resource version on the server the command will fail."""

EXAMPLES = """  # Update deployment web-app with the annotation 'description' and the value 'my frontend'
  kreplay annotate deploy web-app description='my frontend'

  # Overwrite the change-cause the rollout history shows for the current revision
  kreplay annotate deploy web-app kubernetes.io/change-cause='upgrade to 1.16' --overwrite

  # Remove an annotation named 'description' if it exists (does not require --overwrite)
  kreplay annotate deploy web-app description-"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    from replay.cli.pairs import add_flags

    p = subparsers.add_parser("annotate", parents=[parents.store, parents.namespace, parents.write], help="Update the annotations on a resource", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay annotate [--overwrite] (-f FILENAME | TYPE NAME) KEY_1=VAL_1 ... KEY_N=VAL_N [--resource-version=version] [options]")
    add_flags(p, "annotation")
    p.set_defaults(func=cmd_annotate)


def _validate(key: str, value: str) -> None:
    from engine.api.validation.formats import qualified_name
    from replay.cli.common import UserError

    problems = qualified_name(key)
    if problems:
        raise UserError(f'error: invalid annotation format: {key}={value}: {"; ".join(problems)}')


def cmd_annotate(args: argparse.Namespace) -> int:
    from replay.cli.pairs import run

    return run(args, what="annotation", field="annotations", validate=_validate, message=lambda before, after: "annotated")
