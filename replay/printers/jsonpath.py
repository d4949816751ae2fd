"""kubectl's JSONPath dialect (k8s.io/client-go/util/jsonpath), for `-o jsonpath=`,
`-o custom-columns=` and `--sort-by`.

A port, not a general JSONPath: text outside `{}` is printed as it is; inside, `.field`,
`['key']`, `[n]`, `[a:b]`, `[*]`, `[a,b]` unions, `..` recursive descent, `[?(@.x=="y")]`
filters (`==`, `!=`, `<`, `>`, `<=`, `>=`, and bare existence), `"quoted text"`, and
`range ... end` loops, with the same results and error messages as upstream, including its
quirks. Maps and lists print as compact JSON, as kubectl prints them. Where Go walks a map in
random order (`.*`, `..`), the map's own key order is used here.

No existing Python library speaks this dialect (jsonpath-ng has no `range`/`end` templates and
different filter syntax), hence this module; its tests port upstream's jsonpath_test.go cases.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any


class JSONPathError(Exception):
    pass


# --- nodes ---------------------------------------------------------------------------------------


@dataclass
class ListNode:
    nodes: list[Any] = field(default_factory=list)


@dataclass
class TextNode:
    text: str


@dataclass
class FieldNode:
    value: str


@dataclass
class Param:
    value: int = 0
    known: bool = False
    derived: bool = False


@dataclass
class ArrayNode:
    params: tuple[Param, Param, Param]


@dataclass
class FilterNode:
    left: ListNode
    right: ListNode
    operator: str


@dataclass
class IntNode:
    value: int


@dataclass
class FloatNode:
    value: float


@dataclass
class BoolNode:
    value: bool


@dataclass
class WildcardNode:
    pass


@dataclass
class RecursiveNode:
    pass


@dataclass
class UnionNode:
    nodes: list[ListNode]


@dataclass
class IdentifierNode:
    name: str


# --- parser (parser.go) --------------------------------------------------------------------------

_EOF = ""
_DICT_KEY = re.compile(r"^'([^']*)'$")
_SLICE = re.compile(r"^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$")
_FILTER = re.compile(r"^([^!<>=]+)([!<>=]+)(.+?)$", re.S)


def _is_terminator(r: str) -> bool:
    return r in (" ", "\t", "\r", "\n", _EOF, ".", ",", "[", "]", "$", "@", "{", "}")


def _is_alphanumeric(r: str) -> bool:
    return r == "_" or r.isalpha() or r.isdigit()


class Parser:
    def __init__(self, name: str) -> None:
        self.name = name
        self.root = ListNode()
        self.input = ""
        self.pos = 0
        self.start = 0
        self.width = 0

    def parse(self, text: str) -> ListNode:
        self.input = text
        self.root = ListNode()
        self.pos = 0
        self.start = 0
        self._parse_text(self.root)
        return self.root

    def _consume(self) -> str:
        value = self.input[self.start : self.pos]
        self.start = self.pos
        return value

    def _next(self) -> str:
        if self.pos >= len(self.input):
            self.width = 0
            return _EOF
        r = self.input[self.pos]
        self.width = 1
        self.pos += 1
        return r

    def _peek(self) -> str:
        r = self._next()
        self._backup()
        return r

    def _backup(self) -> None:
        self.pos -= self.width

    def _parse_text(self, cur: ListNode) -> None:
        while True:
            if self.input.startswith("{", self.pos):
                if self.pos > self.start:
                    cur.nodes.append(TextNode(self._consume()))
                self._parse_left_delim(cur)
                return
            if self._next() == _EOF:
                break
        if self.pos > self.start:
            cur.nodes.append(TextNode(self._consume()))

    def _parse_left_delim(self, cur: ListNode) -> None:
        self.pos += 1
        self._consume()
        node = ListNode()
        cur.nodes.append(node)
        self._parse_inside_action(node)

    def _parse_inside_action(self, cur: ListNode) -> None:
        while True:  # each case continues with the rest of the action, as the recursion upstream
            rest = self.input[self.pos :]
            if rest.startswith("}"):
                self.pos += 1
                self._consume()
                self._parse_text(self.root)
                return
            if rest.startswith("[?("):
                self._parse_filter(cur)
                continue
            if rest.startswith(".."):
                self._parse_recursive(cur)
                continue
            r = self._next()
            if r == _EOF or r in ("\r", "\n"):
                raise JSONPathError("unclosed action")
            if r == " ":
                self._consume()
            elif r in ("@", "$"):
                self._consume()
            elif r == "[":
                self._parse_array(cur)
            elif r in ('"', "'"):
                self._parse_quote(cur, r)
            elif r == ".":
                self._parse_field(cur)
            elif r in ("+", "-") or r.isdigit():
                self._backup()
                self._parse_number(cur)
            elif _is_alphanumeric(r):
                self._backup()
                self._parse_identifier(cur)
            else:
                raise JSONPathError(f"unrecognized character in action: U+{ord(r):04X} {r!r}")

    def _parse_identifier(self, cur: ListNode) -> None:
        while True:
            r = self._next()
            if _is_terminator(r):
                self._backup()
                break
        value = self._consume()
        if value in ("true", "false"):
            cur.nodes.append(BoolNode(value == "true"))
        else:
            cur.nodes.append(IdentifierNode(value))

    def _parse_recursive(self, cur: ListNode) -> None:
        if cur.nodes and isinstance(cur.nodes[-1], RecursiveNode):
            raise JSONPathError("invalid multiple recursive descent")
        self.pos += 2
        self._consume()
        cur.nodes.append(RecursiveNode())
        if _is_alphanumeric(self._peek()):
            self._parse_field(cur)

    def _parse_number(self, cur: ListNode) -> None:
        r = self._peek()
        if r in ("+", "-"):
            self._next()
        while True:
            r = self._next()
            if r != "." and not r.isdigit():
                self._backup()
                break
        value = self._consume()
        try:
            cur.nodes.append(IntNode(int(value)))
            return
        except ValueError:
            pass
        try:
            cur.nodes.append(FloatNode(float(value)))
        except ValueError:
            raise JSONPathError(f"cannot parse number {value}") from None

    def _parse_array(self, cur: ListNode) -> None:
        while True:
            r = self._next()
            if r in (_EOF, "\n"):
                raise JSONPathError("unterminated array")
            if r == "]":
                break
        text = self._consume()[1:-1]
        if text == "*":
            text = ":"
        parts = text.split(",")
        if len(parts) > 1:
            union = [_parse_action("union", f"[{p.strip(' ')}]") for p in parts]
            cur.nodes.append(UnionNode(union))
            return
        key = _DICT_KEY.match(text)
        if key is not None:
            cur.nodes.extend(_parse_action("arraydict", f".{key.group(1)}").nodes)
            return
        m = _SLICE.match(text)
        if m is None:
            raise JSONPathError(f"invalid array index {text}")
        groups = [m.group(1) or "", m.group(2) or "", m.group(3) or ""]
        params = [Param(), Param(), Param()]
        for i in range(3):
            value = groups[i]
            if value:
                if i > 0:
                    value = value[1:]
                if i > 0 and value == "":
                    params[i].known = False
                else:
                    try:
                        params[i] = Param(int(value), True)
                    except ValueError:
                        raise JSONPathError(f"array index {value} is not a number") from None
            elif i == 1:
                params[i] = Param(params[0].value + 1, True, True)
        cur.nodes.append(ArrayNode((params[0], params[1], params[2])))

    def _parse_filter(self, cur: ListNode) -> None:
        self.pos += 3
        self._consume()
        begin = end = False
        pair = ""
        while True:
            r = self._next()
            if r in (_EOF, "\n"):
                raise JSONPathError("unterminated filter")
            if r in ('"', "'"):
                if not begin:
                    begin, pair = True, r
                    continue
                if self.input[self.pos - 2] != "\\" and r == pair:
                    end = True
            elif r == ")":
                if begin == end:
                    break
        if self._next() != "]":
            raise JSONPathError("unclosed array expect ]")
        text = self._consume()[:-2]
        m = _FILTER.match(text)
        if m is None:
            cur.nodes.append(FilterNode(_parse_action("text", text), ListNode(), "exists"))
        else:
            cur.nodes.append(FilterNode(_parse_action("left", m.group(1)), _parse_action("right", m.group(3)), m.group(2)))

    def _parse_quote(self, cur: ListNode, end: str) -> None:
        while True:
            r = self._next()
            if r in (_EOF, "\n"):
                raise JSONPathError("unterminated quoted string")
            if r == end and self.input[self.pos - 2] != "\\":
                break
        value = self._consume()
        try:
            cur.nodes.append(TextNode(_unquote(value)))
        except ValueError as exc:
            raise JSONPathError(f"unquote string {value} error {exc}") from None

    def _parse_field(self, cur: ListNode) -> None:
        self._consume()
        while self._advance():
            pass
        value = self._consume()
        if value == "*":
            cur.nodes.append(WildcardNode())
        else:
            cur.nodes.append(FieldNode(value.replace("\\", "")))

    def _advance(self) -> bool:
        r = self._next()
        if r == "\\":
            self._next()
        elif _is_terminator(r):
            self._backup()
            return False
        return True


def _parse_action(name: str, text: str) -> ListNode:
    root = Parser(name).parse("{" + text + "}")
    node = root.nodes[0]
    assert isinstance(node, ListNode)
    return node


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"'}


def _unquote(s: str) -> str:
    """UnquoteExtend: Go's strconv.Unquote, with single-quoted strings too."""
    if len(s) < 2 or s[0] != s[-1] or s[0] not in "\"'":
        raise ValueError("invalid syntax")
    body, quote = s[1:-1], s[0]
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == quote:
            raise ValueError("invalid syntax")
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(body):
            raise ValueError("invalid syntax")
        e = body[i + 1]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            digits = body[i + 2 : i + 2 + width]
            if len(digits) != width or not all(ch in "0123456789abcdefABCDEF" for ch in digits):
                raise ValueError("invalid syntax")
            out.append(chr(int(digits, 16)))
            i += 2 + width
        elif e in "01234567":
            digits = body[i + 1 : i + 4]
            if len(digits) != 3 or not all(ch in "01234567" for ch in digits):
                raise ValueError("invalid syntax")
            out.append(chr(int(digits, 8)))
            i += 4
        else:
            raise ValueError("invalid syntax")
    return "".join(out)


