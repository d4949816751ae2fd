"""What `kreplay import` and `kreplay replay --from` share: the `[FORMAT] FILE...` arguments,
importing with a progress bar over the bytes read, and the summary on stderr."""

from __future__ import annotations

from typing import Any


def split_format(files: list[str], verb: str) -> tuple[str, list[str]]:
    """`[FORMAT] FILE...`: a first word that names a format and no file is the format."""
    import os

    from replay.cli.common import UsageError
    from replay.importers import FORMATS

    if files and files[0] in FORMATS and not os.path.exists(files[0]):
        if len(files) == 1:
            raise UsageError(f"{files[0]}: name at least one file to import", verb=verb)
        return files[0], files[1:]
    return "", files


def load(fmt: str, files: list[str], progress_mode: str) -> Any:
    """Import, with a progress bar over the bytes read; UserError for a capture refused."""
    import os

    from replay.cli.common import UserError
    from replay.cli.progress import ByteBar
    from replay.importers import CaptureError, import_captures

    total = 0
    for f in files:
        try:
            total += os.path.getsize(f) if not f.endswith(".gz") else 0
        except OSError:
            pass
    bar = ByteBar(total or None, progress_mode)
    try:
        return import_captures(files, fmt, bar)
    except CaptureError as exc:
        raise UserError(f"error: {exc}; nothing written") from None
    finally:
        bar.close()


def print_summary(result: Any) -> None:
    from replay.cli.common import err

    for key, fields in sorted(result.inferred.items()):
        err(f"inferred {key}: {', '.join(fields)}")
    for text in result.summary():
        err(text)
