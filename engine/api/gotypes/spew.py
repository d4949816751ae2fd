"""go-spew's `%#v` of a Go value, rendered from the value's JSON and its Go type layout.

`controller.ComputeHash` hashes `spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods:
true, SpewKeys: true}.Fprintf(h, "%#v", template)` (1.18: pkg/util/hash.DeepHashObject) or the
same config plus DisablePointerAddresses and DisableCapacities (`dump.ForHash`, 1.26 on), which
changes nothing for `%#v`: Indent is only for Dump, addresses and capacities only for `%+v`. So
one renderer serves every release; only the type layout differs. The rules (spew/format.go,
v1.1.1, the same code as the d8f796a Kubernetes pins since 1.2x):

- a value's type is written before it as `(v1.PodSpec)` unless its container already did: slice
  and array elements and map keys and values are written without; struct fields with;
- struct: `{Name:value Other:value}`, every field (exported or not) in declaration order;
- pointer: `(*int64)30`, nil `(*int64)<nil>`; as a slice element or map value `<*>30` / `<nil>`;
- slice: `[a b]`, nil `<nil>`; map: `map[k:v k2:v2]` keys sorted (strings by bytes), nil `<nil>`;
- string: its bytes, unquoted; bool `true`/`false`; integers in decimal.

The value comes from a controller's informer, which decodes the API server's protobuf: an
empty list or map arrives nil (`<nil>`), a present pointer (even to `{}` or `false`) non-nil,
quantities re-parsed from their canonical text (`quantity.py`), times truncated to seconds.
JSON keys unknown to the release's types are dropped, as Go's decoder drops them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from engine.api.gotypes import quantity

# parsed type expressions: ("ptr", t) | ("slice", t) | ("map", k, v) | ("named", name) | ("basic", name)
TypeNode = tuple[Any, ...]
GO_INTS = frozenset({
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uintptr",
})
_GO_EPOCH_OFFSET = (
    62135596800  # seconds from 0001-01-01 to 1970-01-01: time.Time's ext for a wall-less time
)


class GoTypeError(ValueError):
    pass


class Renderer:
    """Renders JSON values as go-spew `%#v` for one release's type layout (a gotypes JSON)."""

    def __init__(self, layout: dict[str, Any]) -> None:
        self.types: dict[str, dict[str, Any]] = layout["types"]
        self.packages: dict[str, str] = layout["packages"]
        self.root: str = layout["root"]
        self._nodes: dict[str, TypeNode] = {}
        self._names: dict[str, str] = {}
        self._fields: dict[str, list[tuple[str, TypeNode, str]]] = {}
        self._special: dict[str, Callable[[Any], Any]] = {
            "resource.Quantity": _quantity_fields,
            "intstr.IntOrString": _intorstring_fields,
            "metav1.Time": _time_fields,
            "metav1.MicroTime": _time_fields,
        }

    # -- types -------------------------------------------------------------------------------
    def node(self, expr: str) -> TypeNode:
        found = self._nodes.get(expr)
        if found is None:
            found, rest = self._parse(expr)
            if rest:
                raise GoTypeError(f"cannot parse Go type {expr!r}")
            self._nodes[expr] = found
        return found

    def _parse(self, expr: str) -> tuple[TypeNode, str]:
        if expr.startswith("*"):
            inner, rest = self._parse(expr[1:])
            return ("ptr", inner), rest
        if expr.startswith("[]"):
            inner, rest = self._parse(expr[2:])
            return ("slice", inner), rest
        if expr.startswith("map["):
            key, rest = self._parse(expr[4:])
            if not rest.startswith("]"):
                raise GoTypeError(f"cannot parse Go type {expr!r}")
            value, rest = self._parse(rest[1:])
            return ("map", key, value), rest
        m = re.match(r"[A-Za-z_0-9]+(\.[A-Za-z_0-9]+)?", expr)
        if not m:
            raise GoTypeError(f"cannot parse Go type {expr!r}")
        name = m.group(0)
        return (("named", name) if "." in name else ("basic", name)), expr[m.end() :]

    def display(self, node: TypeNode) -> str:
        """reflect.Type.String(): `[]v1.Container`, `*int64`, `map[string]string`."""
        tag = node[0]
        if tag == "ptr":
            return "*" + self.display(node[1])
        if tag == "slice":
            return "[]" + self.display(node[1])
        if tag == "map":
            return f"map[{self.display(node[1])}]{self.display(node[2])}"
        if tag == "basic":
            return node[1]
        name = node[1]
        shown = self._names.get(name)
        if shown is None:
            pkg, _, local = name.partition(".")
            shown = self._names[name] = f"{self.packages[pkg]}.{local}"
        return shown

    def underlying(self, node: TypeNode) -> TypeNode | dict[str, Any]:
        """A named type's underlying type node, or its declaration if it is a struct."""
        while node[0] == "named":
            decl = self.types.get(node[1])
            if decl is None:
                raise GoTypeError(f"Go type {node[1]} is not in the layout")
            if "fields" in decl:
                return decl
            if decl.get("opaque"):
                raise GoTypeError(f"cannot render a non-nil {node[1]}")
            node = self.node(decl["underlying"])
        return node

    def fields(self, name: str) -> list[tuple[str, TypeNode, str]]:
        found = self._fields.get(name)
        if found is None:
            found = self._fields[name] = [
                (f, self.node(t), j) for f, t, j in self.types[name]["fields"]
            ]
        return found

    # -- values ------------------------------------------------------------------------------
    def render(self, value: Any, expr: str | None = None) -> str:
        """`%#v` of `value` (JSON) read as the Go type `expr` (the layout's root by default)."""
        out: list[str] = []
        self._write(out, self.node(expr or self.root), value, False)
        return "".join(out)

    def _write(self, out: list[str], node: TypeNode, value: Any, ignore_type: bool) -> None:
        if node[0] == "ptr":
            if value is None:
                out.append("<nil>" if ignore_type else f"({self.display(node)})<nil>")
                return
            out.append("<*>" if ignore_type else f"({self.display(node)})")
            self._write(out, node[1], value, True)
            return
        if not ignore_type:
            out.append(f"({self.display(node)})")
        if node[0] == "named" and node[1] in self._special:
            value = self._special[node[1]](value)
        kind = self.underlying(node)
        if isinstance(kind, dict):
            self._write_struct(out, node[1], value)
        elif kind[0] == "basic":
            out.append(_scalar(kind[1], value))
        elif kind[0] == "slice":
            if not value:
                out.append("<nil>")
                return
            out.append("[")
            for i, item in enumerate(value):
                if i:
                    out.append(" ")
                self._write(out, kind[1], item, True)
            out.append("]")
        elif kind[0] == "map":
            if not value:
                out.append("<nil>")
                return
            out.append("map[")
            key_kind = self.underlying(kind[1])
            if isinstance(key_kind, dict) or key_kind[1] != "string":
                raise GoTypeError(f"map keys of {self.display(kind[1])} are not supported")
            for i, key in enumerate(sorted(value, key=lambda k: k.encode())):
                if i:
                    out.append(" ")
                out.append(key)
                out.append(":")
                self._write(out, kind[2], value[key], True)
            out.append("]")
        else:
            raise GoTypeError(f"cannot render {self.display(node)}")

    def _write_struct(self, out: list[str], name: str, value: Any) -> None:
        if value is None:
            value = {}
        elif not isinstance(value, dict):
            raise GoTypeError(f"{name}: expected an object, got {value!r}")
        out.append("{")
        for i, (field, node, json_name) in enumerate(self.fields(name)):
            if i:
                out.append(" ")
            out.append(field)
            out.append(":")
            # an inline (embedded, json:",inline") struct reads its fields from the same object
            self._write(out, node, value if json_name == "" else value.get(json_name), False)
        out.append("}")


