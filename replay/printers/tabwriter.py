"""Go's text/tabwriter, which lays out both `kubectl get` tables and `kubectl describe`."""

from __future__ import annotations


def tabwrite(text: str, *, minwidth: int, padding: int) -> str:
    """Align tab-separated cells exactly like Go's text/tabwriter with pad char ' ' and no flags.

    A column block is a run of consecutive lines that all have a tab-terminated cell in that
    column; each cell in it is padded to the block's widest cell plus `padding` (at least
    `minwidth`). The text after a line's last tab is not part of any column. Mirrors
    Writer.format and Writer.writeLines.
    """
    lines = [line.split("\t") for line in text.split("\n")]
    out: list[str] = []

    def write_lines(widths: list[int], line0: int, line1: int) -> None:
        for i in range(line0, line1):
            for j, cell in enumerate(lines[i]):
                out.append(cell)
                if j < len(widths):
                    out.append(" " * (widths[j] - len(cell)))
            if i + 1 < len(lines):
                out.append("\n")

    def format_block(widths: list[int], line0: int, line1: int) -> None:
        column = len(widths)
        this = line0
        while this < line1:
            if column < len(lines[this]) - 1:
                # a cell exists in this column: print the lines above, then the block
                write_lines(widths, line0, this)
                line0 = this
                width = minwidth
                while this < line1 and column < len(lines[this]) - 1:
                    width = max(width, len(lines[this][column]) + padding)
                    this += 1
                format_block([*widths, width], line0, this)
                line0 = this
            this += 1
        write_lines(widths, line0, line1)

    format_block([], 0, len(lines))
    return "".join(out)
