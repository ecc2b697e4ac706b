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
    # The stack's provider and its sibling that adopts objects that exist already.
    k8s_providers: KubernetesProviders
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
            k8s_provider=component.k8s_providers.main,
            k8s_providers=component.k8s_providers,
            component=component,
            exports=dict(exports or {}),
        )


class ClusterComponent(Protocol):
    """What every cloud's cluster component offers the later stages."""

    kubeconfig: pulumi.Output[str]
    k8s_providers: KubernetesProviders


class KubernetesProviders:
    """The stack's Kubernetes provider and, built only when a stage asks for it, a sibling that
    adopts an object that exists already (`upsertExistingObjects`) instead of failing the `up`
    with AlreadyExists, as pulumi-kubernetes does by default since v4.29.0.

    The sibling has the main provider's kubeconfig, clusterIdentifier (so a new endpoint or CA
    updates it and never replaces what it manages), parent and dependencies. Only objects kept
    on delete may use it: the option's hazard is a rename's create-then-delete of one cluster
    object, and a kept object is never deleted (pulumi-kubernetes ProviderArgs docstring)."""

    def __init__(
        self,
        name: str,
        *,
        # None: the ambient kubeconfig (`cloud: existing` without one in config).
        kubeconfig: pulumi.Input[str] | None,
        cluster_identifier: pulumi.Input[str],
        opts: pulumi.ResourceOptions,
        context: pulumi.Input[str] | None = None,
    ) -> None:
        self._name = name
        self._kubeconfig = kubeconfig
        self._cluster_identifier = cluster_identifier
        self._context = context
        self._opts = opts
        self.main = k8s.Provider(name, self._args(upsert=False), opts=opts)
        self._upserting: k8s.Provider | None = None

    def upserting(self) -> k8s.Provider:
        """The sibling (one per cluster, however many stages ask)."""
        if self._upserting is None:
            self._upserting = k8s.Provider(
                f"{self._name}-upsert", self._args(upsert=True), opts=self._opts
            )
        return self._upserting

    def _args(self, *, upsert: bool) -> k8s.ProviderArgs:
        return k8s.ProviderArgs(
            kubeconfig=self._kubeconfig,
            context=self._context,
            cluster_identifier=self._cluster_identifier,
            enable_server_side_apply=True,
            # Unset on the main provider: its recorded inputs (and so its identity) stay as
            # they were.
            upsert_existing_objects=True if upsert else None,
        )


def stop_unless_adoptable(
    cluster_name: str, problems: Sequence[Problem], warnings: Sequence[str] = ()
) -> None:
    """Stop the program (no traceback, nothing created) with every problem of a looked-up
    cluster, or pass its warnings on to the user."""
    if problems:
        raise pulumi.RunError(AdoptionError(cluster_name, problems).render())
    for warning in warnings:
        pulumi.log.warn(warning)
