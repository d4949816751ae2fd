"""Validation: what the API server rejects in a (defaulted) object, as `field.Error` lists.

Mirrors apimachinery's `pkg/util/validation/field` (`field`: `FieldError`, its constructors and
how Go prints a bad value) and `pkg/util/validation` (`formats`: DNS labels and subdomains,
qualified names, label values, percents), apimachinery's `pkg/api/validation` with
`pkg/apis/meta/v1/validation` (`meta`: ObjectMeta, labels, annotations, label selectors), then
`pkg/apis/core/validation` (`core`: pods, templates, containers, tolerations, nodes, taints) and
`pkg/apis/apps/validation` (`apps`: the workloads and ControllerRevisions). Pure functions over
the typed objects, errors in upstream order. They may import only `engine.api.objects`,
`engine.api.selectors`, `engine.api.defaults` and `engine.api.strategy`: no API server, state,
actor, loop or store (a contract in pyproject.toml checks it).
"""
