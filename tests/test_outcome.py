"""The recorded-outcome sidecar: written whole, read back equal, refused with file and line."""

import pytest

from replay.outcome import (
    Header,
    OutcomeError,
    RecordedWrite,
    read_outcome,
    sidecar_path,
    write_outcome,
)


@pytest.mark.parametrize(
    ("history", "sidecar"),
    [
        ("web.jsonl", "web.outcome.jsonl"),
        ("dir/web.kreplay.jsonl", "dir/web.kreplay.outcome.jsonl"),
        ("web.jsonl.gz", "web.outcome.jsonl"),
        ("capture", "capture.outcome.jsonl"),
    ],
)
def test_the_sidecar_sits_beside_its_history(history, sidecar):
    assert str(sidecar_path(history)) == sidecar


def test_a_written_outcome_reads_back_equal_with_nanoseconds_kept(tmp_path):
    writes = [
        RecordedWrite(at="2024-05-01T10:00:00.123456789Z", controller="replicaset-controller",
                      verb="create", kind="Pod", namespace="default", name="web-abc-x2x5q",
                      code=201, object={"metadata": {"name": "web-abc-x2x5q"}}, audit_id="a1"),
        RecordedWrite(at="2024-05-01T10:00:01Z", controller="replicaset-controller",
                      verb="update", subresource="status", kind="ReplicaSet",
                      namespace="default", name="web-abc", code=409),
    ]
    path = tmp_path / "web.outcome.jsonl"
    assert write_outcome(path, Header(history="web.jsonl", format="audit"), writes) == 2
    header, read = read_outcome(path)
    assert header.history == "web.jsonl"
    read = list(read)
    assert read == writes
    assert [w.applied for w in read] == [True, False]
    assert b'"auditID":"a1"' in path.read_bytes()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", ":1: a recorded outcome starts with its header line"),
        (b'{"type":"write","at":"x","controller":"c","verb":"create","kind":"Pod","name":"p"}\n',
         ":1: a recorded outcome starts with its header line"),
        (b'{"type":"header"}\n\n{"type":"nope"}\n', ":3: not a recorded-outcome line"),
        (b'{"type":"header","outcomeVersion":7}\n', "outcomeVersion 7 is not supported"),
        (b'{"type":"header"}\n{"type":"header"}\n', ":2: a second header line"),
    ],
)
def test_a_broken_sidecar_is_refused_naming_file_and_line(tmp_path, content, message):
    path = tmp_path / "x.outcome.jsonl"
    path.write_bytes(content)
    with pytest.raises(OutcomeError, match=message.replace("(", r"\(")):
        read_outcome(path)
