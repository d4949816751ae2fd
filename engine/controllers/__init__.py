"""kube-controller-manager's controllers, each a pure `reconcile(key, cluster, now)` that
returns commands as data: DaemonSet, StatefulSet, Deployment (with `deploymentutil`, the
functions of deployment_util.go), ReplicaSet, the garbage collector, PodGC and taint eviction
(`evictions`).

Shared helpers: `revisions` (ControllerRevision history), `hashing` (revision and template
hashes), `ownership` (controller references, adoption and release). Controllers may import
`engine.api`, `engine.scheduling`, the vocabulary and these helpers; never each other, the loop,
the store or the node actors.
"""
