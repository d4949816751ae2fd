"""The engine: a simulated Kubernetes control plane whose every change is a recorded event.

Its parts, from the bottom up:
- `engine/api/`: the object model, identities, defaulting and validation, the API server and
  the cluster state folded from events (what kube-apiserver and its storage do);
- `engine/scheduling/`: node affinity and taint/toleration predicates shared by the scheduler
  and the DaemonSet controller (upstream's component-helpers);
- `engine/controllers/`: kube-controller-manager's controllers as pure `reconcile` functions;
- `engine/nodes/`: the scheduler, the simulated kubelets and the volume binder;
- `events.py`, `commands.py`, `operations.py`: the vocabulary every part shares (what happened,
  what an actor asks for, what a user did);
- `loop.py` (the one place that acts), `actors.py` (the actors in their fixed order),
  `rollback.py` (kubectl's rollout undo), `store.py` (the event store).

`engine` imports neither `projections` nor `replay`; the contracts in pyproject.toml check each
boundary.
"""
