"""The hand-held price facts scripts/prices.py writes into each cloud's table: what no
machine-price catalog carries, each with its public source and the day it was read.

- control-plane fees per tier (EKS standard/extended, GKE, AKS Free/Standard/Premium);
- `fees`: the fixed network charges of what gpufleet creates (NAT gateways and their
  addresses, AKS's outbound load balancer and address, Cloud NAT), list prices of the cloud's
  reference region, and EKS Auto Mode's node fee as a share of the on-demand price;
- `fallbackRegion`: the region whose list price stands in, labelled as an estimate, for a
  region the catalog does not price;
- `estimated`: prices entered by hand from a cloud's pricing page because the table's source
  has none (GKE's GPUs attached to N1 machines), always labelled as estimates.

Data, not code, from the clouds' pricing pages (and, where a page could not be read from where
the table was generated, from the review that quoted it: the `source` says which).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Read 2026-11-25: the control-plane fees per cluster and hour, per tier (USD).
EKS_PRICING = "https://aws.amazon.com/eks/pricing/"
EKS_EXTENDED = (
    "https://aws.amazon.com/blogs/containers/"
    "amazon-eks-extended-support-for-kubernetes-versions-pricing/: clusters on a version in "
    "extended support are charged $0.60 per cluster per hour, standard support stays $0.10"
)
GKE_PRICING = (
    "https://cloud.google.com/kubernetes-engine/pricing: a flat cluster management fee of $0.10 "
    "per cluster per hour applies to all GKE clusters (the $74.40 monthly free-tier credit is "
    "per billing account and not applied here)"
)
AKS_PRICING = "https://azure.microsoft.com/pricing/details/kubernetes-service/"
CONTROL_PLANE: Mapping[str, Mapping[str, dict[str, Any]]] = {
    "aws": {
        "standard": {"perHour": 0.10, "source": f"{EKS_PRICING}; {EKS_EXTENDED}"},
        "extended": {"perHour": 0.60, "source": f"{EKS_PRICING}; {EKS_EXTENDED}"},
    },
    "gcp": {"standard": {"perHour": 0.10, "source": GKE_PRICING}},
    "azure": {
        "Free": {
            "perHour": 0.0,
            "source": "https://learn.microsoft.com/azure/aks/free-standard-pricing-tiers: "
            '"The cluster management is free" on the Free tier',
        },
        "Standard": {
            "perHour": 0.10,
            "source": f"{AKS_PRICING} (as quoted by secondary sources; the page itself could "
            "not be read from where this table was generated)",
        },
        "Premium": {
            "perHour": 0.60,
            "source": f"{AKS_PRICING}: Premium is Standard plus Long Term Support, $0.60 per "
            "cluster and hour (also learn.microsoft.com/azure/aks/long-term-support, as quoted "
            "by the capacity-cost review of 2026-11-28; the page could not be read here)",
        },
    },
}
CONTROL_PLANE_READ = "2026-11-25"

FACTS_READ = "2026-11-28"
_QUOTED = "as quoted by the capacity-cost review of 2026-11-28 (the page could not be read here)"

FALLBACK_REGION: Mapping[str, str] = {"aws": "us-east-1", "gcp": "us-central1", "azure": "eastus"}

FEES: Mapping[str, Mapping[str, dict[str, Any]]] = {
    "aws": {
        "natGateway": {
            "perHour": 0.045,
            "source": f"https://aws.amazon.com/vpc/pricing/: NAT gateway per hour, us-east-1 "
            f"list price (data processed is extra), {_QUOTED}",
        },
        "publicIpv4": {
            "perHour": 0.005,
            "source": f"https://aws.amazon.com/vpc/pricing/: public IPv4 address per hour (the "
            f"NAT gateway's Elastic IP), {_QUOTED}",
        },
        "autoModeNodeShare": {
            "perHour": 0.12,
            "source": "estimate: EKS Auto Mode's per-instance management fee is published per "
            "instance type on https://aws.amazon.com/eks/pricing/ (not read here); about 12% of "
            "the instance's on-demand price (secondary source: factualminds.com, Amazon EKS "
            "pricing, 2026-06-13)",
        },
    },
    "azure": {
        "loadBalancer": {
            "perHour": 0.025,
            "source": "https://azure.microsoft.com/pricing/details/load-balancer/: Standard load "
            f"balancer, first 5 rules per hour (data processed is extra), {_QUOTED}",
        },
        "publicIp": {
            "perHour": 0.005,
            "source": "https://azure.microsoft.com/pricing/details/ip-addresses/: Standard "
            f"static public IPv4 per hour, {_QUOTED}",
        },
    },
    "gcp": {
        "cloudNatPerVm": {
            "perHour": 0.0014,
            "source": "https://cloud.google.com/vpc/network-pricing#nat-pricing: Cloud NAT per "
            f"VM and hour, up to 32 VMs per gateway (data processed is extra), {_QUOTED}",
        },
    },
}

_GPU_PAGE = (
    "Google's published on-demand price per GPU in us-central1 "
    "(https://cloud.google.com/compute/gpus-pricing), entered by hand: the table's source prices "
    "machine types only; not read from a file here, check it against the page"
)
# accelerator -> (on demand per GPU and hour, Spot or None), us-central1
GPU_ESTIMATES: Mapping[str, tuple[float, float | None]] = {
    "nvidia-tesla-t4": (0.35, None),
    "nvidia-tesla-p4": (0.60, None),
    "nvidia-tesla-v100": (2.48, None),
    "nvidia-tesla-p100": (1.46, None),
}
_H200_DATASET = (
    "per-GPU list prices x 8 from the Hugging Face dataset tanod/cloud-gpu-list-prices (snapshot "
    "2026-10-13, taken from the Cloud Billing Catalog API; no licence stated, facts only), as "
    "shown by a search here: the table's source has no a3-ultragpu-8g"
)
_B200_VANTAGE = (
    "Vantage's EC2 instance data (instances.vantage.sh, the ec2instances.info dataset) as quoted "
    "in a public test fixture next to p5.48xlarge 55.04, p5en.48xlarge 63.296 and p4d.24xlarge "
    "21.957642, the table's own us-east-1 prices; the table's source (Karpenter's generated "
    "prices) predates p6-b200"
)
# machine -> region -> (on demand, Spot), entered by hand where the table's source has none.
MACHINE_ESTIMATES: Mapping[str, Mapping[str, Mapping[str, tuple[float, float | None]]]] = {
    "aws": {"p6-b200.48xlarge": {"us-east-1": (113.9328, None)}},
    "gcp": {
        "a3-ultragpu-8g": {
            "us-central1": (round(8 * 10.4365, 6), round(8 * 6.2607, 6)),
            "us-east4": (round(8 * 10.4365, 6), round(8 * 5.6357, 6)),
            "us-west1": (round(8 * 10.4365, 6), round(8 * 6.2607, 6)),
            "europe-west1": (round(8 * 11.4934, 6), round(8 * 6.8944, 6)),
            "asia-south1": (round(8 * 12.5245, 6), round(8 * 6.7805, 6)),
        },
    },
}
ESTIMATED: Mapping[str, Mapping[str, str]] = {
    "aws": {"p6-b200.48xlarge": _B200_VANTAGE},
    "gcp": {
        **{name: _GPU_PAGE for name in GPU_ESTIMATES},
        "a3-ultragpu-8g": _H200_DATASET,
    },
}
