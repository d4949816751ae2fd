"""Defaulting: the fields the API server fills in before it validates and stores an object.

Mirrors the `SetDefaults_*` functions of `pkg/apis/apps/v1/defaults.go` (`apps`: DaemonSets,
StatefulSets, Deployments, ReplicaSets) and `pkg/apis/core/v1/defaults.go` (`core`: pods and pod
templates, containers, probes, volumes, claims, nodes), plus the image-reference parsing
`SetDefaults_Container` needs (`images`). Pure functions over the typed objects; existing values
are always kept. They may import only `engine.api.objects`, `engine.api.selectors`,
`engine.api.validation` and `engine.api.strategy`: no API server, state, actor, loop or store
(a contract in pyproject.toml checks it).
"""
