"""What an in-place change of an AKS agent pool, the cluster or its system pool does to the running
nodes (the types and effects: components/model/catalog/node_effects.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Final

from components.model.catalog.node_effects import NodeEffect

# --- AKS --------------------------------------------------------------------------------------

AKS_NODE_CLASS: Final = "kubernetes:karpenter.azure.com/v1beta1:AKSNodeClass"
_AKS_UPGRADE_SOURCE = (
    "Microsoft Learn, aks/upgrade-aks-node-pools-rolling (max unavailable: 'AKS cordons n nodes "
    "at a time and evicts the pods'; max surge: buffer nodes first) and aks/planned-maintenance "
    "(the windows schedule the upgrades of AKS's auto-upgrade channels); API 2025-09-01 "
    "AgentPoolUpgradeSettings (drainTimeoutInMinutes; UndrainableNodeBehavior Schedule)"
)
_AKS_SAME_MINOR = NodeEffect(
    "orchestratorVersion",
    "none",
    "the pool already runs this minor (a pool created without one runs the control plane's), "
    "and the same minor again upgrades nothing; AKS's patch channel keeps the patch current",
    "pulumi-azure-native 3.29 AgentPool.orchestratorVersion: 'Updating the agent pool with the "
    "same <major.minor> once it has been created ... will not trigger an upgrade'",
    when="minor-kept",
)
_AKS_MIN_RAISED = NodeEffect(
    "minCount",
    "starts",
    "AKS's autoscaler enforces a raised minimum at once: a pool running fewer nodes gets new "
    "ones now, each billed from its start, and keeps them while idle",
    "Azure/AKS release 2021-07-22, behavioral changes ('Cluster autoscaler will now enforce the "
    "minimum count in cases where the actual count drops below that. For example ... changing "
    "the minimum count value from the AKS API'); MicrosoftDocs/azure-docs issues 78911 and 80447 "
    "(aks/cluster-autoscaler corrected to match, 2022-02)",
    when="raised",
)
_AKS_AGENT_POOL: Final[tuple[NodeEffect, ...]] = (
    NodeEffect(
        "orchestratorVersion",
        "rolls",
        "AKS upgrades the pool as soon as `pulumi up` asks, not in the maintenance window (that "
        "schedules only AKS's own upgrades): one node at a time and no surge node "
        "(maxUnavailable 1), each cordoned and drained with PodDisruptionBudgets honoured for up "
        "to 60 minutes, then reimaged; a node a PDB keeps busy (a protected training job) is "
        "left running on the old version and the update fails, to be run again once the job "
        "ends: until an operation succeeds, AKS shows the pool and the whole cluster as Failed "
        "(the cluster runs on; docs/aks.md says how to clear it)",
        _AKS_UPGRADE_SOURCE,
        when="minor-changes",
    ),
    _AKS_SAME_MINOR,
    NodeEffect(
        "count",
        "none",
        "running nodes stay: gpufleet sends a node count only to create the pool, and AKS keeps "
        "the count the autoscaler chose when an update sends none",
        "kubernetes-sigs/cluster-api-provider-azure PR 1991 (a PUT without count did not change "
        "it)",
    ),
    NodeEffect(
        "nodeLabels",
        "in-place",
        "AKS updates the labels of the running nodes; nothing restarts",
        "Microsoft Learn, aks/use-labels ('Updating labels on existing node pools')",
    ),
    NodeEffect(
        "nodeTaints",
        "in-place",
        "AKS updates the taints of the running nodes; pods already running stay (NoSchedule "
        "does not evict)",
        "Microsoft Learn, aks/use-node-taints ('Update a node pool's taints')",
    ),
    NodeEffect(
        "minCount",
        "none",
        "running nodes stay; the autoscaler works within the new bounds",
        "Microsoft Learn, aks/cluster-autoscaler",
    ),
    replace(_AKS_MIN_RAISED, path="minCount"),
    NodeEffect(
        "maxCount",
        "none",
        "running nodes stay; the autoscaler works within the new bounds",
        "Microsoft Learn, aks/cluster-autoscaler",
    ),
    NodeEffect(
        "upgradeSettings",
        "none",
        "running nodes stay; the settings apply to the next upgrade",
        "Microsoft Learn, aks/upgrade-aks-node-pools-rolling",
    ),
    NodeEffect(
        "tags",
        "none",
        "the pool's Azure tags change; the nodes' Kubernetes objects are untouched",
        "Microsoft Learn, aks/use-tags",
    ),
)

_AKS_CLUSTER_SETTING = (
    "running nodes stay: a cluster setting, applied by the control plane",
    "Microsoft Learn, aks/cluster-autoscaler, aks/api-server-authorized-ip-ranges, "
    "aks/free-standard-pricing-tiers, aks/use-tags, aks/use-node-auto-provisioning (Auto mode "
    "is enabled in place with az aks update; agent pools keep their nodes)",
)
# The cluster carries the system pool inline (components/azure/system_pool.py).
_AKS_CLUSTER: Final[tuple[NodeEffect, ...]] = (
    NodeEffect(
        "kubernetesVersion",
        "none",
        "AKS upgrades the control plane only; no pool names its version in the cluster, so "
        "each pool keeps its nodes until its own update below (the system pool's deployment, "
        "then each GPU agent pool) moves it",
        "Microsoft Learn, aks/upgrade-node-pools ('In ARM templates, declaration falls back "
        "to the existing version defined for the node pool'); Azure/ARO-HCP a304bf3b (the "
        "pools stayed behind a cluster PUT that raised the minor)",
    ),
    NodeEffect(
        "agentPoolProfiles",
        "in-place",
        "AKS applies the system pool's autoscaling bounds and labels to the running pool; no "
        "node restarts (its VM size, zones and disk are fixed at creation: refused)",
        "pulumi/pulumi-azure-native issue 4264 (a cluster PUT applies its inline pool's "
        "settings); Microsoft Learn, aks/use-labels",
    ),
    *(
        NodeEffect(path, "none", *_AKS_CLUSTER_SETTING)
        for path in (
            "aadProfile",
            "nodeProvisioningProfile",
            "apiServerAccessProfile",
            "autoScalerProfile",
            "autoUpgradeProfile",
            "disableLocalAccounts",
            "enableRBAC",
            "identity",
            "oidcIssuerProfile",
            "securityProfile",
            "sku",
            "tags",
        )
    ),
)

_SYSTEM_POOL = "properties.template.resources.systemPool"
_AKS_SYSTEM_POOL_DEPLOYMENT: Final[tuple[NodeEffect, ...]] = (
    NodeEffect(
        f"{_SYSTEM_POOL}.properties.orchestratorVersion",
        "rolls",
        "AKS upgrades the system pool as soon as `pulumi up` asks, with its default surge: one "
        "extra CPU node first, then each old node cordoned, drained (PodDisruptionBudgets "
        "honoured) and removed; GPU nodes are untouched",
        _AKS_UPGRADE_SOURCE,
        when="minor-changes",
    ),
    replace(_AKS_SAME_MINOR, path=f"{_SYSTEM_POOL}.properties.orchestratorVersion"),
    NodeEffect(
        f"{_SYSTEM_POOL}.properties.nodeLabels",
        "in-place",
        "AKS updates the labels of the system pool's running nodes; nothing restarts",
        "Microsoft Learn, aks/use-labels ('Updating labels on existing node pools')",
    ),
    *(
        NodeEffect(
            f"{_SYSTEM_POOL}.properties.{field}",
            "none",
            "running nodes stay; the autoscaler works within the new bounds",
            "Microsoft Learn, aks/cluster-autoscaler",
        )
        for field in ("minCount", "maxCount", "enableAutoScaling")
    ),
    replace(_AKS_MIN_RAISED, path=f"{_SYSTEM_POOL}.properties.minCount"),
    # A fixed-size system pool (node auto-provisioning): AKS scales it to the count sent.
    NodeEffect(
        f"{_SYSTEM_POOL}.properties.count",
        "in-place",
        "AKS scales the system pool to the new count: nodes above it are cordoned, drained and "
        "removed, nodes below it added; the other nodes stay",
        "Microsoft Learn, aks/scale-cluster (Scale the node pool manually)",
    ),
    NodeEffect(
        f"{_SYSTEM_POOL}.apiVersion",
        "none",
        "running nodes stay: the agent pool API version the deployment calls",
        "Azure Resource Manager template reference (resources[].apiVersion)",
    ),
)

# --- InfiniBand pools: the Network Operator's NicClusterPolicy (components/azure/model/rdma.py) -

_NETWORK_OPERATOR_SOURCE = (
    "Mellanox/network-operator v26.4.0 (12e6d54a): manifests/state-ofed-driver/"
    "0050_ofed-driver-ds.yaml (updateStrategy OnDelete), api/v1alpha1/nicclusterpolicy_types.go "
    "(upgradePolicy.autoUpgrade default false: 'if set to false all other options are ignored')"
)
_NIC_CLUSTER_POLICY: Final[tuple[NodeEffect, ...]] = (
    NodeEffect(
        "spec.nodeAffinity",
        "in-place",
        "a pool that turns `interconnect: fabric` on gets the DOCA driver and the SR-IOV device "
        "plugin on its running nodes, which load the driver's kernel modules there and start "
        "advertising rdma/ib; nothing is drained or reimaged (a pool turning it off keeps the "
        "loaded modules until its nodes are replaced)",
        _NETWORK_OPERATOR_SOURCE,
    ),
    NodeEffect(
        "spec.ofedDriver",
        "new-nodes",
        "the driver DaemonSet updates OnDelete and gpufleet keeps autoUpgrade off: running "
        "nodes keep the driver they loaded (no drain, no job evicted); new nodes and nodes whose "
        "driver pod you delete in a quiet hour get the new one",
        _NETWORK_OPERATOR_SOURCE,
    ),
    NodeEffect(
        "spec.sriovDevicePlugin",
        "in-place",
        "the device plugin pods restart on the fabric nodes; pods that hold rdma/ib devices keep "
        "them (kubelet keeps allocated devices across plugin restarts)",
        "Kubernetes docs, device plugins ('the kubelet ... re-registers' on plugin restart; "
        "allocations are checkpointed)",
    ),
    NodeEffect(
        "spec.tolerations",
        "in-place",
        "the operator's DaemonSets are rescheduled with the new tolerations; nodes stay",
        _NETWORK_OPERATOR_SOURCE,
    ),
)

# Node auto-provisioning's node class: Karpenter marks nodes launched from an older spec
# Drifted (Azure/karpenter-provider-azure v1.14.2 pkg/cloudprovider/drift.go), and gpufleet's
# NodePools allow no disruption for drift (components/model/karpenter_pool.py _disruption).
_AKS_NODE_CLASS: Final[tuple[NodeEffect, ...]] = (
    NodeEffect(
        "spec",
        "new-nodes",
        "AKS's Karpenter marks the running nodes drifted, but gpufleet's disruption budget for "
        "Drifted is 0: they keep the old settings until they are empty and consolidated; nodes "
        "launched from now on come up as edited",
        "Karpenter v1.14 docs, concepts/disruption (Drift; budgets with reasons: [Drifted]); "
        "Azure/karpenter-provider-azure v1.14.2 pkg/cloudprovider/drift.go",
    ),
)

# A control-plane minor bump, for node auto-provisioning's nodes (agent pools say it themselves:
# their orchestratorVersion changes with the minor).
CONTROL_PLANE_VERSION: Final[Mapping[str, str]] = MappingProxyType(
    {"azure-native:containerservice:ManagedCluster": "kubernetesVersion"}
)
VERSION_BUMP_EFFECTS: Final[Mapping[str, NodeEffect]] = MappingProxyType(
    {
        AKS_NODE_CLASS: NodeEffect(
            "version",
            "new-nodes",
            "AKS's Karpenter launches new nodes on the new minor, but the running ones only drift "
            "(K8sVersionDrift), and gpufleet's Drifted budget is 0: they keep their old kubelet "
            "until they are empty. The API server accepts kubelets up to three minors older; "
            "drain long-running nodes before the third bump",
            "Azure/karpenter-provider-azure v1.14.2 pkg/cloudprovider/drift.go "
            "(isK8sVersionDrifted); Karpenter v1.14 docs, concepts/disruption (budgets with "
            "reasons: [Drifted]); Kubernetes version skew policy",
        ),
    }
)

NODE_EFFECTS: Final[Mapping[str, tuple[NodeEffect, ...]]] = MappingProxyType(
    {
        "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy": _NIC_CLUSTER_POLICY,
        AKS_NODE_CLASS: _AKS_NODE_CLASS,
        "azure-native:containerservice:AgentPool": _AKS_AGENT_POOL,
        "azure-native:containerservice:ManagedCluster": _AKS_CLUSTER,
        "azure-native:resources:Deployment": _AKS_SYSTEM_POOL_DEPLOYMENT,
    }
)