# --- evaluation (jsonpath.go) ----------------------------------------------------------------------


def go_type(value: Any) -> str:
    """How Go names the type of an unstructured value, for error messages."""
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    return "interface {}"


class _Nil:
    """A missing value (Go's invalid reflect.Value), distinct from JSON null (None)."""


class JSONPath:
    def __init__(self, name: str = "", *, allow_missing_keys: bool = False, output_json: bool = False) -> None:
        self.name = name
        self.allow_missing_keys = allow_missing_keys
        self.output_json = output_json
        self.root: ListNode | None = None
        self.begin_range = 0
        self.in_range = 0
        self.end_range = 0
        self.last_end: Any = None

    def parse(self, text: str) -> JSONPath:
        self.root = Parser(self.name).parse(text)
        return self

    def find_results(self, data: Any) -> list[list[Any]]:
        if self.root is None:
            raise JSONPathError(f"{self.name} is an incomplete jsonpath template")
        saved = self.root.nodes
        try:
            return self._find(data)
        finally:
            self.root.nodes = saved
            self.begin_range = self.in_range = self.end_range = 0
            self.last_end = None

    def _find(self, data: Any) -> list[list[Any]]:
        """FindResults: a `range` runs the nodes after it once per result, each pass ending at
        its `end`; then processing resumes after the last `end` met."""
        assert self.root is not None
        cur = [data]
        nodes = self.root.nodes
        full: list[list[Any]] = []
        i = 0
        while i < len(nodes):
            results = self._walk(cur, nodes[i])
            if self.end_range > 0 and self.end_range <= self.in_range:
                self.end_range -= 1
                self.last_end = nodes[i]
                break
            if self.begin_range > 0:
                self.begin_range -= 1
                self.in_range += 1
                if results:
                    for value in results:
                        self.root.nodes = nodes[i + 1 :]
                        full.extend(self._find(value))
                else:
                    # an empty range still walks to its end, so processing resumes after it
                    self.root.nodes = nodes[i + 1 :]
                    self._find(None)
                self.in_range -= 1
                for k in range(i + 1, len(nodes)):
                    if nodes[k] is self.last_end:
                        i = k
                        break
                i += 1
                continue
            full.append(results)
            i += 1
        return full

    def execute(self, data: Any) -> str:
        return "".join(self.print_results(r) for r in self.find_results(data))

    def print_results(self, results: list[Any]) -> str:
        if self.output_json:
            results = [list(results)]
        parts = []
        for i, r in enumerate(results):
            if self.output_json:
                text = to_go_json(r, indent=True) + "\n"
            elif isinstance(r, dict | list):
                text = to_go_json(r)
            else:
                text = go_text(r)
            if i != len(results) - 1:
                text += " "
            parts.append(text)
        return "".join(parts)

    def _walk(self, value: list[Any], node: Any) -> list[Any]:
        if isinstance(node, ListNode):
            return self._eval_list(value, node)
        if isinstance(node, TextNode):
            return [node.text]
        if isinstance(node, FieldNode):
            return self._eval_field(value, node)
        if isinstance(node, ArrayNode):
            return self._eval_array(value, node)
        if isinstance(node, FilterNode):
            return self._eval_filter(value, node)
        if isinstance(node, IntNode | FloatNode | BoolNode):
            return [node.value for _ in value]
        if isinstance(node, WildcardNode):
            return self._eval_wildcard(value)
        if isinstance(node, RecursiveNode):
            return self._eval_recursive(value)
        if isinstance(node, UnionNode):
            result: list[Any] = []
            for list_node in node.nodes:
                result += self._eval_list(value, list_node)
            return result
        if isinstance(node, IdentifierNode):
            return self._eval_identifier(value, node)
        raise JSONPathError(f"unexpected Node {node}")

    def _eval_list(self, value: list[Any], node: ListNode) -> list[Any]:
        cur = value
        for child in node.nodes:
            cur = self._walk(cur, child)
        return cur

    def _eval_identifier(self, value: list[Any], node: IdentifierNode) -> list[Any]:
        if node.name == "range":
            self.begin_range += 1
            return value
        if node.name == "end":
            if self.in_range > 0:
                self.end_range += 1
                return []
            raise JSONPathError("not in range, nothing to end")
        raise JSONPathError(f"unrecognized identifier {node.name}")

    def _eval_array(self, values: list[Any], node: ArrayNode) -> list[Any]:
        result: list[Any] = []
        for value in values:
            if value is None:
                continue
            if not isinstance(value, list):
                raise JSONPathError(f"{go_type(value)} is not array or slice")
            length = len(value)
            start, stop, step = (Param(p.value, p.known, p.derived) for p in node.params)
            if not start.known:
                start.value = 0
            if start.value < 0:
                start.value += length
            if not stop.known:
                stop.value = length
            if stop.value < 0 or (stop.value == 0 and stop.derived):
                stop.value += length
            if stop.value == start.value:
                return result  # zero elements asked for (upstream returns at once)
            if start.value >= length or start.value < 0:
                raise JSONPathError(f"array index out of bounds: index {start.value}, length {length}")
            if stop.value > length or stop.value < 0:
                raise JSONPathError(f"array index out of bounds: index {stop.value - 1}, length {length}")
            if start.value > stop.value:
                raise JSONPathError(f"starting index {start.value} is greater than ending index {stop.value}")
            if step.known and step.value <= 0:
                raise JSONPathError("step must be > 0")
            result += value[start.value : stop.value : step.value if step.known else 1]
        return result

    def _eval_field(self, values: list[Any], node: FieldNode) -> list[Any]:
        results = []
        if not values:
            return []
        for value in values:
            if isinstance(value, dict) and node.value in value:
                results.append(value[node.value])
        if not results:
            if self.allow_missing_keys:
                return []
            raise JSONPathError(f"{node.value} is not found")
        return results

    def _eval_wildcard(self, values: list[Any]) -> list[Any]:
        results: list[Any] = []
        for value in values:
            results += _children(value)
        return results

    def _eval_recursive(self, values: list[Any]) -> list[Any]:
        result: list[Any] = []
        for value in values:
            children = _children(value)
            if children:
                result.append(value)
                result += self._eval_recursive(children)
        return result

    def _eval_filter(self, values: list[Any], node: FilterNode) -> list[Any]:
        results = []
        for value in values:
            if not isinstance(value, list):
                raise JSONPathError(f"{go_text(value)} is not array or slice and cannot be filtered")
            for item in value:
                try:
                    lefts = self._eval_list([item], node.left)
                    error: JSONPathError | None = None
                except JSONPathError as exc:
                    lefts, error = [], exc
                if node.operator == "exists":
                    if lefts:
                        results.append(item)
                    continue
                if error is not None:
                    raise error
                if not lefts:
                    continue
                if len(lefts) > 1:
                    raise JSONPathError("can only compare one element at a time")
                rights = self._eval_list([item], node.right)
                if not rights:
                    continue
                if len(rights) > 1:
                    raise JSONPathError("can only compare one element at a time")
                if _compare(node.operator, lefts[0], rights[0]):
                    results.append(item)
        return results


