"""`kreplay serve`: a read-only Kubernetes API server over a store (get, list and watch, at the
log's end or any earlier position) that kubectl and client libraries can talk to; routes are
data, the app is testable in-process, and the HTTP server is only the shell. May import
`engine.api`, `engine.store`, projections and `replay.printers` (objects as the API serves them,
via `manifests`); it never appends to a store, and it imports no CLI.
"""
