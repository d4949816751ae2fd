#!/usr/bin/env bash
# `make demo`: replay the seed scenarios into the embedded SQLite store, step by step, and show
# what kubectl would show after each step.
#   examples/demo.sh [daemonset|statefulset|deployment|all]   (default: all)
# - daemonset:   fluentd-elasticsearch on one tainted master and two workers, rollout to
#                v2.2.0, undo to revision 1 (examples/fluentd-daemonset.jsonl)
# - statefulset: nginx-web with www-storage claims: update to nginx:1.15.0 (pods replaced 2, 1,
#                0; claims reused), a partition-2 canary, scale 3 -> 5 -> 3, delete the set
#                (claims remain) (examples/nginx-statefulset.jsonl)
# - deployment:  web-app: rollout, history, undo; a broken image that exceeds its progress
#                deadline (examples/web-app-deployment.jsonl); then kubectl's verbs on the
#                replayed cluster: scale (--dry-run=server first), drain, uncordon, the node's events
set -euo pipefail
cd "$(dirname "$0")/.."
KREPLAY=${KREPLAY:-.venv/bin/kreplay}
WHAT=${1:-all}
case "$WHAT" in daemonset|statefulset|deployment|all) ;; *) echo "usage: $0 [daemonset|statefulset|deployment|all]" >&2; exit 2;; esac
# each seed starts its own cluster at its own time: one store each (demo-daemonset.db, ...)
fresh() { export KREPLAY_STORE="sqlite:demo-$1.db"; rm -f "demo-$1.db" "demo-$1.db-wal" "demo-$1.db-shm"; }

show() { printf '\n$ kreplay %s\n' "$*"; "$KREPLAY" "$@" || true; }
say() { printf '\n==> %s\n' "$*"; }
# each part goes on top of the last (--append), settled only up to the next line's time
replay() { "$KREPLAY" replay "$1" --lines "$2" --append; }

daemonset() {
  fresh daemonset
  local h=examples/fluentd-daemonset.jsonl
  say "DaemonSet 1. Three nodes (the master tainted NoSchedule), then the fluentd-elasticsearch DaemonSet with the master toleration"
  replay $h 1-5
  show get nodes
  show get ds -n kube-system
  show get pods -n kube-system -o wide
  show rollout history ds/fluentd-elasticsearch -n kube-system

  say "DaemonSet 2. kubectl set image ... fluentd-elasticsearch:v2.2.0 --record (RollingUpdate, maxUnavailable 1)"
  replay $h 6
  show rollout status ds/fluentd-elasticsearch -n kube-system
  show get pods -n kube-system -o wide
  show rollout history ds/fluentd-elasticsearch -n kube-system
  show get controllerrevision -n kube-system

  say "DaemonSet 3. kubectl rollout undo --to-revision=1: revision 1 is re-used and becomes revision 3"
  replay $h 7
  show get ds -n kube-system -o wide
  show rollout history ds/fluentd-elasticsearch -n kube-system
  show get controllerrevision -n kube-system

  # the first pod the rollout to v2.2.0 replaced: its trail ends with the rolling-update deletion
  local pod
  pod=$("$KREPLAY" log | sed -n 's|.*deletion started pod kube-system/\([^ ]*\) by daemonset-controller \[rolling-update\].*|\1|p' | head -n 1)
  say "DaemonSet 4. Why did $pod come and go? Every decision, its reason and what triggered it"
  show why "pod/$pod" -n kube-system
}

statefulset() {
  fresh statefulset
  local h=examples/nginx-statefulset.jsonl
  say "StatefulSet 1. Three nodes, the headless Service nginx and the nginx-web StatefulSet (3 replicas, OrderedReady, www-storage claims)"
  replay $h 1-6
  show get svc nginx
  show get sts nginx-web
  show get pods -l app=nginx -L controller-revision-hash
  show get pvc
  show get controllerrevision -l app=nginx

  say "StatefulSet 2. kubectl set image statefulset nginx-web nginx=nginx:1.15.0: pods replaced from the highest ordinal down, claims reused"
  replay $h 7
  show rollout status sts/nginx-web
  show get pods -l app=nginx -L controller-revision-hash
  show get pvc
  show log --since 41 --by statefulset-controller

  say "StatefulSet 3. A canary: partition 2, then a new image: only nginx-web-2 takes it"
  replay $h 8
  replay $h 9
  show get pods -l app=nginx -L controller-revision-hash
  show rollout status sts/nginx-web
  show get controllerrevision -l app=nginx

  say "StatefulSet 4. The canary is good: partition 0 rolls out the rest"
  replay $h 10
  show rollout status sts/nginx-web
  show rollout history sts/nginx-web

  say "StatefulSet 5. Scale 3 -> 5 (ordinals 3 and 4 created in order, with their claims) -> 3 (4 then 3 deleted; claims stay)"
  replay $h 11
  show get pods -l app=nginx -L controller-revision-hash
  replay $h 12
  show get pods -l app=nginx
  show get pvc

  say "StatefulSet 6. kubectl delete sts nginx-web: pods and revisions are owned and go; the claims are not owned and remain"
  replay $h 13
  show get pods -l app=nginx
  show get controllerrevision -l app=nginx
  show get pvc
}

