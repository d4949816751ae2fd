"""The pytest plugin (entry point `kreplay` in the `pytest11` group, active wherever kreplay is
installed; no conftest needed).

- Collects `*.kreplay.jsonl` files, and files matching the `kreplay_captures` ini option's glob
  patterns, one test item per file, named after it (`web.kreplay.jsonl::web`).
- Each item replays the history in a private memory store and compares the decision log with
  the golden beside it (`web.kreplay.golden.jsonl`), or, when there is no golden but a recorded
  outcome sidecar (`web.kreplay.outcome.jsonl`, from `kreplay import`), verifies against it. A
  file matched by `kreplay_captures` that is no history but a raw capture `kreplay import` reads
  (audit log, watch stream, ...) is verified against itself, imported in memory.
- A failure shows the first divergence per owner; `-v` the aligned context around it. A broken
  history or golden fails its own item with the file, line and what is wrong.
- `--kreplay-update` writes or refreshes goldens; `--kreplay-shrink` writes the smallest history
  that still fails the same way beside a failing one (`web.kreplay.shrunk.jsonl`).
- Fixture `kreplay_cluster`: a function replaying a history (a path, or a list of operation
  dicts) into a `ReplayedCluster`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

CAPTURE_SUFFIX = ".kreplay.jsonl"
# files beside a history that are never histories themselves
SIDE_SUFFIXES = (".golden.jsonl", ".outcome.jsonl", ".shrunk.jsonl")
GOLDEN_PROPERTY = "kreplay-golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kreplay", "kreplay histories as tests")
    group.addoption(
        "--kreplay-update",
        action="store_true",
        default=False,
        help="write or refresh the golden decision log (X.kreplay.golden.jsonl) of every collected history",
    )
    group.addoption(
        "--kreplay-shrink",
        action="store_true",
        default=False,
        help="when a history fails, write the smallest history that fails with the same first divergence beside it (X.kreplay.shrunk.jsonl)",
    )
    parser.addini(
        "kreplay_captures",
        type="args",
        default=[],
        help="glob patterns of further history files to collect (matched against the file name, or the path from the rootdir when the pattern has a '/'); *.kreplay.jsonl is always collected",
    )


def is_capture(path: Path, config: pytest.Config) -> bool:
    name = path.name
    if name.endswith(SIDE_SUFFIXES):
        return False
    if name.endswith(CAPTURE_SUFFIX):
        return True
    patterns = config.getini("kreplay_captures")
    if not patterns:
        return False
    try:
        relative = path.relative_to(config.rootpath).as_posix()
    except ValueError:
        relative = path.as_posix()
    for pattern in patterns:
        if "/" in pattern:
            if fnmatch.fnmatchcase(relative, pattern) and relative.count("/") == pattern.count("/"):
                return True
        elif fnmatch.fnmatchcase(name, pattern):
            return True
    return False


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if is_capture(file_path, parent.config):
        return HistoryFile.from_parent(parent, path=file_path)
    return None


def item_name(path: Path) -> str:
    name = path.name
    for suffix in (CAPTURE_SUFFIX, ".jsonl", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def shown_path(path: Path, config: pytest.Config) -> Path:
    """The path relative to where pytest was started, when it is inside it."""
    try:
        return path.relative_to(config.invocation_params.dir)
    except ValueError:
        return path


class HistoryFile(pytest.File):
    def collect(self) -> Iterator[HistoryItem]:
        yield HistoryItem.from_parent(self, name=item_name(self.path))


class KreplayFailure(Exception):
    """A history test's failure: the message is the whole report (no traceback)."""


class HistoryItem(pytest.Item):
    """One history: replay it and compare its decisions with its golden or recorded outcome."""

    def runtest(self) -> None:
        from replay.testing import checking

        config = self.config
        outcome = checking.check(
            shown_path(self.path, config),
            update=bool(config.getoption("kreplay_update")),
            verbose=config.getoption("verbose") > 0,
        )
        if outcome.golden_written is not None:
            self.user_properties.append((GOLDEN_PROPERTY, outcome.golden_written))
        if outcome.failure:
            message = outcome.failure
            if config.getoption("kreplay_shrink") and outcome.shrinkable:
                message += "\n" + checking.shrink_note(self.path)
            raise KreplayFailure(message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | Any:
        if isinstance(excinfo.value, KreplayFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"kreplay history {self.name}"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    written: list[str] = []
    for key in ("passed", "failed"):
        for report in terminalreporter.stats.get(key, []):
            for name, value in getattr(report, "user_properties", []) or []:
                if name == GOLDEN_PROPERTY and value:
                    written.append(value)
    if written:
        terminalreporter.write_sep("-", "kreplay")
        for path in sorted(written):
            terminalreporter.write_line(f"golden decision log written: {path}")


@pytest.fixture
def kreplay_cluster(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """Replay a history in memory: `kreplay_cluster("web.jsonl")` (relative to the current
    directory, else to the test file) or `kreplay_cluster([{"at": ..., "op": "apply", ...}, ...])`.
    Returns a `replay.testing.ReplayedCluster`; a history that is refused fails the test with
    its `FILE:LINE: field: message`."""
    from replay.history import HistoryError
    from replay.testing.cluster import ReplayedCluster
    from replay.testing.replaying import replay

    base = Path(str(request.path)).parent

    def run(history: str | Path | Sequence[Mapping[str, Any]], *, settle: str = "1h") -> ReplayedCluster:
        from datetime import timedelta

        from replay.history import parse_duration

        if isinstance(history, str | Path):
            path = Path(history)
            if not path.exists() and not path.is_absolute() and (base / path).exists():
                path = base / path
            history = path
        try:
            return ReplayedCluster(replay(history, settle=timedelta(seconds=parse_duration(settle))))
        except HistoryError as exc:
            pytest.fail(f"error: {exc}", pytrace=False)

    return run