def _scalar(kind: str, value: Any) -> str:
    if kind == "string":
        if value is None:
            return ""
        if not isinstance(value, str):
            raise GoTypeError(f"expected a string, got {value!r}")
        return value
    if kind == "bool":
        return "true" if value else "false"
    if kind in GO_INTS:
        if value is None:
            return "0"
        if isinstance(value, bool) or not isinstance(value, int):
            raise GoTypeError(f"expected an integer, got {value!r}")
        return str(value)
    raise GoTypeError(f"values of Go type {kind} are not supported")


def _quantity_fields(value: Any) -> dict[str, Any]:
    if value is None:
        q: dict[str, Any] = {"i": (0, 0), "d": None, "s": "", "Format": ""}
    else:
        q = quantity.parse(quantity.canonical(value))
    dec = None
    if q["d"] is not None:
        unscaled, scale = q["d"]
        words = []
        magnitude = abs(unscaled)
        while magnitude:
            words.append(magnitude & 0xFFFFFFFFFFFFFFFF)
            magnitude >>= 64
        dec = {"unscaled": {"neg": unscaled < 0, "abs": words}, "scale": scale}
    return {
        "i": {"value": q["i"][0], "scale": q["i"][1]},
        "d": {"Dec": dec},
        "s": q["s"],
        "Format": q["Format"],
    }


def _intorstring_fields(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, dict):  # already Go fields
        return value
    if isinstance(value, str):
        return {"Type": 1, "StrVal": value}
    return {"Type": 0, "IntVal": value}


def _time_fields(value: Any) -> dict[str, Any]:
    """metav1.Time{time.Time{wall, ext, loc}}: zero when unset; otherwise seconds only (the
    protobuf decoder drops nanoseconds), in UTC (loc nil; a controller whose local zone is not
    UTC would print its Location here: not modelled)."""
    if not value:
        return {"Time": {"wall": 0, "ext": 0, "loc": None}}
    if isinstance(value, datetime):
        when = value
    else:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return {"Time": {"wall": 0, "ext": int(when.timestamp()) + _GO_EPOCH_OFFSET, "loc": None}}
