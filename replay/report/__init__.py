"""`kreplay report WORKLOAD`: what a rollout did, drawn and summed up.

`facts` folds the log once into a `Report` for one workload (pods' phases by node or ordinal,
unavailable and surge counts against the budget, user operations, controller decisions with
their triggers, rollouts and their outcome); `text` renders it as Markdown or JSON and `html` as
one self-contained page whose charts are Plotly's, with plotly.js inlined so the file opens
without a network. May import engine (objects, events, the state fold), projections' audit
entries and `replay.printers`/`replay.why` for kubectl's and `why`'s wording; it reads events it
is handed, never a store, and imports no CLI and no server.
"""
