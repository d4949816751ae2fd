"""The printing flags (`-o`, `--no-headers`, `--sort-by`, `-L`, `--show-labels`, `--show-kind`,
`--template`) and the choice of printer, as genericclioptions.PrintFlags and get's printing
make them: verbs hand over what they found, the printers in `replay.printers` do the rest."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from replay.cli.common import UsageError, UserError, add_bool

if TYPE_CHECKING:
    from replay.cli.resources import Info

FORMATS = ("custom-columns", "custom-columns-file", "json", "jsonpath", "jsonpath-as-json", "jsonpath-file", "name", "wide", "yaml")
WRITE_FORMATS = ("json", "jsonpath", "jsonpath-as-json", "jsonpath-file", "name", "yaml")


def add_output_flags(p: argparse.ArgumentParser, *, tables: bool = True) -> None:
    formats = FORMATS if tables else WRITE_FORMATS
    p.add_argument(
        "-o",
        "--output",
        default="",
        help=f"Output format. One of: ({', '.join(formats)}). See custom columns and jsonpath template in kubectl's documentation: https://kubernetes.io/docs/reference/kubectl/.",
    )
    p.add_argument("--template", default="", help="Template string or path to template file to use when -o=jsonpath or -o=jsonpath-file.")
    add_bool(p, "--allow-missing-template-keys", default=True, help="If true, ignore any errors in templates when a field or map key is missing in the template. Only applies to jsonpath output formats.")
    if not tables:
        return
    add_bool(p, "--no-headers", help="When using the default or custom-column output format, don't print headers (default print headers).")
    p.add_argument("--sort-by", default="", help="If non-empty, sort list types using this field specification.  The field specification is expressed as a JSONPath expression (e.g. '{.metadata.name}'). The field in the API resource specified by this JSONPath expression must be an integer or a string.")
    p.add_argument("-L", "--label-columns", action="append", default=[], help="Accepts a comma separated list of labels that are going to be presented as columns. Names are case-sensitive. You can also use multiple flag options like -L label1 -L label2...")
    add_bool(p, "--show-labels", help="When printing, show all labels as the last column (default hide labels column)")
    add_bool(p, "--show-kind", help="If present, list the resource type for the requested object(s).")


class Format(NamedTuple):
    name: str  # "", "wide", "json", ...
    argument: str  # what follows `=`: a template, a column spec or a file name


def parse_format(args: argparse.Namespace, *, tables: bool = True) -> Format:
    text = getattr(args, "output", "") or ""
    name, _, argument = text.partition("=")
    allowed = FORMATS if tables else WRITE_FORMATS
    if name and name not in allowed:
        raise UserError(f'error: unable to match a printer suitable for the output format "{text}", allowed formats are: {",".join(allowed)}')
    if name in ("jsonpath", "jsonpath-file", "jsonpath-as-json") and not argument:
        argument = getattr(args, "template", "") or ""
        if not argument:
            raise UserError("error: template format specified but no template given")
    if name in ("custom-columns", "custom-columns-file") and not argument:
        raise UserError("error: custom-columns format specified but no custom columns given")
    return Format(name, argument)


def _manifest(info: Info) -> dict[str, Any]:
    from replay.printers import manifests

    return manifests.manifest(info.obj)


def sort_infos(infos: Sequence[Info], field: str) -> list[Info]:
    if not field:
        return list(infos)
    from replay.printers.sorting import SortError, sort_items

    try:
        return sort_items(list(infos), [_manifest(i) for i in infos], field)
    except SortError as exc:
        raise UserError(f"error: {exc}") from None


def _read_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8-sig") as f:
            return f.read()
    except OSError as exc:
        raise UserError(f"error: error reading template {path}, {exc.strerror}") from None


def _jsonpath(fmt: Format, document: dict[str, Any], allow_missing: bool) -> str:
    from replay.printers.jsonpath import JSONPath, JSONPathError

    template = _read_file(fmt.argument) if fmt.name == "jsonpath-file" else fmt.argument
    try:
        parser = JSONPath("out", allow_missing_keys=allow_missing, output_json=fmt.name == "jsonpath-as-json").parse(template)
    except JSONPathError as exc:
        raise UserError(f"error: error parsing jsonpath {template}, {exc}") from None
    try:
        return parser.execute(document)
    except JSONPathError as exc:
        raise UserError(
            f'error: error executing jsonpath "{template}": Error executing template: {exc}. '
            f"Printing more information for debugging the template:\n\ttemplate was:\n\t\t{template}\n"
        ) from None


def render_objects(
    args: argparse.Namespace,
    infos: Sequence[Info],
    *,
    now: datetime | None,
    single_item: bool,
    multiple_types: bool = False,
    all_namespaces: bool = False,
) -> str:
    """What `get` prints for `infos` in the chosen format (tables by kind, separated by a blank
    line, as kubectl prints several kinds). Returns "" when a table would have no rows."""
    from replay.cli.resources import group_by_kind
    from replay.printers import manifests, tables

    fmt = parse_format(args)
    infos = sort_infos(infos, getattr(args, "sort_by", ""))
    objects = [i.obj for i in infos]
    if fmt.name == "name":
        return tables.names(objects)
    if fmt.name == "json":
        return manifests.as_json(objects, single=single_item)
    if fmt.name == "yaml":
        return manifests.as_yaml(objects, single=single_item)
    if fmt.name.startswith("jsonpath"):
        document = manifests.document(objects, single_item)
        return _jsonpath(fmt, document, bool(getattr(args, "allow_missing_template_keys", True)))
    if fmt.name.startswith("custom-columns"):
        from replay.printers import columns

        spec = _read_file(fmt.argument) if fmt.name == "custom-columns-file" else fmt.argument
        try:
            cols = columns.from_template(spec) if fmt.name == "custom-columns-file" else columns.from_spec(spec)
            return columns.render(cols, [manifests.manifest(o) for o in objects], no_headers=bool(getattr(args, "no_headers", False)))
        except columns.ColumnsError as exc:
            raise UserError(f"error: {exc}") from None
    groups = group_by_kind(infos)
    with_kind = bool(getattr(args, "show_kind", False)) or multiple_types or len({i.kind for i in infos}) > 1
    chunks = []
    effective_now = now or datetime.fromtimestamp(0).astimezone()
    for kind, members in groups:
        chunks.append(
            tables.table(
                kind,
                [m.obj for m in members],
                effective_now,
                wide=fmt.name == "wide",
                all_namespaces=all_namespaces,
                with_kind=with_kind,
                label_columns=[k for v in getattr(args, "label_columns", []) for k in v.split(",") if k],
                show_labels=bool(getattr(args, "show_labels", False)),
                no_headers=bool(getattr(args, "no_headers", False)),
            )
        )
    return "\n".join(c.rstrip("\n") + "\n" for c in chunks if c)


def check_format(args: argparse.Namespace, *, tables: bool = True) -> Format:
    """Validate -o before doing anything (kubectl refuses a bad format up front)."""
    try:
        return parse_format(args, tables=tables)
    except UserError:
        raise
    except ValueError as exc:  # pragma: no cover - defensive
        raise UsageError(str(exc)) from None
