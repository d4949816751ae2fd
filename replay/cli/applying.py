"""What `apply` and `create` share: documents from -f become Apply operations at the store's
virtual time, and kubectl's created / configured / unchanged (or AlreadyExists) per object."""

from __future__ import annotations

import argparse
from typing import Any


def apply_files(args: argparse.Namespace, *, create_only: bool) -> int:
    """apply and create: the same road, except that create refuses what already exists."""
    import sys

    from engine.api.objects import kind_of
    from engine.operations import Apply
    from replay.cli import resources
    from replay.cli.common import (
        UsageError,
        UserError,
        cause_of,
        commit,
        load_cluster,
        noun,
        open_store,
        operation_time,
        touched,
    )
    from replay.cli.output import check_format

    verb = "create" if create_only else "apply"
    if not args.filename:
        raise UsageError("must specify one of -f and -k", verb=verb)
    check_format(args, tables=False)
    request = resources.Request.of(args, [])
    result = resources.build(request, None, verb=verb)
    if not result.infos:
        raise UserError(f"error: {', '.join(args.filename)}: no objects passed to {verb}")  # kubectl's words, after the files (every input error names its file)
    cause = (getattr(args, "cause", None) or "") or cause_of(args)
    errors: list[str] = []
    with open_store(args, write=True) as store:
        cluster = load_cluster(store)
        at = operation_time(args, cluster)
        operations, objects, existed, sources = [], [], [], {}
        for line, info in enumerate(result.infos, start=1):
            sources[line] = info
            obj = resources.decode(info)
            old = cluster.get(info.kind, info.namespace, obj.metadata.name)
            if create_only and old is not None:
                errors.append(f'Error from server (AlreadyExists): error when creating "{info.source.split(":")[0]}": {resources.plural(info.kind)} "{obj.metadata.name}" already exists')
                continue
            operations.append(Apply(at=at, object=obj, actor="kubectl", cause=cause, line=line))
            objects.append(obj)
            existed.append(old is not None)

        def messages(outcome: Any) -> list[str]:
            texts = []
            for obj, was in zip(objects, existed, strict=True):
                if not was:
                    texts.append(f"{noun(obj)} created")
                elif touched(outcome, kind_of(obj), obj.metadata.namespace, obj.metadata.name):
                    texts.append(f"{noun(obj)} configured")
                else:
                    texts.append(f"{noun(obj)} unchanged")
            return texts

        def rejected(exc: Any) -> UserError:
            from replay.safeload import located

            info = sources.get(exc.line)
            if info is None:
                return UserError(f"error: {exc}")
            return UserError("error: " + located(info.path, info.locate(exc.field), exc.field, exc.message))

        if operations:
            commit(store, operations, args, messages, rejected=rejected)
    for error in errors:
        sys.stderr.write(error + "\n")
    return 1 if errors else 0
