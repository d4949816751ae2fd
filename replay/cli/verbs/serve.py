"""`kreplay serve`: the replayed cluster over the Kubernetes API, read-only, for kubectl and
client libraries (`--at TIME`/`--position N` pin the position reads see; watches replay the
log's changes after it at `--speed`)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from replay.cli.common import Parents, Subparsers, UsageError, UserError, open_store, out


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "serve",
        parents=[parents.store],
        help="serve the replayed cluster to kubectl and client libraries (read-only)",
    )
    p.add_argument("--address", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8001, help="port to listen on (default 8001; 0 picks a free one)")
    when = p.add_mutually_exclusive_group()
    when.add_argument("--at", default="", metavar="TIME", help="serve the cluster as of this virtual time (RFC 3339, e.g. 2026-11-20T10:05:00Z)")
    when.add_argument("--position", type=int, default=None, metavar="N", help="serve the cluster as of log position N")
    p.add_argument("--speed", default="1x", help="how fast watches replay the log after that: 1x (as it happened), 10x, ... or max (default 1x)")
    p.add_argument("--kubeconfig", default="", metavar="PATH", help="also write a kubeconfig pointing at the server to PATH")
    p.set_defaults(func=cmd_serve)


def _time(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--at: {text!r} is not an RFC 3339 time such as 2026-11-20T10:05:00Z") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def kubeconfig(url: str) -> str:
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: kreplay\n  cluster:\n    server: {url}\n"
        "users:\n- name: kreplay\n  user: {}\n"
        "contexts:\n- name: kreplay\n  context:\n    cluster: kreplay\n    user: kreplay\n"
        "current-context: kreplay\n"
    )


def cmd_serve(args: argparse.Namespace) -> int:
    from replay.serve.reading import Replay
    from replay.serve.server import bind, run
    from replay.serve.watch import parse_speed

    try:
        speed = parse_speed(args.speed)
    except ValueError as exc:
        raise UsageError(f"--speed: {exc}") from None
    if args.position is not None and args.position < 0:
        raise UsageError("--position: expected a non-negative integer")
    at = _time(args.at) if args.at else None
    store = open_store(args)
    replay = Replay(store)
    head = replay.head()
    if head == 0:
        store.close()
        raise UserError(f"error: {store.url} holds no events: replay a history into it first (kreplay replay HISTORY --store {store.url})")
    if args.position is not None and args.position > head:
        store.close()
        raise UserError(f"error: --position {args.position} is past the end of the log (the last position is {head})")
    if at is not None:
        replay.pinned = replay.position_at(at)
    elif args.position is not None:
        replay.pinned = args.position
    try:
        sock = bind(args.address, args.port)
    except OSError as exc:
        store.close()
        raise UserError(f"error: cannot listen on {args.address}:{args.port}: {exc.strerror or exc}") from None
    host, port = sock.getsockname()[:2]
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    position = replay.current()
    now = at or replay.cluster(position).now
    when = now.isoformat().replace("+00:00", "Z") if now else "-"
    pace = "as fast as they can" if args.speed.strip().lower() in ("max", "inf") else f"at {args.speed}"
    pinned = f"as of position {position} of {head} ({when})" if replay.pinned is not None else f"at the log's end (position {head}, {when}), following it"
    if args.kubeconfig:
        Path(args.kubeconfig).write_text(kubeconfig(url))
    out(f"Serving {store.url} read-only at {url}, {pinned}; watches replay later changes {pace}.")
    out(f"  kubectl --server {url} get pods -A" + (f"      (or: export KUBECONFIG={args.kubeconfig})" if args.kubeconfig else ""))
    out(f"  kubectl --server {url}/position/N get pods -A   (the cluster as of position N; /at/TIME/ for a time)")
    out("Press Ctrl-C to stop.")
    sys.stdout.flush()
    try:
        run(replay, sock, speed, at)
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        store.close()
    return 0
