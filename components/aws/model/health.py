"""GPU node health on EKS: what detects a broken GPU node and what replaces it (issue 22, 10).

Sources:
- EKS user guide, nodes/node-health.adoc (awsdocs/amazon-eks-user-guide at 4d52b4d): the node
  monitoring agent reads node logs and sets node conditions (AcceleratedHardwareReady,
  KernelReady, NetworkingReady, StorageReady, ContainerRuntimeReady); it is an EKS add-on
  (`eks-node-monitoring-agent`) and built into Auto Mode. Managed node groups' node auto repair
  (`nodeRepairConfig.enabled`) acts on kubelet's Ready alone, and on the agent's conditions when
  it runs: it waits 10 minutes on AcceleratedHardwareReady and 30 on the others, then reboots or
  replaces the node (NVIDIA XID 13, 31, 48, 63, 64, 94, 95: reboot; double-bit ECC, NVLink, XID
  74, 79, 119: replace), and stops repairing a group of more than five nodes when over 20% are
  unhealthy, or during an ARC zonal shift.
- Karpenter v1.14.1 (aws/karpenter-provider-aws pkg/cloudprovider/cloudprovider.go
  RepairPolicies; website docs concepts/disruption "Node Auto Repair", alpha behind the chart's
  settings.featureGates.nodeRepair): a NodeClaim whose node has Ready False/Unknown for 30
  minutes, AcceleratedHardwareReady False for 10 minutes, or Storage/Networking/Kernel/
  ContainerRuntimeReady False for 30 minutes is terminated forcefully, without draining; not when
  more than 20% of the NodePool's nodes are unhealthy. The agent's conditions need the agent.
- terraform-provider-aws internal/service/eks/node_group.go: `node_repair_config` is updated in
  place (UpdateNodegroupConfig).
- The agent's GPU checks need its `dcgm-server` DaemonSet (nv-hostengine) on the GPU node. The
  add-on's chart (aws/eks-node-monitoring-agent charts/eks-node-monitoring-agent/values.yaml at
  0040fd7) gives the agent DaemonSet `nodeAgent.tolerations: [{operator: Exists}]` but the
  dcgm-server DaemonSet `dcgmAgent.tolerations: []`, so on GPU nodes tainted `nvidia.com/gpu` it
  never runs (aws/containers-roadmap#2567) and AcceleratedHardwareReady has no DCGM source
  (aws/containers-roadmap#2555). EKS accepts for the add-on only what its configuration schema
  lists (EKS user guide, node-monitoring-agent-configure: "The EKS add-on accepts the subset of
  chart values in its configuration schema and rejects any others"); that schema is what
  `aws eks describe-addon-configuration --addon-name eks-node-monitoring-agent` returns,
  published as charts/configuration.schema.json (at 0b5f05c: `dcgmAgent.tolerations`, an array
  of objects; already in the file's first version, e939bff of 2026-02-19; the chart value since
  92366c7 of 2025-05-14, PR #5). EKS installs its default add-on version for the minor, read at
  `up` (components/aws/addons.py): that every such default accepts the key is not checked
  offline; EKS would refuse the add-on update, naming the key, if one did not.
"""

from __future__ import annotations

from typing import Final

MONITORING_AGENT_ADDON: Final = "eks-node-monitoring-agent"

# The keys of `dcgmAgent` in the add-on's configuration schema (configuration.schema.json at
# 51af549, 2026-08-18, definitions.DCGMAgent.properties, additionalProperties false; `enabled`,
# there at 0b5f05c, was dropped since).
DCGM_AGENT_SCHEMA_KEYS: Final = (
    "affinity",
    "podAnnotations",
    "podLabels",
    "nodeSelector",
    "priorityClassName",
    "resources",
    "resizePolicy",
    "tolerations",
)
# dcgm-server tolerates every taint, as the chart's own agent DaemonSet does: its node affinity
# (NVIDIA GPU instance types only, not Auto Mode, Fargate or hybrid nodes) already keeps it off
# every other node, and a GPU node carries whatever taints its pool, a user or EKS put on it.
MONITORING_AGENT_CONFIGURATION: Final = {"dcgmAgent": {"tolerations": [{"operator": "Exists"}]}}
