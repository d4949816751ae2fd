"""Label selectors: the API's LabelSelector and kubectl's `-l` strings, parsed to one form.

Mirrors `k8s.io/apimachinery/pkg/labels` (selector.go) and `metav1.LabelSelectorAsSelector`.
A `Selector` is an AND of `Requirement`s sorted by key; `NOTHING` matches no labels at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import NamedTuple

import msgspec

from engine.api.objects import LabelSelector


class SelectorError(ValueError):
    """A selector that Kubernetes would reject; the message names the key, operator or token."""


class Operator(StrEnum):
    """The values of upstream `selection.Operator`."""

    IN = "in"
    NOT_IN = "notin"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


_SET_OPS = (Operator.IN, Operator.NOT_IN)
_EXACT_OPS = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS)
_UNARY_OPS = (Operator.EXISTS, Operator.DOES_NOT_EXIST)
_NUMERIC_OPS = (Operator.GREATER_THAN, Operator.LESS_THAN)
_SYMBOLS = {
    Operator.EQUALS: "=",
    Operator.DOUBLE_EQUALS: "==",
    Operator.NOT_EQUALS: "!=",
    Operator.GREATER_THAN: ">",
    Operator.LESS_THAN: "<",
}

# --- validation (mirrors validation.IsQualifiedName / IsValidLabelValue) ----------------------

_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_INT = re.compile(r"[+-]?[0-9]+")
_INT64 = range(-(2**63), 2**63)


def _key_problem(key: str) -> str | None:
    *prefix, name = key.split("/")
    if len(prefix) > 1:
        return "a qualified name has at most one '/'"
    if prefix and not (0 < len(prefix[0]) <= 253 and _DNS_SUBDOMAIN.fullmatch(prefix[0])):
        return "prefix part must be a lowercase DNS subdomain of at most 253 characters"
    if not name or len(name) > 63 or not _NAME.fullmatch(name):
        return (
            "name part must be 1-63 alphanumeric characters, '-', '_' or '.', "
            "starting and ending with an alphanumeric character"
        )
    return None


def _value_problem(value: str) -> str | None:
    if value and (len(value) > 63 or not _NAME.fullmatch(value)):
        return (
            f"label value {value!r} must be at most 63 alphanumeric characters, '-', '_' or '.', "
            "starting and ending with an alphanumeric character"
        )
    return None


def parse_int64(text: str) -> int | None:
    """The integer Go's `strconv.ParseInt(text, 10, 64)` reads, or None where it fails."""
    if not _INT.fullmatch(text):
        return None
    value = int(text)
    return value if value in _INT64 else None


# --- requirements and selectors ---------------------------------------------------------------


