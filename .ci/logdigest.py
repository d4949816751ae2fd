"""pytest plugin: sha256 of every event each test's engines emit, per test id.

Usage: PYTHONPATH=/work/tools pytest -p logdigest --log-digests=OUT.json
"""
import hashlib
import json
import re

import pytest

_current = None
_results = {}
_root = b""
# pytest's tmp_path (/tmp/pytest-of-USER/pytest-N/[popen-gwK/]test_x0/) and tempfile's
# mkdtemp() names differ from run to run; a history's path reaches the log (`source`, the
# `--record` cause), so both are hashed as placeholders and only the engine's decisions count
_PYTEST_TMP = re.compile(rb"/[^\s\"']*?/pytest-of-[^/\s\"']+/pytest-\d+/(?:popen-gw\d+/)?")
_MKDTEMP = re.compile(rb"/tmp/tmp[a-z0-9_]{8}(?=[/\s\"']|$)")


def normalised(data: bytes, root: bytes = b"") -> bytes:
    """`data` with temporary directories (and the checkout's own path) replaced by placeholders."""
    data = _MKDTEMP.sub(b"<tmp>", _PYTEST_TMP.sub(b"<tmp>/", data))
    return data.replace(root, b"<root>") if root else data


def pytest_addoption(parser):
    parser.addoption("--log-digests", default=None)


def pytest_configure(config):
    if not config.getoption("--log-digests"):
        return
    global _root
    _root = str(config.rootpath).encode()
    from engine import events as ev
    from engine.loop import Engine

    original = Engine._emit

    def _emit(self, *a, **k):
        event = original(self, *a, **k)
        if _current is not None:
            _current.update(normalised(ev.encode(event), _root))
            _current.update(b"\n")
        return event

    Engine._emit = _emit


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    global _current
    _current = hashlib.sha256()
    yield
    _results[item.nodeid] = _current.hexdigest()
    _current = None


def pytest_unconfigure(config):
    out = config.getoption("--log-digests")
    if out:
        with open(out, "w") as f:
            json.dump(_results, f, indent=1, sort_keys=True)
