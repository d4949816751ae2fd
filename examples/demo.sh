#!/usr/bin/env bash
# `make demo`: replay the fluentd-elasticsearch seed (DaemonSet on one tainted master and two
# workers, rollout to v2.2.0, undo to revision 1) into the embedded SQLite store, step by step,
# and show what kubectl would show after each step.
set -euo pipefail
cd "$(dirname "$0")/.."
KREPLAY=${KREPLAY:-.venv/bin/kreplay}
export KREPLAY_STORE=${KREPLAY_STORE:-sqlite:demo.db}
rm -f demo.db demo.db-wal demo.db-shm
HISTORY=examples/fluentd-daemonset.jsonl
STEPS=$(mktemp -d)
trap 'rm -rf "$STEPS"' EXIT
# each step keeps the example's line numbers (blank lines are skipped but counted)
awk 'NR<=5' "$HISTORY" >"$STEPS/1-create.jsonl"
awk '{print (NR==6 ? $0 : "")}' "$HISTORY" >"$STEPS/2-set-image.jsonl"
awk '{print (NR==7 ? $0 : "")}' "$HISTORY" >"$STEPS/3-undo.jsonl"

show() { printf '\n$ kreplay %s\n' "$*"; "$KREPLAY" "$@"; }
say() { printf '\n==> %s\n' "$*"; }

say "1. Three nodes (the master tainted NoSchedule), then the fluentd-elasticsearch DaemonSet with the master toleration"
"$KREPLAY" replay "$STEPS/1-create.jsonl"
show get nodes
show get ds -n kube-system
show get pods -n kube-system -o wide
show rollout history ds/fluentd-elasticsearch -n kube-system

say "2. kubectl set image ... fluentd-elasticsearch:v2.2.0 --record (RollingUpdate, maxUnavailable 1)"
"$KREPLAY" replay "$STEPS/2-set-image.jsonl"
show rollout status ds/fluentd-elasticsearch -n kube-system
show get pods -n kube-system -o wide
show rollout history ds/fluentd-elasticsearch -n kube-system
show get controllerrevision -n kube-system

say "3. kubectl rollout undo --to-revision=1: revision 1 is re-used and becomes revision 3"
"$KREPLAY" replay "$STEPS/3-undo.jsonl"
show get ds -n kube-system -o wide
show rollout history ds/fluentd-elasticsearch -n kube-system
show get controllerrevision -n kube-system

# the first pod the rollout to v2.2.0 replaced: its trail ends with the rolling-update deletion
POD=$("$KREPLAY" log | sed -n 's|.*deletion started pod kube-system/\([^ ]*\) by daemonset-controller \[rolling-update\].*|\1|p' | head -n 1)
say "4. Why did $POD come and go? Every decision, its reason and what triggered it"
show why "pod/$POD" -n kube-system

say "The whole log: $("$KREPLAY" log | wc -l) events in $KREPLAY_STORE (kreplay log, kreplay log -o json)"
