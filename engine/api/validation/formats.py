"""Format checks on names and values: mirrors apimachinery's `pkg/util/validation`
(`IsDNS1123Label`, `IsDNS1123Subdomain`, `IsDNS1035Label`, `IsQualifiedName`, `IsValidLabelValue`,
`IsValidPercent`) and `api/validate/content`. Each returns upstream's messages, no paths.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = rf"{_DNS_LABEL}(\.{_DNS_LABEL})*"
_DNS1035_LABEL = r"[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_KEY = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = rf"({_LABEL_KEY})?"
PERCENT_FMT = r"[0-9]+%"
# compiled once: admission checks every name, label and percentage of every write
DNS_LABEL_RE = re.compile(_DNS_LABEL)
DNS_SUBDOMAIN_RE = re.compile(_DNS_SUBDOMAIN)
DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL)
LABEL_KEY_RE = re.compile(_LABEL_KEY)
LABEL_VALUE_RE = re.compile(_LABEL_VALUE)
PERCENT_RE = re.compile(PERCENT_FMT)
INTEGER_RE = re.compile(r"[+-]?[0-9]+")
_LOWER_ALNUM_DASH_RE = re.compile(r"[-a-z0-9]+")
_A_LETTER_RE = re.compile(r"[a-z]")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    # mirrors validation.RegexError, double spaces before "or" included
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not DNS_LABEL_RE.fullmatch(value):
        if DNS_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(
                _regex_error(
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                    "characters or '-', and must start and end with an alphanumeric character",
                    _DNS_LABEL,
                    "my-name",
                    "123-abc",
                )
            )
    return errs


def dns1123_subdomain(value: str, unit: str = "characters") -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append(f"must be no more than 253 {unit}")
    if not DNS_SUBDOMAIN_RE.fullmatch(value):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character",
                _DNS_SUBDOMAIN,
                "example.com",
            )
        )
    return errs


def dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not DNS1035_LABEL_RE.fullmatch(value):
        errs.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character",
                _DNS1035_LABEL,
                "my-name",
                "abc-123",
            )
        )
    return errs


_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


# label keys found valid: every pod a controller creates repeats its template's keys and its
# tolerations' (a pure check, so the answer is kept; bounded, so hostile input cannot grow it)
_VALID_QUALIFIED_NAMES: set[str] = set()
_VALID_QUALIFIED_NAMES_MAX = 4096


def qualified_name(value: str) -> list[str]:
    # mirrors content.IsLabelKey (validation.IsQualifiedName)
    if value in _VALID_QUALIFIED_NAMES:
        return []
    errs = _qualified_name(value)
    if not errs and len(_VALID_QUALIFIED_NAMES) < _VALID_QUALIFIED_NAMES_MAX:
        _VALID_QUALIFIED_NAMES.add(value)
    return errs


def _qualified_name(value: str) -> list[str]:
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a valid label key "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in dns1123_subdomain(prefix, unit="bytes")]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not LABEL_KEY_RE.fullmatch(name):
        errs.append(
            "name part " + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY, "MyName", "my.name", "123-abc")
        )
    return errs


def label_value(value: str) -> list[str]:
    # mirrors content.IsLabelValue
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 bytes")
    if not LABEL_VALUE_RE.fullmatch(value):
        errs.append(
            _regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, "
                "'-', '_' or '.', and must start and end with an alphanumeric character",
                _LABEL_VALUE,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errs


def percent(value: str) -> list[str]:
    # mirrors validation.IsValidPercent
    if PERCENT_RE.fullmatch(value):
        return []
    return [
        _regex_error(
            "a valid percent string must be a numeric string followed by an ending '%'",
            PERCENT_FMT,
            "1%",
            "93%",
        )
    ]


_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def quantity_value(value: int | float | str) -> Decimal | None:
    """A resource.Quantity's value (`500m` -> 0.5, `1Gi` -> 1073741824); None if it is not one.
    The format itself is checked when a manifest is decoded (engine.api.schema)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(str(value))
    m = _QUANTITY.fullmatch(value)
    if m is None:
        return None
    try:
        number = Decimal(m.group(1))
    except InvalidOperation:
        return None
    suffix = m.group(2) or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number.scaleb(_DECIMAL[suffix])
    return number.scaleb(int(suffix[1:]))


def port_number(value: int) -> list[str]:
    # mirrors validation.IsValidPortNum
    return [] if 1 <= value <= 65535 else ["must be between 1 and 65535, inclusive"]


def port_name(value: str) -> list[str]:
    # mirrors validation.IsValidPortName (an IANA_SVC_NAME)
    errs = []
    if len(value) > 15:
        errs.append("must be no more than 15 characters")
    if not _LOWER_ALNUM_DASH_RE.fullmatch(value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _A_LETTER_RE.search(value):
        errs.append("must contain at least one letter (a-z)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs
