"""Throughput benchmarks for the engine, the event store and the cluster-state projection.

`python -m bench` (or `make bench`) runs every registered scenario at each of its sizes and
prints, from one run: replay events per second on SQLite (a temp file) and in memory, a cold
rebuild of the cluster-state projection, and the floor they are measured against (msgspec alone
decoding the same log bytes, already in memory). Wall time is fine here: the bench is outside
`engine/`, and nothing in it asserts a timing.

Scenarios live in `bench.scenarios.SCENARIOS`; the measuring in `bench.measure`, the table and
the JSON in `bench.report`.
"""
