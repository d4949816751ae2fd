"""pytest plugin: sha256 of every event each test's engines emit, per test id.

Usage: PYTHONPATH=/work/tools pytest -p logdigest --log-digests=OUT.json
"""
import hashlib
import json

import pytest

_current = None
_results = {}


def pytest_addoption(parser):
    parser.addoption("--log-digests", default=None)


def pytest_configure(config):
    if not config.getoption("--log-digests"):
        return
    from engine import events as ev
    from engine.loop import Engine

    original = Engine._emit

    def _emit(self, *a, **k):
        event = original(self, *a, **k)
        if _current is not None:
            _current.update(ev.encode(event))
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
