"""Revision hashes: upstream's StatefulSet test vector, the alphabet, collision salting."""

from __future__ import annotations

import json

import pytest

from engine.controllers.hashing import (
    compute_hash,
    go_json,
    safe_encode,
    statefulset_revision_hash,
)

# stateful_set_compatibility_test.go: a revision created by Kubernetes 1.33
UPSTREAM_RAW = (
    '{"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"test":"value"},'
    '"creationTimestamp":null,"labels":{"app":"foo"}},"spec":{"containers":[{"image":"test",'
    '"imagePullPolicy":"Always","name":"test","resources":{},"terminationMessagePath":'
    '"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst",'
    '"restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},'
    '"terminationGracePeriodSeconds":30}}}}'
)


def test_the_statefulset_revision_hash_reproduces_upstreams_test_vector():
    data = json.loads(UPSTREAM_RAW)
    assert go_json(data).decode() == UPSTREAM_RAW  # Go's bytes: sorted keys, compact
    assert statefulset_revision_hash(data, 0) == "c77f6d978"


@pytest.mark.parametrize("number, encoded", [("733928534", "c77f6d978"), ("0123456789", "456789bcdf")])
def test_safe_encode_maps_digits_into_kubernetes_alphabet(number, encoded):
    assert safe_encode(number) == encoded


@pytest.mark.parametrize("raw, escaped", [("<a&b>", "\\u003ca\\u0026b\\u003e"), ("\u2028", "\\u2028")])
def test_go_json_escapes_like_encoding_json(raw, escaped):
    assert go_json({"k": raw}) == f'{{"k":"{escaped}"}}'.encode()


def test_collision_count_salts_the_hash_and_names_keep_their_alphabet():
    template = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    hashes = {compute_hash(template, count) for count in (None, 0, 1, 2)}
    assert len(hashes) == 4
    assert all(set(h) <= set("456789bcdf") and 1 <= len(h) <= 10 for h in hashes)
    assert compute_hash(template, 1) == compute_hash(json.loads(json.dumps(template)), 1)
