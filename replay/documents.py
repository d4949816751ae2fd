"""Kubernetes objects in a file or stream, however kubectl users write them down.

One reader for `apply -f`, `create -f` and the snapshot importer: a file (or `-` for stdin, or
bytes) may hold

- one object, in YAML or JSON;
- several YAML documents separated by `---`;
- JSON objects one after another, pretty-printed or not (what `kubectl get -w -o json` prints),
  read as JSON whenever the first character is `{`, as kubectl's YAMLOrJSONDecoder sniffs it;
- a `List` (`kind: List` as `kubectl get -A -o json|yaml` prints, or any `*List` such as
  `DeploymentList`) whose `items` are the objects, nested Lists flattened;
- any of these gzip-compressed (read transparently, known by gzip's magic bytes).

`objects()` yields `(source, object)` pairs; `entries()` the same with the file, line and a
field-line finder for error messages. `source` is `FILE:LINE` where the object starts, or
`FILE:LINE#N` for the item at index N of a List (LINE is the item's own line).

Everything goes through replay.safeload's limits: UTF-8, nesting depth, duplicate keys,
recursive YAML anchors; each object at most 3 MiB (kube-apiserver's limit on one request body);
a List may be larger, but YAML aliases may not expand a document beyond the size of the file
that holds it; a gzip file may not decompress beyond `MAX_FILE_BYTES`. Every error is an
`InputError` naming the file and line.
"""

from __future__ import annotations

import gzip
import io
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from replay.safeload import (
    MAX_DOCUMENT_BYTES,
    Document,
    InputError,
    child,
    decode_text,
    load_json_documents,
    load_yaml_documents,
    size_text,
)

MAX_FILE_BYTES = 1024 * 1024 * 1024  # what one file may hold once decompressed
_GZIP_MAGIC = b"\x1f\x8b"
_JSON_WHITESPACE = " \t\r\n"


@dataclass(frozen=True)
class Entry:
    """One object of a file, with where it is."""

    object: dict[str, Any]
    path: str  # the file as given (`-` for stdin)
    line: int  # the line the object starts at
    item: str = ""  # `items[N]` (or `items[N].items[M]` for nested Lists) for a List's item
    index: int | None = None  # N, the item's index in its List
    lines: Callable[[str], int] | None = None  # field path of the document -> its line

    @property
    def source(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}#{self.index}" if self.index is not None else where

    def line_of(self, field_path: str) -> int:
        """The line of a field of this object (`spec.replicas`), or the object's own line."""
        full = ".".join(p for p in (self.item, field_path) if p)
        return (self.lines(full) if self.lines is not None else 0) or self.line

    def error(self, field_path: str, message: str) -> InputError:
        full = ".".join(p for p in (self.item, field_path) if p)
        return InputError(self.line_of(field_path), full, message, self.path)


def objects(source: str | bytes | BinaryIO, name: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """`(source, object)` for every object in a file path, `-` (stdin), bytes or a binary stream."""
    for entry in entries(source, name):
        yield entry.source, entry.object


def entries(source: str | bytes | BinaryIO, name: str = "") -> Iterator[Entry]:
    """Every object in a file path, `-` (stdin), bytes or a binary stream, in file order."""
    path, data = _read(source, name)
    text = decode_text(data, path)
    for doc in _documents(text, path):
        if not isinstance(doc.data, dict):
            raise doc.error("", f"Expected an object, got {_type_name(doc.data)}")
        yield from _flatten(doc.data, path, doc.line, "", None, doc.line_of)


def read_bytes(source: str | bytes | BinaryIO, name: str = "") -> tuple[str, bytes]:
    """The name to report and the (decompressed) bytes of a path, `-`, bytes or a stream."""
    return _read(source, name)


def _read(source: str | bytes | BinaryIO, name: str) -> tuple[str, bytes]:
    if isinstance(source, bytes):
        path, raw = name or "-", source
    elif isinstance(source, str):
        path = name or source
        try:
            if source == "-":
                stdin = sys.stdin
                raw = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode()
            else:
                with open(source, "rb") as f:
                    raw = f.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise InputError(0, "", exc.strerror or str(exc), path) from None
    else:
        path = name or getattr(source, "name", "-")
        raw = source.read(MAX_FILE_BYTES + 1)
    if raw[:2] == _GZIP_MAGIC:
        raw = _gunzip(raw, path)
    if len(raw) > MAX_FILE_BYTES:
        raise InputError(0, "", f"more than {size_text(MAX_FILE_BYTES)}: the most one file may hold", path)
    return path, raw


def _gunzip(raw: bytes, path: str) -> bytes:
    out = io.BytesIO()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as f:
            while chunk := f.read(1024 * 1024):
                out.write(chunk)
                if out.tell() > MAX_FILE_BYTES:
                    raise InputError(0, "", f"decompresses to more than {size_text(MAX_FILE_BYTES)}: the most one file may hold", path)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(0, "", f"not a readable gzip file: {exc}", path) from None
    return out.getvalue()


# --- documents ----------------------------------------------------------------------------------


def _documents(text: str, path: str) -> list[Document]:
    if text.lstrip(_JSON_WHITESPACE).startswith("{"):
        return load_json_documents(text, path)
    return load_yaml_documents(text, path, max_bytes=len(text.encode("utf-8")))


# --- Lists ---------------------------------------------------------------------------------------


def is_list(obj: dict[str, Any]) -> bool:
    """A List as kubectl tells one: its kind ends in `List` and it has `items`."""
    kind = obj.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and isinstance(obj.get("items"), list)


def _flatten(obj: dict[str, Any], path: str, line: int, item: str, index: int | None, lines: Callable[[str], int]) -> Iterator[Entry]:
    if is_list(obj):
        for j, sub in enumerate(obj["items"]):
            at = child(item, "items") + f"[{j}]"
            sub_line = lines(at) or line
            if not isinstance(sub, dict):
                raise InputError(sub_line, at, f"Expected an object, got {_type_name(sub)}", path)
            yield from _flatten(sub, path, sub_line, at, j, lines)
        return
    _checksize_text(obj, path, line, item)
    yield Entry(obj, path, line, item, index, lines)


def _checksize_text(obj: dict[str, Any], path: str, line: int, item: str) -> None:
    import msgspec

    size = len(msgspec.json.encode(obj))
    if size > MAX_DOCUMENT_BYTES:
        raise InputError(line, item, f"this object holds {size_text(size)}: one object may hold at most {size_text(MAX_DOCUMENT_BYTES)}, kube-apiserver's limit on one request", path)


def _type_name(value: Any) -> str:
    return type(value).__name__  # as the rest of kreplay's messages name a value's type
