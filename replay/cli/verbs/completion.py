"""`kreplay completion bash|zsh|fish`: the shell completion script (see replay.cli.completion)."""

from __future__ import annotations

import argparse

from replay.cli.common import Parents, Subparsers

DESCRIPTION = """Output shell completion code for the specified shell (bash, zsh or fish). The shell code must be evaluated to provide interactive completion of kreplay commands: verbs, flags, kinds, output formats and the names of the objects in the store ($KREPLAY_STORE or sqlite:kreplay.db)."""

EXAMPLES = """  # Load the kreplay completion code for bash into the current shell
  source <(kreplay completion bash)

  # Load the kreplay completion code for zsh into the current shell
  source <(kreplay completion zsh)

  # Load the kreplay completion code for fish into the current shell
  kreplay completion fish | source"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("completion", help="Output shell completion code for the specified shell (bash, zsh or fish)", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay completion SHELL [options]")
    p.add_argument("shell", nargs="?", default="")
    p.set_defaults(func=cmd_completion)


def cmd_completion(args: argparse.Namespace) -> int:
    from replay.cli.common import UsageError, out
    from replay.cli.completion import script

    if not args.shell:
        raise UsageError("Shell not specified.", verb="completion")
    out(script(args.shell))
    return 0