class Requirement(msgspec.Struct, frozen=True):
    """One `key operator values` clause; build it with `requirement()` so it is valid."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        # mirrors Requirement.Matches: NotIn and != also match when the label is absent
        value = labels.get(self.key)
        op = self.operator
        if op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
            return value is not None and value in self.values
        if op in (Operator.NOT_IN, Operator.NOT_EQUALS):
            return value is None or value not in self.values
        if op is Operator.EXISTS:
            return value is not None
        if op is Operator.DOES_NOT_EXIST:
            return value is None
        # Gt / Lt: the label must exist and both sides must be integers
        have = parse_int64(value) if value is not None else None
        want = parse_int64(self.values[0]) if len(self.values) == 1 else None
        if have is None or want is None:
            return False
        return have > want if op is Operator.GREATER_THAN else have < want

    def __str__(self) -> str:
        # mirrors Requirement.String: values sorted on output
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return f"!{self.key}"
        values = ",".join(sorted(self.values))
        if op in _SET_OPS:
            return f"{self.key} {op.value} ({values})"
        return f"{self.key}{_SYMBOLS[op]}{values}"


def requirement(key: str, operator: Operator, values: Iterable[str] = ()) -> Requirement:
    """A validated requirement; mirrors labels.NewRequirement. Raises SelectorError."""
    vals = tuple(values)
    problems: list[str] = []
    if (problem := _key_problem(key)) is not None:
        problems.append(problem)
    if operator in _SET_OPS and not vals:
        problems.append("for 'in', 'notin' operators, values set can't be empty")
    elif operator in _EXACT_OPS and len(vals) != 1:
        problems.append("exact-match compatibility requires one single value")
    elif operator in _UNARY_OPS and vals:
        problems.append("values set must be empty for exists and does not exist")
    elif operator in _NUMERIC_OPS:
        if len(vals) != 1:
            problems.append("for 'Gt', 'Lt' operators, exactly one value is required")
        problems += [
            f"for 'Gt', 'Lt' operators, the value must be an integer, not {v!r}"
            for v in vals
            if parse_int64(v) is None
        ]
    problems += [p for v in vals if (p := _value_problem(v)) is not None]
    if problems:
        raise SelectorError(
            f"invalid requirement on key {key!r} ({operator.value}): " + "; ".join(problems)
        )
    return Requirement(key, operator, vals)


class Selector(msgspec.Struct, frozen=True):
    """An AND of requirements sorted by key. No requirements matches everything."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False  # labels.Nothing(): what a nil LabelSelector means

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for r in self.requirements:  # a loop, not all(): this runs for every pod of every sync
            if not r.matches(labels):
                return False
        return True

    def empty(self) -> bool:
        """True for the selector that matches everything (labels.Selector.Empty)."""
        return not self.nothing and not self.requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = Selector()
NOTHING = Selector(nothing=True)


def _sorted(requirements: Iterable[Requirement]) -> Selector:
    # mirrors internalSelector.Add / parse: sorted by key for a deterministic String()
    return Selector(tuple(sorted(requirements, key=lambda r: r.key)))


_LABEL_SELECTOR_OPS = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def from_label_selector(sel: LabelSelector | None) -> Selector:
    """The selector an API LabelSelector means; mirrors metav1.LabelSelectorAsSelector."""
    if sel is None:
        return NOTHING
    if not sel.match_labels and not sel.match_expressions:
        return EVERYTHING
    reqs = [requirement(k, Operator.EQUALS, [v]) for k, v in sorted(sel.match_labels.items())]
    for expr in sel.match_expressions:
        op = _LABEL_SELECTOR_OPS.get(expr.operator)
        if op is None:
            raise SelectorError(
                f"{expr.operator!r} is not a valid label selector operator (key {expr.key!r}); "
                "expected In, NotIn, Exists or DoesNotExist"
            )
        reqs.append(requirement(expr.key, op, expr.values))
    return _sorted(reqs)


def selector_string(sel: LabelSelector | None) -> str:
    """kubectl's SELECTOR column; mirrors metav1.FormatLabelSelector."""
    try:
        text = str(from_label_selector(sel))
    except SelectorError:
        return "<error>"
    return text or "<none>"


def format_labels(labels: Mapping[str, str]) -> str:
    """kubectl's NODE SELECTOR and LABELS columns; mirrors labels.FormatLabels."""
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>"


# --- the `-l` string syntax (mirrors labels.Parse: Lexer and Parser) ---------------------------

_ID, _END = "<identifier>", "<end>"
_SPECIAL = "=!(),><"
_WHITESPACE = " \t\r\n"
_BINARY = {
    "in": Operator.IN,
    "notin": Operator.NOT_IN,
    "=": Operator.EQUALS,
    "==": Operator.DOUBLE_EQUALS,
    "!=": Operator.NOT_EQUALS,
    ">": Operator.GREATER_THAN,
    "<": Operator.LESS_THAN,
}


class _Token(NamedTuple):
    kind: str  # _ID, _END, a keyword ("in", "notin") or the symbol itself
    text: str
    pos: int


