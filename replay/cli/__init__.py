"""`kreplay`: kubectl's verbs over a replayed, event-sourced cluster (spec section 3).

Exit status: 0 on success, 1 when input is rejected (the message on stderr names the line and
field), 2 on usage errors.

Layout: this module assembles the parser from `VERBS` and turns errors into exit statuses;
`common` holds what verbs share (errors, option groups, store and kind helpers); each verb, or a
family sharing one subcommand (`rollout ACTION`), is one module in `verbs/` with
`register(subparsers, parents)`, which adds its subparser and sets `func` to its handler
`cmd_<verb>(args) -> int`. Adding a verb is a new module plus one line in `VERBS`. The CLI is
the top layer: it may import engine, projections and the rest of replay, and nothing outside
`replay.cli` may import it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from engine.loop import LoopError
from engine.store import DEFAULT_URL
from replay.cli.common import Parents, Parser, UsageError, UserError

# Modules of replay/cli/verbs/, one line each, in the order `kreplay --help` lists them.
VERBS = (
    "replay",
    "apply",
    "get",
    "describe",
    "rollout",
    "log",
    "why",
    "serve",
    "report",
)


def build_parser() -> Parser:
    store_help = f"event store: sqlite:PATH, memory: or postgresql://user@host:port/db (default $KREPLAY_STORE or {DEFAULT_URL})"
    store = Parser(add_help=False)
    store.add_argument("--store", default=None, help=store_help)
    namespace = Parser(add_help=False)
    namespace.add_argument("-n", "--namespace", default="default")

    parser = Parser(prog="kreplay", description="Replay Kubernetes cluster histories through event-sourced controllers.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    parents = Parents(store=store, namespace=namespace)
    for verb in VERBS:
        importlib.import_module(f"replay.cli.verbs.{verb}").register(sub, parents)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args))
    except UsageError as exc:
        sys.stderr.write(f"{exc}\nSee 'kreplay --help'.\n")
        return 2
    except UserError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    except LoopError as exc:
        # e.g. a ReplicaSet whose every pod the kubelet rejects: upstream loops forever too
        sys.stderr.write(
            f"error: the controllers never came to rest: {exc}. Nothing was appended; "
            "the history keeps them creating and deleting at one instant (see rejectImages in the README).\n"
        )
        return 1
    except BrokenPipeError:
        return 0
