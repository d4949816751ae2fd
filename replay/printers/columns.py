"""`-o custom-columns=HEADER:PATH,...` and `-o custom-columns-file=FILE`, as kubectl's
CustomColumnsPrinter prints them (kubectl/pkg/cmd/get/customcolumn.go): each PATH a relaxed
JSONPath (`.metadata.name`, `metadata.name`, `{.metadata.name}`), several results joined with
commas, `<none>` for none, laid out by the tabwriter kubectl uses for tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from replay.escape import terminal
from replay.printers.jsonpath import JSONPath, JSONPathError, go_sprint, relaxed
from replay.printers.tabwriter import tabwrite


class ColumnsError(Exception):
    pass


@dataclass(frozen=True)
class Column:
    header: str
    field_spec: str  # a complete JSONPath template, e.g. {.metadata.name}


def _relaxed(spec: str) -> str:
    try:
        return relaxed(spec)
    except JSONPathError as exc:
        raise ColumnsError(str(exc)) from None


def from_spec(spec: str) -> list[Column]:
    """NewCustomColumnsPrinterFromSpec."""
    if not spec:
        raise ColumnsError("custom-columns format specified but no custom columns given")
    columns = []
    for part in spec.split(","):
        header, sep, path = part.partition(":")
        if not sep:
            raise ColumnsError(f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>")
        columns.append(Column(header, _relaxed(path)))
    return columns


def from_template(text: str) -> list[Column]:
    """NewCustomColumnsPrinterFromTemplate: a header line and a spec line, split on whitespace."""
    lines = text.splitlines()
    if not lines:
        raise ColumnsError("invalid template, missing header line. Expected format is one line of space separated headers, one line of space separated column specs.")
    if len(lines) < 2:
        raise ColumnsError("invalid template, missing spec line. Expected format is one line of space separated headers, one line of space separated column specs.")
    headers, specs = lines[0].split(), lines[1].split()
    if len(headers) != len(specs):
        raise ColumnsError(f"number of headers ({len(headers)}) and field specifications ({len(specs)}) don't match")
    return [Column(h, _relaxed(s)) for h, s in zip(headers, specs, strict=True)]


def render(columns: Sequence[Column], items: Sequence[dict[str, Any]], *, no_headers: bool = False) -> str:
    """The table for `items` (manifests); headers once, as for one type of object."""
    parsers = []
    for i, column in enumerate(columns):
        try:
            parsers.append(JSONPath(f"column{i}", allow_missing_keys=True).parse(column.field_spec))
        except JSONPathError as exc:
            raise ColumnsError(str(exc)) from None
    rows = [] if no_headers else ["\t".join(c.header for c in columns)]
    for item in items:
        cells = []
        for parser in parsers:
            try:
                values = parser.find_results(item)
            except JSONPathError as exc:
                raise ColumnsError(str(exc)) from None
            texts = [] if values and values[0] else ["<none>"]
            texts += [terminal(go_sprint(v)) for group in values for v in group]
            cells.append(",".join(texts))
        rows.append("\t".join(cells))
    if not rows:
        return ""
    return tabwrite("".join(r + "\n" for r in rows), minwidth=6, padding=3)
