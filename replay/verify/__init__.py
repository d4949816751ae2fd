"""`kreplay verify` and `kreplay diff`: replay a history and compare its decision log with a
recorded (golden) one, or compare two logs or stores, reporting the first decisions that differ
and why. `decisions` (the canonical per-owner decision log) is pure: it reads engine events and
recorded writes and imports no store, loop, session, projections, importer or CLI, so golden
files and the pytest plugin can build on it alone; `compare` aligns two logs; `verification`
and `diff` replay, read stores and import captures. The package may import engine, projections,
`replay.history`, `replay.session`, `replay.outcome`, `replay.why`, `replay.importers` and
`replay.printers`; not the CLI (its verbs call in here) and not `replay.testing`, which builds on
this package rather than the other way round.
"""
