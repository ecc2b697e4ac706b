"""What Karpenter's cloud-neutral `karpenter.sh` objects do on day two, for every Karpenter
provider (EKS: gpufleet's Karpenter and EKS Auto Mode; next, AKS node auto-provisioning): the
NodePool change the API server refuses, what a NodeOverlay change does to running nodes, and what
deleting a NodePool does to its nodes. Read through `resource_index.SHARED`; a cloud describes
only its node class, and may say what to do instead of a refusal on its clusters
(`ResourceKnowledge.refusal_instead`, e.g. EKS's advice on moving to or from Auto Mode).

Sources: Karpenter's v1 CRDs and docs (`components/model/karpenter_pool.py` says which).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from components.model.catalog.node_effects import NodeEffect, RemovalEffect
from components.model.catalog.rejections import Refusal

NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_OVERLAY = "kubernetes:karpenter.sh/v1alpha1:NodeOverlay"

_NODE_CLASS_IMMUTABLE = (
    "the NodePool CRD refuses another node class kind or group on an existing NodePool "
    "(x-kubernetes-validations: nodeClassRef.{field} is immutable; Karpenter's "
    "karpenter.sh_nodepools.yaml)"
)
# What to do where the cloud says nothing more (a NodePool keeps its node class's kind).
NODE_CLASS_SWITCH_INSTEAD: Final = (
    "create the pools with the new node class in a new stack, move the workloads there, then "
    "destroy this one; or, only when nothing runs on the pools' nodes, give each pool a new "
    "name in the same change (an existing NodePool keeps its node class kind)"
)

REFUSED_IN_PLACE: Final[Mapping[str, tuple[Refusal, ...]]] = MappingProxyType(
    {
        NODE_POOL: tuple(
            Refusal(
                f"spec.template.spec.nodeClassRef.{field}",
                _NODE_CLASS_IMMUTABLE.format(field=field),
                NODE_CLASS_SWITCH_INSTEAD,
            )
            for field in ("group", "kind")
        ),
    }
)

NODE_EFFECTS: Final[Mapping[str, tuple[NodeEffect, ...]]] = MappingProxyType(
    {
        NODE_OVERLAY: (
            NodeEffect(
                "spec",
                "none",
                "running nodes stay (an overlay changes only Karpenter's simulation, never a "
                "node's real resources); Karpenter plans new nodes and consolidation with the "
                "new values",
                "Karpenter v1.14 docs, concepts/nodeoverlays ('Actual vs. Simulated'; "
                "'Integration with Consolidation': no drift or forced replacement)",
            ),
        ),
    }
)

REMOVAL_EFFECTS: Final[Mapping[str, RemovalEffect]] = MappingProxyType(
    {
        NODE_POOL: RemovalEffect(
            "Karpenter deletes the NodePool's NodeClaims with it and drains each node before "
            "terminating it, as long as its controller runs (it goes in the same `up` only when "
            "the provisioner changes)",
            "Karpenter v1.14 docs, concepts/disruption ('NodePool Deletion: NodeClaims are "
            "owned by the NodePool through an owner reference ... Karpenter will gracefully "
            "terminate nodes through cascading deletion')",
        ),
    }
)
