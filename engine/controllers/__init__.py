"""kube-controller-manager's controllers, each a pure `reconcile(key, cluster, now)` that
returns commands as data: DaemonSet, StatefulSet, Deployment (a package with one module per
file of upstream's pkg/controller/deployment, `util` holding deployment_util.go), ReplicaSet,
the garbage collector, PodGC and taint eviction (`evictions`).

Shared helpers: `revisions` (ControllerRevision history), `hashing` (revision and template
hashes), `ownership` (controller references, adoption and release). Controllers may import
`engine.api`, `engine.scheduling`, the vocabulary and these helpers; never each other, the loop,
the store or the node actors.

`daemonset_index`, `statefulset_index` and `replicaset_index` hold what those controllers keep
between syncs (pods by node, ordinal or selector, per-node and per-ordinal verdicts, counters),
fed by the events the controller watches, so a sync costs what changed; each imports only its
own controller, whose
`reconcile_*` function stays the full recomputation the index is checked against
(`check=True`, `$KREPLAY_CHECK_INCREMENTAL=1`).
"""
