"""What the stages after the cluster need from it, whatever the cloud: `ClusterHandle`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import pulumi
import pulumi_kubernetes as k8s


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
