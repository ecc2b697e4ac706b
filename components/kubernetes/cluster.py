"""What the stages after the cluster need from it, whatever the cloud: `ClusterHandle`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pulumi
import pulumi_kubernetes as k8s

from components.model.adoption import AdoptionError
from components.model.problems import Problem


@dataclass(frozen=True)
class ClusterHandle:
    """What the later stages need from a cluster, whatever the cloud."""

    name: pulumi.Input[str]
    kubeconfig: pulumi.Output[str]
    k8s_provider: k8s.Provider
    # The cloud's own cluster component; that cloud's later stages read what they need from it.
    component: pulumi.Resource
    # Stack outputs other tools wire in (endpoint, CA, OIDC issuer, node identity), by name.
    exports: Mapping[str, pulumi.Input[Any]] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        component: ClusterComponent,
        name: pulumi.Input[str],
        exports: Mapping[str, pulumi.Input[Any]] | None = None,
    ) -> ClusterHandle:
        """The handle of a cluster component that built its kubeconfig and Kubernetes provider."""
        assert isinstance(component, pulumi.Resource)
        return cls(
            name=name,
            kubeconfig=component.kubeconfig,
            k8s_provider=component.k8s_provider,
            component=component,
            exports=dict(exports or {}),
        )


class ClusterComponent(Protocol):
    """What every cloud's cluster component offers the later stages."""

    kubeconfig: pulumi.Output[str]
    k8s_provider: k8s.Provider


def stop_unless_adoptable(
    cluster_name: str, problems: Sequence[Problem], warnings: Sequence[str] = ()
) -> None:
    """Stop the program (no traceback, nothing created) with every problem of a looked-up
    cluster, or pass its warnings on to the user."""
    if problems:
        raise pulumi.RunError(AdoptionError(cluster_name, problems).render())
    for warning in warnings:
        pulumi.log.warn(warning)
