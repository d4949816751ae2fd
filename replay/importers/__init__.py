"""Importers of real captures (Kubernetes audit logs, watch streams, SimKube traces, cluster
snapshots), one module per source format, each decoding its records at the edge into the typed
operations a history holds (what `replay.history.load_history` returns), keeping every record's
source position for error messages and tolerating the fields it does not model. They may import
`engine.api`, `engine.operations`, `engine.events`, `replay.history` and `replay.kinds`; they are
pure decoders, so no store, loop, session, projections or CLI: the `kreplay import` verb writes
what they return.
"""
