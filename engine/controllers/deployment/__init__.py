"""The Deployment controller (placeholder, filled in below)."""

from engine.controllers.deployment.controller import (
    NAME,
    DeploymentController,
    reconcile_deployment,
)

__all__ = ["NAME", "DeploymentController", "reconcile_deployment"]