deployment() {
  fresh deployment
  local h=examples/web-app-deployment.jsonl
  say "Deployment 1. Two nodes, then kubectl apply -f web-app.yaml --record=true (3 replicas of nginx:1.15.0, RollingUpdate 25%/25%)"
  replay $h 1-4
  show get deploy web-app
  show get rs
  show get pods -l app=web-app -L pod-template-hash

  say "Deployment 2. kubectl set image deploy web-app web-server=nginx:1.16.0 --record=true: a new ReplicaSet scaled up as the old one scales down"
  replay $h 5
  show rollout status deploy/web-app
  show get rs -o wide
  show log --since 32 --by deployment-controller
  show rollout history deploy/web-app
  show rollout history deploy/web-app --revision=1

  say "Deployment 3. kubectl rollout undo deploy web-app --to-revision=1: the first ReplicaSet is scaled back up and becomes revision 3"
  replay $h 6
  show get rs
  show rollout history deploy/web-app

  say "Deployment 4. An image whose pods never become Ready: the rollout stalls (maxUnavailable 0 of 3 keeps every old pod) and exceeds its 600s progress deadline"
  replay $h 7-8
  show rollout status deploy/web-app
  show get rs
  show describe deploy web-app

  say "Deployment 5. kubectl rollout undo deploy web-app: back to the last good revision"
  replay $h 9
  show rollout status deploy/web-app
  show rollout history deploy/web-app

  say "Deployment 6. kubectl verbs on the replayed cluster: what a scale would do (nothing appended), then the scale, a drain, the events"
  show scale deploy web-app --replicas=2 --dry-run=server
  show scale deploy web-app --replicas=2
  show get pods -l app=web-app -o custom-columns='NAME:.metadata.name,IMAGE:.spec.containers[*].image,NODE:.spec.nodeName,STATUS:.status.phase'
  show drain node-1
  show get pods -l app=web-app -o wide
  show uncordon node-1
  show describe node node-1
}

case "$WHAT" in
  daemonset) daemonset ;;
  statefulset) statefulset ;;
  deployment) deployment ;;
  all) daemonset; statefulset; deployment ;;
esac
say "The logs are in demo-*.db: kreplay log --store sqlite:demo-statefulset.db (or -o json), kreplay why KIND/NAME --store ..."

# --- rollout reports, and kubectl pointed at a replay (kreplay report, kreplay serve) ---------
reports() {
  say "Rollout reports: one self-contained HTML page per seed (a timeline row per pod, unavailable and surge pods against the budget, every decision with its reason and trigger)"
  local seed target ns
  for spec in "daemonset ds/fluentd-elasticsearch kube-system" "statefulset sts/nginx-web default" "deployment deploy/web-app default"; do
    read -r seed target ns <<< "$spec"
    if [ "$WHAT" != all ] && [ "$WHAT" != "$seed" ]; then continue; fi
    [ -f "demo-$seed.db" ] || continue
    show report "$target" -n "$ns" --store "sqlite:demo-$seed.db" -o "demo-$seed-report.html"
  done
  say "Open them in any browser (no network needed), e.g. xdg-open demo-daemonset-report.html; -o report.md or -o json give the same facts as text"

  local patch
  patch=$("$KREPLAY" log --store sqlite:demo-daemonset.db 2>/dev/null | sed -n 's/^#\([0-9]*\) .* by kubectl (line 6) .*/\1/p' | head -n 1)
  say "Point kubectl at a replay: kreplay serve is a read-only Kubernetes API server over a store"
  cat <<HELP
  In one terminal, serve the fluentd seed as it was when \`kubectl set image\` was applied
  (log position ${patch:-N}), replaying what followed ten times faster than it happened:
    $KREPLAY serve --store sqlite:demo-daemonset.db --position ${patch:-N} --speed 10x --kubeconfig demo-kubeconfig
  In another, use the real kubectl (or any client library) against it:
    export KUBECONFIG=\$PWD/demo-kubeconfig
    kubectl get pods -n kube-system -w                              # the rollout, pod by pod
    kubectl rollout status ds/fluentd-elasticsearch -n kube-system  # the article's progress lines
    kubectl rollout history ds/fluentd-elasticsearch -n kube-system
  Without --position the server follows the log's end; any position or time can be read with
  kubectl --server http://127.0.0.1:8001/position/40 ...  or  .../at/2026-11-20T10:05:10Z ...
HELP
}
reports
