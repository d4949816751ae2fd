"""Histories as regression tests, beneath the pytest plugin and `kreplay shrink`: golden decision
logs (`goldens`: the file, and verify's comparison of a run with it), delta debugging (`ddmin`),
simplifying a history's objects (`simplify`) and shrinking a failing history to the smallest that
fails the same way (`shrinking`). May import engine, `replay.history`, `replay.session`,
`replay.outcome`, `replay.safeload` and `replay.verify`; not the CLI (its `shrink` verb calls in
here) and not `replay.testing` (the plugin builds on this package).
"""
