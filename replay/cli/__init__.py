"""`kreplay`: kubectl's verbs over a replayed, event-sourced cluster (spec section 3).

Exit status: 0 on success, 1 when input is rejected (the message on stderr names the line and
field), 2 on usage errors, 130 when interrupted (Ctrl-C).

How a command line is read, as kubectl (cobra) reads it:
1. `arguments.split` finds the verb: global flags (`-n`, `--store`, `--context`, ...) may come
   before it and are moved after it, so `kreplay -n kube-system get ds` works;
2. only the chosen verb's module is imported (start-up stays close to a bare interpreter:
   `--help`, `--version` and `completion` import no engine code at all);
3. the verb's parser reads flags anywhere among its arguments (`get ds -n kube-system NAME`);
4. its handler turns the arguments into objects with `resources.build` (one resource builder
   for `TYPE NAME`, `TYPE/NAME`, `TYPE1,TYPE2`, `-f`, `-l`, `--all`), then acts and prints.

Layout: `VERBS` below lists every verb, one line each, in `--help` order, with the module that
implements it (`replay/cli/verbs/<module>.py`, `register(subparsers, parents)` plus its handler
`cmd_<verb>(args) -> int`). Adding a verb is a new module plus one line here. `common` holds
what verbs share; `arguments` the command-line reading and help; `resources` the builder;
`output` the printing flags. The CLI is the top layer: nothing outside `replay.cli` imports it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import NamedTuple


class Verb(NamedTuple):
    name: str
    module: str  # replay/cli/verbs/<module>.py
    group: str  # the heading `kreplay --help` lists it under
    summary: str


BASIC = "Basic Commands (Beginner)"
INTERMEDIATE = "Basic Commands (Intermediate)"
DEPLOY = "Deploy Commands"
CLUSTER = "Cluster Management Commands"
DEBUG = "Troubleshooting and Debugging Commands"
ADVANCED = "Advanced Commands"
SETTINGS = "Settings Commands"
REPLAY = "Replay Commands"
OTHER = "Other Commands"

# One line per verb, in the order `kreplay --help` lists them (kubectl's groups and wording).
VERBS = (
    Verb("create", "create", BASIC, "Create a resource from a file or from stdin"),
    Verb("set", "set", BASIC, "Set specific features on objects"),
    Verb("get", "get", INTERMEDIATE, "Display one or many resources"),
    Verb("delete", "delete", INTERMEDIATE, "Delete resources by file names, stdin, resources and names, or by resources and label selector"),
    Verb("rollout", "rollout", DEPLOY, "Manage the rollout of a resource"),
    Verb("scale", "scale", DEPLOY, "Set a new size for a deployment, replica set, or stateful set"),
    Verb("cordon", "cordon", CLUSTER, "Mark node as unschedulable"),
    Verb("uncordon", "cordon", CLUSTER, "Mark node as schedulable"),
    Verb("drain", "drain", CLUSTER, "Drain node in preparation for maintenance"),
    Verb("taint", "taint", CLUSTER, "Update the taints on one or more nodes"),
    Verb("describe", "describe", DEBUG, "Show details of a specific resource or group of resources"),
    Verb("apply", "apply", ADVANCED, "Apply a configuration to a resource by file name or stdin"),
    Verb("patch", "patch", ADVANCED, "Update fields of a resource"),
    Verb("label", "label", SETTINGS, "Update the labels on a resource"),
    Verb("annotate", "annotate", SETTINGS, "Update the annotations on a resource"),
    Verb("completion", "completion", SETTINGS, "Output shell completion code for the specified shell (bash, zsh or fish)"),
    Verb("import", "import_", REPLAY, "Import an audit log, watch stream, SimKube trace or snapshot as a history"),
    Verb("replay", "replay", REPLAY, "Replay a history file and run the controllers to rest"),
    Verb("advance", "advance", REPLAY, "Move virtual time forward so that due timers fire"),
    Verb("log", "log", REPLAY, "Print the event log, one event a line"),
    Verb("verify", "verify", REPLAY, "Compare a replay's decisions with what the real controllers did"),
    Verb("diff", "diff", REPLAY, "Compare two runs: end state, decisions per owner, rollout summary"),
    Verb("shrink", "shrink", REPLAY, "Shrink a failing history to the smallest that fails the same way"),
    Verb("why", "why", REPLAY, "Explain the decisions that created, changed or deleted an object"),
    Verb("fsck", "fsck", REPLAY, "Verify the store's hash chain, positions and snapshots"),
    Verb("report", "report", REPLAY, "Write a rollout report: timeline, budget and decisions (HTML, Markdown or JSON)"),
    Verb("serve", "serve", REPLAY, "Serve the replayed cluster to kubectl and client libraries (read-only)"),
    Verb("version", "version", OTHER, "Print the kreplay version"),
)


def build_parser() -> dict[str, object]:
    """Every verb's parser, by command (`rollout history`, ...): imports every verb module, as a
    process that forks workers does once beforehand. `main` never needs it."""
    from replay.cli import arguments

    return arguments.load_all(VERBS)


def main(argv: Sequence[str] | None = None) -> int:
    from replay.cli import arguments
    from replay.cli.common import UsageError, UserError, err

    args_in = list(sys.argv[1:] if argv is None else argv)
    try:
        return arguments.run(args_in, VERBS)
    except UsageError as exc:
        err(exc.render())
        return 2
    except UserError as exc:
        err(f"{exc}\n")
        return 1
    except KeyboardInterrupt:
        # a run discards what it staged: an interrupted command leaves the log as it was
        err("\ninterrupted: nothing was appended\n")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except Exception as exc:
        from engine.loop import Livelock, LoopError
        from engine.store import StoreError

        if isinstance(exc, StoreError):  # busy, interrupted run, conflict: one line, exit 1
            err(f"{exc}\n")
            return 1
        if isinstance(exc, LoopError):
            # e.g. a ReplicaSet whose every pod the kubelet rejects: upstream loops forever too
            hint = (
                exc.hint()
                if isinstance(exc, Livelock)
                else "the history keeps them creating and deleting at one instant (see rejectImages in the README)."
            )
            err(f"error: the controllers never came to rest: {exc}. Nothing was appended; {hint}\n")
            return 1
        raise


def _silence_stdout() -> None:
    """After a closed pipe (`kreplay log | head`), keep Python's exit flush from failing again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
