"""`kreplay import [FORMAT] FILE... [-o HISTORY.jsonl]`: a real cluster's capture as a history
and its recorded outcome."""

from __future__ import annotations

import argparse

from replay.cli.common import Parents, Subparsers

DESCRIPTION = """Import a capture of a real cluster as a history (docs/history-format.md) and its recorded outcome (HISTORY.outcome.jsonl beside it).

 FORMAT is audit (kube-apiserver audit log: JSON lines, an EventList, or the kubernetes-event-dataset's CSV), watch (kubectl get -w -o json, or WatchEvent lines), simkube (a SimKube .sktrace) or snapshot (kubectl get -A -o json|yaml, or a Sieve end state); left out, the content tells it. gzip is read transparently; several files of one format merge by time.

 Writes by people, CI, operators, kubelets and the scheduler become history lines, each naming its source (file:line); writes of the controllers kreplay models (DaemonSet, StatefulSet, Deployment, ReplicaSet, garbage collectors) are the recorded outcome, refused ones (4xx, 409) included. Fields the capture did not hold (a Metadata-level audit log has no bodies) are inferred, listed per object on stderr and in the outcome's header. The summary ends on stderr. Both files are written whole, or neither."""

EXAMPLES = """  # An audit log (RequestResponse level) to a history, then replay it
  kreplay import audit tests/captures/seeds/web-app.audit.jsonl -o web.jsonl
  kreplay replay web.jsonl

  # The format is sniffed; gzip is fine
  kreplay import /var/log/kubernetes/audit.log.gz -o cluster.jsonl

  # Import and replay in one step
  kreplay replay --from simkube tests/captures/simkube/dsb-scaling.sktrace"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    from replay.cli.progress import add_progress

    p = subparsers.add_parser("import", parents=[parents.store], help="Import an audit log, watch stream, SimKube trace or snapshot as a history", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay import [FORMAT] FILE... [-o HISTORY.jsonl] [options]")
    p.add_argument("files", nargs="+", metavar="[FORMAT] FILE")
    p.add_argument("-o", "--output", default="", metavar="HISTORY.jsonl", help="The history to write (default: the first file's name with .jsonl, in the current directory); the recorded outcome goes beside it as HISTORY.outcome.jsonl")
    add_progress(p)
    p.set_defaults(func=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from replay.cli.common import UserError, out
    from replay.cli.importing import load, print_summary, split_format
    from replay.importers.files import write_import

    fmt, files = split_format(args.files, "import")
    target = Path(args.output) if args.output else Path(Path(files[0]).name.split(".")[0] + ".jsonl")
    if any(Path(f).resolve() == target.resolve() for f in files if f != "-"):
        raise UserError(f"error: {target}: the history would overwrite the capture; name another with -o")
    result = load(fmt, files, args.progress)
    try:
        history, outcome = write_import(result, target)
    except OSError as exc:
        raise UserError(f"error: {target}: cannot write: {exc.strerror}; nothing written") from None
    out(f"imported {result.format} {', '.join(files)}: {len(result.lines)} operations to {history}, "
        f"{len(result.writes)} recorded controller writes to {outcome}")
    print_summary(result)
    return 0
