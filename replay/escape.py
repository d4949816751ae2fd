"""Control characters made harmless in human-readable output.

A name, an actor or a change-cause can carry an ESC sequence (which clears the screen or sets
the terminal title) or a newline (which forges a whole line of `kreplay log`). kubectl escapes
ESC as `^[` and CR as `\\r` (cli-runtime printers.EscapeTerminal, issue kubernetes#101695);
`terminal` does exactly that, for outputs where kubectl does it (describe, tables). `line` also
escapes newlines and every other control character, for outputs that promise one record a line
(`log`, `why`, `rollout history`). JSON, YAML, `-o name` and `-o jsonpath` stay exact, as
kubectl's do: they are for programs.
"""

from __future__ import annotations

_TERMINAL = str.maketrans({"\x1b": "^[", "\r": "\\r"})


def terminal(text: str) -> str:
    """kubectl's EscapeTerminal: ESC -> ^[, CR -> \\r."""
    return text.translate(_TERMINAL)


def _control(ch: str) -> bool:
    code = ord(ch)
    return code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0 or ch in "\u2028\u2029"


def line(text: str) -> str:
    """One line stays one line: ESC -> ^[, CR -> \\r, LF -> \\n, TAB kept, other controls -> \\xNN."""
    if not any(_control(ch) for ch in text):
        return text
    out = []
    for ch in text:
        if ch == "\x1b":
            out.append("^[")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append(ch)
        elif _control(ch):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)