def _children(value: Any) -> list[Any]:
    # Go walks a map in random order; a manifest's key order here (as decoded) is deterministic
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return list(value.encode())
    return []


def _basic_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "invalid"


def _compare(operator: str, left: Any, right: Any) -> bool:
    """text/template's eq, ne, lt, le, gt, ge, as the forked copy in client-go compares."""
    lk, rk = _basic_kind(left), _basic_kind(right)
    if operator in ("==", "!="):
        if lk == "invalid" or rk == "invalid":
            raise JSONPathError("invalid type for comparison")
        if lk != rk:
            raise JSONPathError("incompatible types for comparison")
        equal = left == right
        return equal if operator == "==" else not equal
    if operator not in ("<", ">", "<=", ">="):
        raise JSONPathError(f"unrecognized filter operator {operator}")
    if lk != rk:
        raise JSONPathError("incompatible types for comparison")
    if lk in ("bool", "invalid"):
        raise JSONPathError("invalid type for comparison")
    less = left < right
    if operator == "<":
        return less
    if operator == ">":
        return not less and left != right
    if operator == "<=":
        return less or left == right
    return not less


# --- printing values as Go prints them --------------------------------------------------------------


def go_float(value: float) -> str:
    """fmt's %v of a float64 (strconv 'g', shortest): exponent form below 1e-4 and from 1e6."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    from decimal import Decimal

    sign, digit_tuple, exp = Decimal(repr(value)).as_tuple()
    digits = list(digit_tuple)
    assert isinstance(exp, int)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exp += 1
    exponent = exp + len(digits) - 1
    minus = "-" if sign else ""
    if exponent < -4 or exponent >= 6:
        mantissa = str(digits[0]) + ("." + "".join(map(str, digits[1:])) if len(digits) > 1 else "")
        return f"{minus}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    return format(Decimal((sign, tuple(digits), exp)), "f")


def go_text(value: Any) -> str:
    """What fmt.Fprint writes for one unstructured value (evalToText)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, dict | list):
        return go_sprint(value)
    return str(value)


def go_sprint(value: Any) -> str:
    """fmt.Sprint of an unstructured value: `map[a:b c:d]`, `[x y]`, `<nil>`."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_sprint(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_sprint(v) for v in value) + "]"
    return str(value)


_GO_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def to_go_json(value: Any, *, indent: bool = False) -> str:
    """encoding/json: sorted keys, `<>&` escaped; MarshalIndent uses four spaces."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, indent=4 if indent else None, separators=None if indent else (",", ":"))
    for raw, escaped in _GO_JSON_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


_RELAXED = re.compile(r"^\{\.?([^{}]+)\}$|^\.?([^{}]+)$")


def relaxed(expression: str) -> str:
    """RelaxedJSONPathExpression: `metadata.name`, `.metadata.name`, `{metadata.name}` and
    `{.metadata.name}` all mean `{.metadata.name}`."""
    if not expression:
        return expression
    m = _RELAXED.match(expression)
    if m is None:
        raise JSONPathError("unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'")
    return "{." + (m.group(1) or m.group(2)) + "}"
