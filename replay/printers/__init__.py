"""kubectl's output formats, as pure functions from objects to text.

Nothing here prints, reads a clock or touches a store: "now" is always passed in (the virtual
time of the cluster), so `kreplay get` shows the AGE a real cluster would have shown at that
moment. Every function returns the exact text kubectl writes to stdout, newline-terminated, or
"" when kubectl would print nothing there (an empty table goes with "No resources found" on
stderr, which is the CLI's business). One module per output: `tables` (`get`, `-o wide`,
`-o name`), `manifests` (`-o json`, `-o yaml`), `describe` (its shared blocks in `sections`) and
`rollout` (`rollout history` and `status`); `fields`, `times` and `tabwriter` serve them all.
Modules here may import `engine.api` and, for rollouts, `engine.rollback` and the controllers'
pure helpers; never a store, the loop, `projections`, `replay.session` or `replay.cli`.
"""
