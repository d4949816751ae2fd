"""Scheduling predicates shared by the scheduler, the DaemonSet controller and taint eviction:
required node affinity and taints/tolerations (upstream's component-helpers/scheduling/corev1).

Pure functions over `engine.api` objects; they import nothing else of the engine.
"""
