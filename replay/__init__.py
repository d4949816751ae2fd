"""kreplay's edge: outside formats in, kubectl's text out, on top of `engine` and `projections`.

The modules here are the base the subpackages share: `history` (the history format, decoded
into operations), `documents` (objects in a file or stream: YAML, JSON, Lists, gzip), `kinds` (kind names and abbreviations), `session` (run operations against a
store) and `why` (an object's audit trail as text); they import no subpackage. Above them:
`printers` (kubectl's output formats), `importers` (real captures into operations), `verify`
(replay and compare decision logs), `serve` (a read-only API server), `regression` (golden decision logs and shrinking), `report` (rollout
reports: a timeline, the budget, the decisions), `testing` (the pytest plugin) and, on top of everything, `cli` (the `kreplay` verbs), which nothing else imports.
"""
