"""`kreplay report KIND/NAME -o FILE`: what a workload's rollouts did, as one self-contained HTML
page (a timeline per pod, counts against the budget, every decision), Markdown or JSON."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from replay.cli.common import (
    Parents,
    Subparsers,
    UsageError,
    UserError,
    namespace_for,
    open_store,
    out,
    parse_kind_name,
)

FORMATS = {"html": "html", "htm": "html", "md": "md", "markdown": "md", "json": "json"}


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "report",
        parents=[parents.store, parents.namespace],
        help="a rollout report: timeline, budget and decisions (HTML, Markdown or JSON)",
    )
    p.add_argument("target", metavar="KIND/NAME", help="the workload: ds/NAME, sts/NAME or deploy/NAME")
    p.add_argument(
        "-o",
        "--output",
        default="md",
        metavar="FILE|FORMAT",
        help="a file whose suffix picks the format (report.html, report.md, report.json), or html, md or json for stdout (default md)",
    )
    p.set_defaults(func=cmd_report)


def _format(output: str) -> tuple[str, Path | None]:
    if output in FORMATS:
        return FORMATS[output], None
    suffix = Path(output).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise UsageError(f"-o {output}: expected a file ending in .html, .md or .json, or one of html, md, json")
    return FORMATS[suffix], Path(output)


def cmd_report(args: argparse.Namespace) -> int:
    fmt, path = _format(args.output)
    kind, name = parse_kind_name(args.target)
    namespace = namespace_for(kind, args)
    from replay.report import facts, text

    with open_store(args) as store:
        try:
            report = facts.build(lambda after: store.read(after=after), kind, namespace, name)
        except facts.ReportError as exc:
            raise UserError(f"error: {exc}") from None
    if fmt == "html":
        from replay.report import html

        body = html.page(report)
    elif fmt == "json":
        body = text.as_json(report)
    else:
        body = text.as_markdown(report)
    if path is None:
        sys.stdout.write(body)
        return 0
    target = path.resolve()
    if not target.parent.is_dir():
        raise UserError(f"error: -o {args.output}: no such directory {target.parent}")
    # written beside the target and renamed: a failed run leaves no half-written report
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(body)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    s = report.summary
    state = f"stuck: {s.why}" if s.stuck else "not stuck"
    out(f"wrote {args.output} ({target.stat().st_size:,} bytes): {text.title(report)}, {len(report.rollouts)} rollouts, {state}")
    if fmt == "html":
        out(f"  open it in a browser: {target.as_uri()}")
    return 0
