"""The queues stage: Kueue, and per queued pool the objects that admit a Job whole.

One component per cluster (`gpufleet:kubernetes:Kueue`), on any cloud, only while some pool is
queued (`capacity: queued`): the pinned Kueue chart in its own namespace, on the CPU nodes, and
per queued pool its ProvisioningRequestConfig, AdmissionCheck, ResourceFlavor, ClusterQueue and
LocalQueues (`components.model.kueue` writes them). Each object waits for the release (its CRD
and Kueue's validating webhooks) and for the objects it names; a LocalQueue, for its namespace.

On a cluster gpufleet creates, the queues' namespaces are ensured here (unless the cluster starts
with them; gpufleet's own namespaces are refused as queue namespaces): created, or adopted when
they exist already (a team's, or one a removed queue left), through the cluster's adopting
provider; and kept when the stack or the queue goes: they hold the teams' workloads. On a
cluster gpufleet did not create they are the owner's (plan warns).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.kubernetes import namespaces
from components.kubernetes.cluster import ClusterHandle
from components.kubernetes.helm import pinned_release
from components.model import kueue, queue_checks
from components.model.pools import PoolSpec, system_pool
from components.model.registry import cloud_of
from components.model.schema import StackConfig


@dataclass(frozen=True)
class KueueArgs:
    # The queued pools (each has `queue`).
    pools: Sequence[PoolSpec]
    provider: k8s.Provider
    # Where the controller runs: the CPU system pool's selector ({}: the cluster's choice).
    node_selector: dict[str, str]
    # `queues.namespaces`: where the LocalQueues are and Kueue manages workloads.
    namespaces: Sequence[str]
    # What Kueue starts after: the GPU pools and what serves their ProvisioningRequests.
    wait_for: Sequence[pulumi.Resource] = ()
    # Whether gpufleet created the cluster (so it creates the queues' namespaces).
    creates_namespaces: bool = False
    # What creates them: the cluster's provider that adopts an existing namespace (a team's,
    # or one a removed queue left behind) instead of failing the `up` with AlreadyExists.
    namespace_provider: k8s.Provider | None = None


class Kueue(pulumi.ComponentResource):
    """Kueue's release and the queued pools' queues."""

    release: k8s.helm.v3.Release
    objects: dict[str, k8s.apiextensions.CustomResource]
    # What each queue namespace's LocalQueues wait for (nothing: it exists already or is the
    # owner's to create).
    namespaces: dict[str, pulumi.Resource]

    def __init__(
        self, name: str, args: KueueArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:kubernetes:Kueue", name, None, opts)
        self._k8s = args.provider
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        ns = namespaces.namespace(f"{name}-ns", kueue.PIN.namespace, child)
        self.release = pinned_release(
            f"{name}-release",
            kueue.PIN,
            kueue.RELEASE,
            ns.metadata.apply(lambda m: m.name or kueue.PIN.namespace),
            kueue.helm_values(args.node_selector, args.namespaces),
            pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=[ns, *args.wait_for])
            ),
        )
        self.namespaces = self._queue_namespaces(name, args, child)
        self.objects = {}
        for spec in args.pools:
            declared: dict[tuple[str, str], k8s.apiextensions.CustomResource] = {}
            for document in kueue.pool_objects(spec):
                declared[_key(document)] = self._declare(name, document, declared)
            self.objects.update({f"{spec.name}/{k}/{n}": r for (k, n), r in declared.items()})
        self.register_outputs(
            {
                "release": self.release.name,
                "queues": {spec.name: spec.queue.local_queue for spec in args.pools if spec.queue},
            }
        )

    @staticmethod
    def _queue_namespaces(
        name: str, args: KueueArgs, child: pulumi.ResourceOptions
    ) -> dict[str, pulumi.Resource]:
        found: dict[str, pulumi.Resource] = {}
        if not args.creates_namespaces or args.namespace_provider is None:
            return found
        # Kept on delete: deleting a namespace deletes every workload in it. Kept, they are
        # also safe on the adopting provider (nothing of theirs is ever deleted).
        kept = pulumi.ResourceOptions.merge(
            child,
            pulumi.ResourceOptions(provider=args.namespace_provider, retain_on_delete=True),
        )
        for namespace in kueue.namespaces_to_create(args.namespaces):
            found[namespace] = namespaces.team_namespace(
                f"{name}-queue-ns-{namespace}", namespace, kept
            )
        return found

    def _declare(
        self,
        name: str,
        document: dict[str, Any],
        declared: dict[tuple[str, str], k8s.apiextensions.CustomResource],
    ) -> k8s.apiextensions.CustomResource:
        kind, object_name = _key(document)
        namespace = document["metadata"].get("namespace")
        suffix = f"{kind.lower()}-{object_name}" + (f"-{namespace}" if namespace else "")
        names: list[pulumi.Resource] = [
            declared[key] for key in _references(document) if key in declared
        ]
        if namespace in self.namespaces:
            names.append(self.namespaces[namespace])
        return k8s.apiextensions.CustomResource(
            f"{name}-{suffix}",
            api_version=document["apiVersion"],
            kind=kind,
            metadata=document["metadata"],
            spec=document["spec"],
            opts=pulumi.ResourceOptions(
                parent=self, provider=self._k8s, depends_on=[self.release, *names]
            ),
        )


def _key(document: dict[str, Any]) -> tuple[str, str]:
    return document["kind"], document["metadata"]["name"]


def _references(document: dict[str, Any]) -> list[tuple[str, str]]:
    """The (kind, name) of every Kueue object this one names."""
    spec = document["spec"]
    kind = document["kind"]
    if kind == "AdmissionCheck":
        parameters = spec["parameters"]
        return [(parameters["kind"], parameters["name"])]
    if kind == "ClusterQueue":
        flavors = [
            ("ResourceFlavor", flavor["name"])
            for group in spec["resourceGroups"]
            for flavor in group["flavors"]
        ]
        checks = [
            ("AdmissionCheck", check["name"])
            # A queued pool's (a pool of paid capacity has none).
            for check in spec.get("admissionChecksStrategy", {}).get("admissionChecks", [])
        ]
        return flavors + checks
    if kind == "LocalQueue":
        return [("ClusterQueue", spec["clusterQueue"])]
    return []


def queue_namespaces_notice(names: Sequence[str]) -> str:
    """Why the queues' namespaces carry no Pod Security level of gpufleet's."""
    return (
        f"queues.namespaces {', '.join(names)}: gpufleet makes sure they exist but sets no Pod "
        "Security level on them (one may be a team's namespace, whose labels stay its own); "
        "label each pod-security.kubernetes.io/enforce=baseline (or restricted), or their pods "
        "run at the cluster's default, privileged on EKS, GKE and AKS"
    )


def build(
    config: StackConfig,
    pools: Sequence[PoolSpec],
    cluster: ClusterHandle,
    wait_for: Sequence[pulumi.Resource] = (),
) -> Kueue:
    """The program's queues stage (only called when some pool is queued)."""
    system = system_pool(config)
    creates_namespaces = queue_checks.creates_cluster(cloud_of(config), config.cluster)
    to_create = kueue.namespaces_to_create(config.queues.namespaces)
    selector = dict(system.pod_scheduling["nodeSelector"]) if system is not None else {}
    if creates_namespaces and to_create:
        pulumi.log.warn(queue_namespaces_notice(to_create))
    return Kueue(
        f"{config.cluster.name}-kueue",
        KueueArgs(
            pools=[spec for spec in pools if spec.queue is not None],
            provider=cluster.k8s_provider,
            node_selector=selector,
            namespaces=config.queues.namespaces,
            wait_for=wait_for,
            creates_namespaces=creates_namespaces,
            # Only when it has something to create: no provider left without resources.
            namespace_provider=(
                cluster.k8s_providers.upserting() if creates_namespaces and to_create else None
            ),
        ),
    )
