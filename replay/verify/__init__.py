"""`kreplay verify` and `kreplay diff`: replay a history and compare its decision log with a
recorded (golden) one, or compare two logs or stores, reporting the first events that differ and
why. May import engine, projections, `replay.history`, `replay.session`, `replay.importers` and
`replay.printers`; not the CLI (its verbs call in here) and not `replay.testing`, which builds
on this package rather than the other way round.
"""
