"""`kreplay label TYPE NAME KEY=VAL KEY-`: labels set or removed by a merge patch, with
kubectl's --overwrite rule and its `labeled` / `unlabeled` / `not labeled`."""

from __future__ import annotations

import argparse

from replay.cli.common import Parents, Subparsers

DESCRIPTION = """Update the labels on a resource.

  *  A label key and value must begin with a letter or number, and may contain letters, numbers, hyphens, dots, and underscores, up to 63 characters each.
  *  Optionally, the key can begin with a DNS subdomain prefix and a single '/', like example.com/my-app.
  *  If --overwrite is true, then existing labels can be overwritten, otherwise attempting to overwrite a label will result in an error.
  *  If --resource-version is specified, then updates will use this resource version, otherwise the existing resource-version will be used."""

EXAMPLES = """  # Label node node-1 with disk=ssd
  kreplay label nodes node-1 disk=ssd

  # Overwrite the tier label of every pod of the web-app deployment
  kreplay label pods -l app=web-app tier=frontend --overwrite

  # Remove the label named 'tier' if it exists (does not require --overwrite)
  kreplay label pods -l app=web-app tier-"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    from replay.cli.pairs import add_flags

    p = subparsers.add_parser("label", parents=[parents.store, parents.namespace, parents.write], help="Update the labels on a resource", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay label [--overwrite] (-f FILENAME | TYPE NAME) KEY_1=VAL_1 ... KEY_N=VAL_N [--resource-version=version] [options]")
    add_flags(p, "label")
    p.set_defaults(func=cmd_label)


def _validate(key: str, value: str) -> None:
    from engine.api.validation.formats import label_value, qualified_name
    from replay.cli.common import UserError

    problems = qualified_name(key)
    if problems:
        raise UserError(f'error: invalid label spec: {key}={value}: key "{key}": {"; ".join(problems)}')
    problems = label_value(value)
    if problems:
        raise UserError(f'error: invalid label value: "{key}={value}": {"; ".join(problems)}')


def _message(before: dict[str, str], after: dict[str, str]) -> str:
    """updateDataChangeMsg."""
    if before == after:
        return "not labeled"
    return "unlabeled" if len(after) < len(before) else "labeled"


def cmd_label(args: argparse.Namespace) -> int:
    from replay.cli.pairs import run

    return run(args, what="label", field="labels", validate=_validate, message=_message)
