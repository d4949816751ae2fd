"""`--sort-by`: kubectl's RuntimeSort (kubectl/pkg/cmd/get/sorter.go) over manifests.

The field is a relaxed JSONPath; objects without it sort first; strings that both parse as
resource quantities (`500Mi`, `1Gi`) compare as quantities, other strings in natural order
(fvbommel/sortorder: digit runs compare as numbers), numbers as numbers, lists element by
element. The sort is stable, so equal keys keep the listing's order (namespace, name)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from replay.printers.jsonpath import JSONPath, JSONPathError, relaxed


class SortError(Exception):
    pass


def natural_less(a: str, b: str) -> bool:
    """sortorder.NaturalLess, bytewise as upstream."""
    s1, s2 = a.encode(), b.encode()
    i = j = 0
    digit = lambda c: 48 <= c <= 57  # noqa: E731
    while i < len(s1) and j < len(s2):
        c1, c2 = s1[i], s2[j]
        d1, d2 = digit(c1), digit(c2)
        if d1 != d2:
            return d1
        if not d1:
            if c1 != c2:
                return c1 < c2
            i += 1
            j += 1
            continue
        while i < len(s1) and s1[i] == 48:
            i += 1
        while j < len(s2) and s2[j] == 48:
            j += 1
        n1, n2 = i, j
        while i < len(s1) and digit(s1[i]):
            i += 1
        while j < len(s2) and digit(s2[j]):
            j += 1
        if i - n1 != j - n2:
            return i - n1 < j - n2
        if s1[n1:i] != s2[n2:j]:
            return s1[n1:i] < s2[n2:j]
        if n1 != n2:
            return n1 < n2
    return len(s1) < len(s2)


_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$")
_SUFFIX = {
    "": Decimal(1), "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "k": Decimal("1e3"),
    "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"), "P": Decimal("1e15"), "E": Decimal("1e18"),
    "Ki": Decimal(2**10), "Mi": Decimal(2**20), "Gi": Decimal(2**30), "Ti": Decimal(2**40), "Pi": Decimal(2**50), "Ei": Decimal(2**60),
}


def quantity(text: str) -> Decimal | None:
    """resource.ParseQuantity's value, or None if `text` is not a quantity."""
    m = _QUANTITY.match(text)
    if m is None:
        return None
    number, suffix = m.group(1), m.group(2) or ""
    try:
        value = Decimal(number)
        if suffix[:1] in ("e", "E"):
            return value * (Decimal(10) ** int(suffix[1:]))
        return value * _SUFFIX[suffix]
    except (InvalidOperation, KeyError):
        return None


def is_less(a: Any, b: Any) -> bool:
    """sorter.go's isLess over unstructured values."""
    if a is None and b is None:
        return False
    if a is None:
        return True
    if b is None:
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        raise SortError(f"unsortable type: {type(a).__name__}")
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a < b
    if isinstance(a, str) and isinstance(b, str):
        qa, qb = quantity(a), quantity(b)
        if qa is not None and qb is not None:
            return qa < qb
        return natural_less(a, b)
    if isinstance(a, list) and isinstance(b, list):
        for x, y in zip(a, b, strict=False):
            if not is_less(x, y):
                return False
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        raise SortError("unsortable type: map[string]interface {}")
    raise SortError(f"unsortable type: {type(a).__name__}")


def sort_items(items: Sequence[Any], manifests: Sequence[dict[str, Any]], field: str) -> list[Any]:
    """`items` reordered by `field` of their `manifests` (same order, same length)."""
    try:
        template = relaxed(field)
        parser = JSONPath("sorting", allow_missing_keys=True).parse(template)
    except JSONPathError as exc:
        raise SortError(str(exc)) from None
    keys: list[tuple[bool, Any]] = []
    found_any = False
    for manifest in manifests:
        try:
            values = parser.find_results(manifest)
        except JSONPathError as exc:
            raise SortError(str(exc)) from None
        if values and values[0]:
            keys.append((True, values[0][0]))
            found_any = True
        else:
            keys.append((False, None))
    if manifests and not found_any:
        raise SortError(f'couldn\'t find any field with path "{template}" in the list of objects')

    def compare(i: int, j: int) -> int:
        (has_i, vi), (has_j, vj) = keys[i], keys[j]
        if not has_i and not has_j:
            return 0
        if not has_i:
            return -1
        if not has_j:
            return 1
        if is_less(vi, vj):
            return -1
        if is_less(vj, vi):
            return 1
        return 0

    order = sorted(range(len(items)), key=functools.cmp_to_key(compare))
    return [items[i] for i in order]
