"""What kube-apiserver and its storage do: the object model, identities, defaults and
validation, the API server that turns writes into events, and the cluster state folded from them.

Holds `objects` (typed msgspec Structs, and `OpaqueObject` for kinds the engine does not model),
`catalog` (which kinds exist: Kubernetes' built-in kinds by group, the rule for custom
resources; data and pure functions, importing nothing of the engine), `names` (uids, generated names, stream ids), `admission`
(the entry points for defaulting, validation and generation bookkeeping, which live in
`defaults/`, `validation/` and `strategy`), `apiserver` (create/update/delete/bind as events),
`state` (the fold), and the API helpers every actor shares: `selectors` (label selectors),
`pods` (podutil's predicates), `intstr` (IntOrString scaling). It may import the shared
vocabulary (`engine.events`, `engine.commands`, `engine.operations`) and nothing else of the
engine: no controller, node actor, loop or store.
"""
