"""examples/audit-policy.yaml records what `kreplay import` uses with bodies, and nothing it
would only count and drop. The policy is matched as kube-apiserver's policy checker does
(k8s.io/apiserver/pkg/audit/policy/checker.go: the first rule whose verbs, resources and
non-resource URLs all match decides) against every record of the seed captures."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

import pytest
import yaml

from replay.importers import import_captures

ROOT = Path(__file__).resolve().parent.parent
POLICY = yaml.safe_load((ROOT / "examples" / "audit-policy.yaml").read_text())
SEEDS = ROOT / "tests" / "captures" / "seeds"


def _resource_matches(rule: dict, ref: dict) -> bool:
    kinds = rule.get("resources")
    if kinds is None:
        return True
    name = ref.get("resource", "") + (f"/{ref['subresource']}" if ref.get("subresource") else "")
    for group in kinds:
        if group.get("group", "") != ref.get("apiGroup", ""):
            continue
        # ruleMatchesResource: "pods" does not match "pods/status"; "*/status" and "pods/*" do
        for pattern in group.get("resources") or ["*"]:
            if pattern == name or pattern == "*" or (pattern.endswith("/*") and name.startswith(pattern[:-1])):
                return True
            if pattern.startswith("*/") and name.endswith(pattern[1:]):
                return True
    return False


def level_of(record: dict) -> str:
    for rule in POLICY["rules"]:
        if rule.get("verbs") and record["verb"] not in rule["verbs"]:
            continue
        ref = record.get("objectRef")
        if "nonResourceURLs" in rule:
            if ref or not any(fnmatch.fnmatch(record["requestURI"], p) for p in rule["nonResourceURLs"]):
                continue
        elif ref is None or not _resource_matches(rule, ref):
            continue
        return rule["level"]
    return "None"


@pytest.mark.parametrize("capture", ["web-app.audit.jsonl", "fluentd.audit.jsonl", "nginx-web.audit.jsonl"])
def test_the_audit_policy_keeps_bodies_for_every_record_an_import_uses(capture):
    lines = (SEEDS / capture).read_text().splitlines()
    result = import_captures([str(SEEDS / capture)])
    used = {int(line["source"].rpartition(":")[2]) for line in result.lines if line["source"] != "kreplay import"}
    used |= {int(w.source.rpartition(":")[2]) for w in result.writes}
    assert used
    for number in sorted(used):
        record = json.loads(lines[number - 1])
        assert level_of(record) == "RequestResponse", (number, record["verb"], record["objectRef"])


@pytest.mark.parametrize("capture", ["web-app.audit.jsonl", "fluentd.audit.jsonl", "nginx-web.audit.jsonl"])
def test_the_audit_policy_records_none_of_the_noise(capture):
    records = [json.loads(line) for line in (SEEDS / capture).read_text().splitlines()]
    noise = [r for r in records if r["verb"] == "get" or r["objectRef"]["resource"] in ("leases", "events")]
    assert noise
    assert {level_of(r) for r in noise} == {"None"}
    assert "RequestReceived" in POLICY["omitStages"]
