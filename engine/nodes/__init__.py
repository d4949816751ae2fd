"""What runs beside the controllers on a real cluster's nodes and control plane: the scheduler,
the simulated kubelets and the volume binder.

Pure actors like the controllers: they may import `engine.api`, `engine.scheduling` and the
vocabulary, never a controller, the loop or the store.
"""
