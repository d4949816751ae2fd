"""`kreplay version`: the kreplay version, the history format it reads, and the Python it runs
on (`-o json|yaml` as kubectl's version prints)."""

from __future__ import annotations

import argparse

from replay.cli.common import Parents, Subparsers, add_bool

HISTORY_FORMAT = "1.1"


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("version", help="Print the kreplay version", description="Print the kreplay version, the history format version it reads and the Python version it runs on.", epilog="""  # Print the version
  kreplay version

  # As JSON, for a program
  kreplay version -o json""", usage="kreplay version [options]")
    add_bool(p, "--client", help="Accepted for kubectl compatibility: there is no server.")
    p.add_argument("-o", "--output", default="", choices=["", "json", "yaml"], help="One of 'yaml' or 'json'.")
    p.set_defaults(func=cmd_version)


def cmd_version(args: argparse.Namespace) -> int:
    import json
    import platform

    from replay.cli.arguments import version
    from replay.cli.common import out

    info = {"kreplayVersion": {"gitVersion": f"v{version()}", "historyFormat": HISTORY_FORMAT, "pythonVersion": platform.python_version(), "platform": f"{platform.system().lower()}/{platform.machine()}"}}
    if args.output == "json":
        out(json.dumps(info, indent=2))
    elif args.output == "yaml":
        import yaml

        out(yaml.safe_dump(info, sort_keys=False))
    else:
        out(f"kreplay Version: v{version()}\nHistory Format: {HISTORY_FORMAT}\nPython Version: {platform.python_version()}")
    return 0
