"""What every verb shares: the two error kinds, the parser class, the option groups verbs take
as `parents=`, and the helpers that open the store, resolve kinds and select objects.

Verbs import this module and nothing else under `replay.cli`; keep it small, since every verb
depends on it. A helper only one verb (or one family) needs stays in that verb's module.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

from engine.api.objects import CLUSTER_SCOPED, KubeObject
from engine.api.selectors import SelectorError, parse
from engine.api.state import Cluster
from engine.store import EventStore, StoreError, interrupted_message
from replay.kinds import UnknownKind, resolve


class UserError(Exception):
    """Rejected input: exit 1 with the message on stderr."""


class UsageError(Exception):
    """A command line that does not parse: exit 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


Subparsers = argparse._SubParsersAction  # what `register` receives: call .add_parser on it


@dataclass(frozen=True)
class Parents:
    """Option groups a verb passes as `parents=[...]`, in this order, to `add_parser`."""

    store: Parser  # --store
    namespace: Parser  # -n/--namespace, for verbs that address namespaced objects
    write: Parser  # --create, --wait, --encrypt: for verbs that append to the store


def add_write_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--create", action="store_true", help="create the store if it does not exist (replay always may)")
    parser.add_argument("--wait", action="store_true", help="wait for another writer to finish instead of failing")
    parser.add_argument(
        "--encrypt",
        action="store_true",
        help="encrypt a new store at rest (AES-GCM; the key, base64 of 32 random bytes, from $KREPLAY_CIPHER_KEY)",
    )


def open_store(args: argparse.Namespace, *, write: bool = False, create: bool = False) -> EventStore:
    """The one way verbs open the store. Reads open it read-only and never create it; writes
    create it only when the verb may (`replay`) or with --create. A read of a store holding an
    interrupted run says so on stderr (the run's positions are not shown)."""
    try:
        store = EventStore(
            args.store,
            create=write and (create or getattr(args, "create", False)),
            readonly=not write,
            encrypt=write and getattr(args, "encrypt", False),
        )
    except StoreError as exc:
        raise UserError(str(exc)) from None
    if not write and store.pending is not None:
        note = interrupted_message(store, store.pending).removeprefix("error: ").replace("; nothing was appended", "")
        sys.stderr.write(f"warning: {note}; reading what was committed before it\n")
    return store


def resolve_kind(text: str) -> str:
    try:
        return resolve(text)
    except UnknownKind as exc:
        raise UserError(f"error: {exc}") from None


def parse_kind_name(text: str) -> tuple[str, str]:
    kind, sep, name = text.partition("/")
    if not sep or not name:
        raise UsageError(f"expected KIND/NAME (e.g. ds/fluentd-elasticsearch), got {text!r}")
    return resolve_kind(kind), name


def namespace_for(kind: str, args: argparse.Namespace) -> str:
    return "" if kind in CLUSTER_SCOPED else args.namespace


def out(text: str) -> None:
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def select_objects(cluster: Cluster, kind: str, names: Sequence[str], args: argparse.Namespace) -> list[KubeObject]:
    try:
        selector = parse(args.selector) if args.selector else None
    except SelectorError as exc:
        raise UserError(f"error: unable to parse requirement: {exc}") from None
    namespace = None if (args.all_namespaces or kind in CLUSTER_SCOPED) else args.namespace
    objects = cluster.list(kind, namespace)
    if names:
        found = {o.metadata.name: o for o in objects}
        missing = [n for n in names if n not in found]
        if missing:
            from engine.api.apiserver import PLURALS

            raise UserError(f'Error from server (NotFound): {PLURALS[kind]} "{missing[0]}" not found')
        objects = [found[n] for n in names]
    if selector is not None:
        objects = [o for o in objects if selector.matches(o.metadata.labels)]
    return objects
