"""Engine options for `kreplay verify` and `kreplay diff`: switches that make the engine decide
differently *on purpose*, to check that a divergence is found and explained. None of them models
Kubernetes; they are documented in the README ("Verifying a replay") and hidden from `--help`.

Each option sets a module flag of the engine for the duration of one run (`applied`), and puts
it back afterwards, so a run with options never changes what later runs in the same process do.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

# option -> (module, flag, {value: flag value})
OPTIONS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "daemonset-max-unavailable-rounding": (
        "engine.controllers.daemonset",
        "MAX_UNAVAILABLE_ROUND_UP",
        {"up": True, "down": False},
    ),
    "deployment-max-unavailable-rounding": (
        "engine.controllers.deployment.util",
        "MAX_UNAVAILABLE_ROUND_UP",
        {"up": True, "down": False},
    ),
}


class OptionError(ValueError):
    """An unknown option or value; the message lists the known ones."""


def parse(texts: Sequence[str]) -> list[tuple[str, str, str, Any]]:
    """`NAME=VALUE` texts as (module, flag, text, value); raises OptionError."""
    out = []
    for text in texts:
        name, eq, value = text.partition("=")
        if not eq or name not in OPTIONS:
            known = ", ".join(f"{n}={'|'.join(v[2])}" for n, v in sorted(OPTIONS.items()))
            raise OptionError(f"--engine-option {text!r}: expected NAME=VALUE, one of {known}")
        module, flag, values = OPTIONS[name]
        if value not in values:
            raise OptionError(f"--engine-option {name}: expected one of {', '.join(values)}, not {value!r}")
        out.append((module, flag, text, values[value]))
    return out


@contextmanager
def applied(texts: Sequence[str]) -> Iterator[None]:
    """Run the body with the options set; restores every flag afterwards."""
    saved = []
    try:
        for module_name, flag, _text, value in parse(texts):
            module = importlib.import_module(module_name)
            saved.append((module, flag, getattr(module, flag)))
            setattr(module, flag, value)
        yield
    finally:
        for module, flag, value in reversed(saved):
            setattr(module, flag, value)
