"""The pytest plugin for histories (`plugin`, the `pytest11` entry point `kreplay`): history files
collected as test items, golden decision logs (`goldens`) compared with `replay.verify`'s
decision log and rewritten by `--kreplay-update`, the failure text (`divergence`), and the
`kreplay_cluster` fixture (`replaying`, `cluster`) with assertion helpers. May import engine,
projections, `replay.history`, `replay.session`, `replay.outcome`, `replay.safeload`,
`replay.kinds`, `replay.verify`, `replay.shrink` and `replay.printers`, but not the CLI; only
tests and pytest import this package, never the rest of kreplay. Kept light: importing the plugin imports no engine code until a
history item runs or a fixture is used.
"""
