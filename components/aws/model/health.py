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
"""

from __future__ import annotations

from typing import Final

MONITORING_AGENT_ADDON: Final = "eks-node-monitoring-agent"
