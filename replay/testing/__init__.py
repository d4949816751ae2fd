"""The pytest plugin for histories: fixtures that replay a history into a memory store, golden
decision logs compared with `replay.verify` and rewritten by an `--update` flag, and failure
messages that are the diff a human needs. May import engine, projections, `replay.history`,
`replay.session`, `replay.verify` and `replay.printers`, but not the CLI; only tests and pytest
import this package, never the rest of kreplay.
"""
