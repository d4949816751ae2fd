"""resource.Quantity as Go holds it: `ParseQuantity`'s fields and `String()`'s canonical form.

A controller never sees the text a user wrote: the API server stores `Quantity.String()` (the
canonical form: `0.5` is stored as `500m`, `1024Mi` as `1Gi`) and kube-controller-manager's
informer parses that text again (`Quantity.Unmarshal` calls `ParseQuantity`). The fields that
parse leaves (`i` int64Amount or `d` inf.Dec, the cached string `s`, `Format`) are what go-spew
prints, so `go_fields(canonical(text))` is the value ComputeHash hashes. Mirrors
k8s.io/apimachinery/pkg/api/resource quantity.go and amount.go (unchanged from 1.18 to 1.36).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

DECIMAL_SUFFIXES = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {e: s for s, e in DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT = {e: s for s, e in BINARY_SUFFIXES.items()}
MAX_INT64 = 2**63 - 1
_MAX_INT64_FACTORS = 18


class QuantityError(ValueError):
    pass


def _split(text: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, num, denom, suffix)."""
    positive, pos, end = True, 0, len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] == "+"
        pos += 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos].isdigit():
        pos += 1
    if pos >= end:
        return positive, text, text[start:], "", ""
    num = text[start:pos] or "0"
    denom = ""
    if text[pos] == ".":
        pos += 1
        d0 = pos
        while pos < end and text[pos].isdigit():
            pos += 1
        denom = text[d0:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value, suffix_start = text[:pos], pos
    while pos < end and text[pos] in "eEinumkKMGTP":
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isdigit():
        pos += 1
    if pos < end:
        raise QuantityError(f"quantities must match the regular expression: {text!r}")
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """suffixer.interpret: (base, exponent, format)."""
    if suffix in DECIMAL_SUFFIXES:
        return 10, DECIMAL_SUFFIXES[suffix], "DecimalSI"
    if suffix in BINARY_SUFFIXES:
        return 2, BINARY_SUFFIXES[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        try:
            return 10, int(suffix[1:]), "DecimalExponent"
        except ValueError:
            pass
    raise QuantityError(f"unable to parse quantity's suffix: {suffix!r}")


def parse(text: str) -> dict[str, Any]:
    """ParseQuantity's result as a dict of Go fields: i {value, scale}, d {Dec}, s, Format, and
    `exact` (the value as a Fraction, for `canonical`). Dec is (unscaled, scale) or None."""
    text = text.strip()
    if not text:
        raise QuantityError("quantities must match the regular expression")
    if text == "0":
        return {"i": (0, 0), "d": None, "s": "0", "Format": "DecimalSI", "exact": Fraction(0)}
    positive, value, num, denom, suffix = _split(text)
    base, exponent, format_ = _interpret(suffix)
    precision, scale, mantissa = 0, 0, 1
    if format_ in ("DecimalExponent", "DecimalSI"):
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    elif exponent >= 0 and not denom:
        mantissa = 1 << exponent
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
    else:
        precision = -1
    if precision >= 0:
        scale -= len(denom)
        if scale >= -9:
            shifted = num + denom
            ivalue = int(shifted)
            result = ivalue * mantissa
            if result <= MAX_INT64:
                if not positive:
                    result = -result
                exact = Fraction(result) * Fraction(10) ** scale
                cached = ""
                if format_ == "BinarySI":
                    if exponent % 10 == 0 and ivalue & 0x07 != 0:
                        cached = text
                elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                    cached = text
                return {
                    "i": (result, scale),
                    "d": None,
                    "s": cached,
                    "Format": format_,
                    "exact": exact,
                }
    # the inf.Dec path: SetString, suffix applied, rounded up to nano (scale 9), capped
    unscaled_text = value.lstrip("+-")
    if "." in unscaled_text:
        whole, frac = unscaled_text.split(".")
    else:
        whole, frac = unscaled_text, ""
    unscaled, dscale = int((whole + frac) or "0"), len(frac)
    if base == 10:
        dscale -= exponent
    else:
        unscaled <<= exponent
    if dscale < 0:
        unscaled, dscale = unscaled * 10 ** (-dscale), 0
    if unscaled != 0:
        if dscale > 9:
            factor = 10 ** (dscale - 9)
            unscaled = -(-unscaled // factor)
        else:
            unscaled *= 10 ** (9 - dscale)
        dscale = 9
    if format_ == "BinarySI" and Fraction(unscaled, 10**dscale) > MAX_INT64:
        unscaled, dscale = MAX_INT64, 0
    amount = Fraction(unscaled, 10**dscale)
    if format_ == "BinarySI" and 0 < amount < 1:
        format_ = "DecimalSI"
    if not positive:
        unscaled, amount = -unscaled, -amount
    return {"i": (0, 0), "d": (unscaled, dscale), "s": "", "Format": format_, "exact": amount}


def canonical(text: str | int | float) -> str:
    """Quantity.String() of ParseQuantity(text): what the API server stores."""
    if isinstance(text, bool):
        raise QuantityError(f"not a quantity: {text!r}")
    if isinstance(text, int):
        text = str(text)
    elif isinstance(text, float):
        text = repr(text) if text != int(text) else str(int(text))
    q = parse(text)
    if q["s"]:
        return q["s"]
    v: Fraction = q["exact"]
    if v == 0:
        return "0"
    format_ = q["Format"]
    if format_ == "BinarySI":
        if -1024 < v < 1024 or v.denominator != 1:
            format_ = "DecimalSI"
        else:
            n, exp = v.numerator, 0
            while n % 1024 == 0 and exp < 6:
                n //= 1024
                exp += 1
            return f"{n}{_BINARY_BY_EXPONENT.get(exp * 10, '')}"
    # decimal: mantissa * 10**e with e a multiple of 3
    num, den = v.numerator, v.denominator
    e = 0
    while den != 1:
        num, e = num * 10, e - 1
        den_reduced = Fraction(num, den)
        num, den = den_reduced.numerator, den_reduced.denominator
    while num % 10 == 0:
        num, e = num // 10, e + 1
    shift = e - 3 * (e // 3)
    num, e = num * 10**shift, e - shift
    if format_ == "DecimalSI":
        suffix = _DECIMAL_BY_EXPONENT.get(e, "")
    else:
        suffix = f"e{e}" if e else ""
    return f"{num}{suffix}"
