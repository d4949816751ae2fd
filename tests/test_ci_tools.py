"""The CI helpers in .ci/: what `.ci/same-logs` hashes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

CI = Path(__file__).resolve().parent.parent / ".ci"


def _logdigest():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("logdigest", CI / "logdigest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "one, other",
    [
        pytest.param(b'{"source":"/tmp/pytest-of-root/pytest-3/test_a0/h.jsonl"}', b'{"source":"/tmp/pytest-of-ci/pytest-41/test_a0/h.jsonl"}', id="two-runs-tmp-paths-hash-the-same"),
        pytest.param(b'"cause":"kreplay set image x --record /tmp/pytest-of-root/pytest-3/popen-gw1/test_a0/f"', b'"cause":"kreplay set image x --record /tmp/pytest-of-root/pytest-9/test_a0/f"', id="an-xdist-workers-tmp-path-too"),
        pytest.param(b'"source":"/tmp/tmpab_cd12x/h.jsonl"', b'"source":"/tmp/tmpzz9q_0aa/h.jsonl"', id="a-mkdtemp-directory"),
        pytest.param(b'"source":"/src/base/examples/a.jsonl"', b'"source":"/src/here/examples/a.jsonl"', id="the-checkouts-own-path"),
    ],
)
def test_same_logs_hashes_temporary_paths_as_placeholders(one: bytes, other: bytes) -> None:
    normalised = _logdigest().normalised
    root = b"/src/base" if b"/src/" in one else b""
    assert normalised(one, root) == normalised(other, root.replace(b"base", b"here"))
    assert normalised(one, root) != one


def test_same_logs_still_sees_a_different_test_directory_or_file() -> None:
    normalised = _logdigest().normalised
    a = normalised(b'"source":"/tmp/pytest-of-root/pytest-3/test_a0/h.jsonl"')
    assert a == b'"source":"<tmp>/test_a0/h.jsonl"'
    assert a != normalised(b'"source":"/tmp/pytest-of-root/pytest-3/test_a0/g.jsonl"')
