"""Control characters made harmless in human-readable output.

A name, an actor or a change-cause can carry an ESC sequence (which clears the screen or sets
the terminal title) or a newline (which forges a whole line of `kreplay log`). kubectl escapes
ESC as `^[` and CR as `\\r` (cli-runtime printers.EscapeTerminal, issue kubernetes#101695);
`terminal` does that too, for outputs where kubectl does it (describe, tables, custom columns),
and also writes the other control characters kubectl would let through (BEL, backspace, C1)
as `\\xNN`; newlines and tabs, which lay those outputs out, stay. `line` also escapes
newlines, for outputs that promise one record a line (`log`, `why`, `rollout history`). JSON,
YAML, `-o name` and `-o jsonpath` stay exact, as kubectl's do: they are for programs.
"""

from __future__ import annotations


def _control(ch: str) -> bool:
    code = ord(ch)
    return code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0 or ch in "\u2028\u2029"


def _escape(text: str, keep: str) -> str:
    if not any(_control(ch) and ch not in keep for ch in text):
        return text
    out = []
    for ch in text:
        if ch in keep or not _control(ch):
            out.append(ch)
        elif ch == "\x1b":
            out.append("^[")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\n":
            out.append("\\n")
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return "".join(out)


def terminal(text: str) -> str:
    """kubectl's EscapeTerminal (ESC -> ^[, CR -> \\r) and the other control characters as
    \\xNN; newlines and tabs stay."""
    return _escape(text, "\n\t")


def line(text: str) -> str:
    """One line stays one line: as `terminal`, and LF -> \\n too."""
    return _escape(text, "\t")
