"""Validation errors as upstream's `field.Error`: mirrors apimachinery's
`pkg/util/validation/field` (`Error`, `ErrorBody`, `Required`, `Forbidden`, `Invalid`,
`Duplicate`, `NotSupported`, `TooLong`).

Messages are those of `field.Error.Error()` in current Kubernetes: the bad value is printed as Go
prints it (`%q` for strings, JSON for maps and structs; internal Go structs without JSON tags
show their Go field names, e.g. `{"Type":"Random","RollingUpdate":null}`), and maps are printed
with sorted keys.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import msgspec

from engine.api.objects import to_builtins


class FieldError(msgspec.Struct, frozen=True):
    """One validation failure, as upstream's `field.Error`: a field path and its message."""

    path: str
    message: str

    def __str__(self) -> str:
        # mirrors field.Error.Error()
        return f"{self.path}: {self.message}"


Errors = list[FieldError]


class GoStruct(dict):  # type: ignore[type-arg]
    """A Go struct for `render`: its fields keep their order, where a Go map's keys sort."""


class Stringer(str):
    """A value Go prints with its String() method (a time.Time): shown bare, not quoted."""


def _json_string(text: str) -> str:
    # Go's encoding/json escapes HTML characters and the JS line separators
    out = json.dumps(text, ensure_ascii=False)
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        out = out.replace(char, escaped)
    return out


def _json(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(_json(v) for v in value) + "]"
    if isinstance(value, dict):
        items = value.items() if isinstance(value, GoStruct) else sorted(value.items())
        return "{" + ",".join(f"{_json_string(str(k))}:{_json(v)}" for k, v in items) + "}"
    return _json(to_builtins(value))


def render(value: Any) -> str:
    # mirrors field.Error.ErrorBody: simple values as %v / %q, a fmt.Stringer (a time) as its
    # String(), everything else as JSON
    if isinstance(value, Stringer):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # Go's %q, for the printable text we see
    return _json(value)


def _detail(text: str, detail: str) -> str:
    return f"{text}: {detail}" if detail else text


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, _detail("Required value", detail))


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, _detail("Forbidden", detail))


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, _detail(f"Invalid value: {render(value)}", detail))


def duplicate(path: str, value: Any, detail: str = "") -> FieldError:
    return FieldError(path, _detail(f"Duplicate value: {render(value)}", detail))


def not_supported(path: str, value: Any, valid: Iterable[str]) -> FieldError:
    quoted = ", ".join(json.dumps(v) for v in valid)
    return FieldError(path, f"Unsupported value: {render(value)}: supported values: {quoted}")


def too_long(path: str, limit: int) -> FieldError:
    return FieldError(path, f"Too long: may not be more than {limit} bytes")


def aggregate(errors: Errors) -> str:
    """Mirrors field.ErrorList.ToAggregate().Error(): one error as it is, several (each once, in
    order) in brackets, as NewInvalid's `%s %q is invalid: %v` prints them."""
    texts = list(dict.fromkeys(str(e) for e in errors))
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