def _lex(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    while True:
        while i < len(text) and text[i] in _WHITESPACE:
            i += 1
        if i == len(text):
            tokens.append(_Token(_END, "", i))
            return tokens
        start = i
        if text[i] in _SPECIAL:  # the longest symbol wins: "!=" over "!", "==" over "="
            symbol = text[i : i + 2] if text[i : i + 2] in ("==", "!=") else text[i]
            i += len(symbol)
            tokens.append(_Token(symbol, symbol, start))
            continue
        while i < len(text) and text[i] not in _SPECIAL and text[i] not in _WHITESPACE:
            i += 1
        word = text[start:i]
        tokens.append(_Token(word if word in ("in", "notin") else _ID, word, start))


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _lex(text)
        self.at = 0

    def error(self, token: _Token, expected: str) -> SelectorError:
        found = repr(token.text) if token.kind != _END else "end of string"
        return SelectorError(
            f"unable to parse selector {self.text!r} at position {token.pos}: "
            f"found {found}, expected: {expected}"
        )

    def peek(self, values: bool = True) -> _Token:
        # mirrors Parser.lookahead: in the Values context "in"/"notin" are plain identifiers
        token = self.tokens[self.at]
        if values and token.kind in ("in", "notin"):
            return token._replace(kind=_ID)
        return token

    def take(self, values: bool = True) -> _Token:
        token = self.peek(values)
        self.at = min(self.at + 1, len(self.tokens) - 1)
        return token

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            token = self.peek()
            if token.kind == _END:
                return reqs
            if token.kind not in (_ID, "!"):
                raise self.error(token, "!, identifier, or 'end of string'")
            reqs.append(self.requirement())
            token = self.take()
            if token.kind == _END:
                return reqs
            if token.kind != ",":
                raise self.error(token, "',' or 'end of string'")
            if self.peek().kind not in (_ID, "!"):
                raise self.error(self.peek(), "identifier after ','")

    def requirement(self) -> Requirement:
        start = self.peek()
        key, operator = self.key_and_inferred_operator()
        if operator is None:
            token = self.take(values=False)
            operator = _BINARY.get(token.kind)
            if operator is None:
                raise self.error(token, "in, notin, =, ==, !=, gt, lt")
            values = self.value_set() if operator in _SET_OPS else self.exact_value()
        else:
            values = set()
        try:
            return requirement(key, operator, sorted(values))
        except SelectorError as exc:
            raise SelectorError(
                f"unable to parse selector {self.text!r} at position {start.pos}: {exc}"
            ) from None

    def key_and_inferred_operator(self) -> tuple[str, Operator | None]:
        # mirrors parseKeyAndInferOperator: a bare key means Exists, "!key" DoesNotExist
        operator = None
        token = self.take()
        if token.kind == "!":
            operator = Operator.DOES_NOT_EXIST
            token = self.take()
        if token.kind != _ID:
            raise self.error(token, "identifier")
        if (problem := _key_problem(token.text)) is not None:
            raise self.error(token, f"a valid label key ({problem})")
        if operator is None and self.peek().kind in (_END, ","):
            operator = Operator.EXISTS
        return token.text, operator

    def value_set(self) -> set[str]:
        # mirrors parseValues / parseIdentifiersList: "()" and ",," stand for the empty value
        token = self.take()
        if token.kind != "(":
            raise self.error(token, "'('")
        if self.peek().kind == ")":
            self.take()
            return {""}
        if self.peek().kind not in (_ID, ","):
            raise self.error(self.peek(), "',', ')' or identifier")
        values: set[str] = set()
        while True:
            token = self.take()
            if token.kind == _ID:
                values.add(token.text)
                if self.peek().kind == ")":
                    self.take()
                    return values
                if self.peek().kind != ",":
                    raise self.error(self.peek(), "',' or ')'")
            elif token.kind == ",":
                if not values or self.peek().kind in (",", ")"):
                    values.add("")
                if self.peek().kind == ")":
                    self.take()
                    return values
            else:
                raise self.error(token, "',', or identifier")

    def exact_value(self) -> set[str]:
        if self.peek().kind in (_END, ","):
            return {""}
        token = self.take()
        if token.kind != _ID:
            raise self.error(token, "identifier")
        return {token.text}


def parse(text: str) -> Selector:
    """Parse kubectl's `-l` syntax; mirrors labels.Parse. The empty string selects everything."""
    return _sorted(_Parser(text).parse())
