"""The hand-held price facts scripts/prices.py writes into each cloud's table: what no
machine-price catalog carries, each with its public source and the day it was read.

- control-plane fees per tier (EKS standard/extended, GKE, AKS Free/Standard/Premium);
- `fees`: the fixed network charges of what gpufleet creates (NAT gateways and their
  addresses, AKS's outbound load balancer and address, Cloud NAT), list prices of the cloud's
  reference region, and EKS Auto Mode's node fee as a share of the on-demand price;
- `fallbackRegion`: the region whose list price stands in, labelled as an estimate, for a
  region the catalog does not price;
- `estimated`: prices entered by hand because the table's source has none (GKE's GPUs attached
  to N1 machines, machine types no catalog prices yet), from a pricing page, a dataset or the
  nearest sourced figure, always labelled as estimates that say how they were made.

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
_P5E_AS_P5EN = (
    "priced as p5en.48xlarge, likely high: AWS lists no on-demand price for p5e.48xlarge (sold "
    "as Capacity "
    "Blocks; SkyPilot's AWS catalog, skypilot-catalog catalogs/v8/aws/vms.csv at e385a0d3, "
    "Apache-2.0, read 2026-11-28, has its rows with an empty on-demand price); p5en.48xlarge is "
    "the newer variant (newer CPUs, EFA v3) of the same 8 x H200, at its us-east-1 price in this "
    "table (Karpenter's generated prices of 2026-07-20)"
)
_A4_QUOTED = (
    "Google's us-central1 list price as quoted, likely low outside us-central1: no "
    "machine-price source has a4-highgpu-8g (Cyclenerd's table has none; "
    "SkyPilot's GCP catalog, catalogs/v8/gcp/vms.csv at 8427bbff, lists it at 0.0); quoted as of "
    "2026-07-22 from cloud.google.com/products/compute/pricing/accelerator-optimized by a public "
    "hand-kept price table (a Go file in a stored code index; repository and licence not "
    "identified here, facts only) whose A2 and A3 prices equal this table's within 0.1%; not "
    "read from Google's page here; other regions list higher"
)
_H200_AS_H100 = (
    "priced as Standard_ND96isr_H100_v5, direction unknown: the table's source (Karpenter's "
    "generated Azure prices of 2026-06-18) has no ND H200 v5 price in any region and no other "
    "source was found here, so it is priced as the ND H100 v5 size of the same shape (96 vCPUs, "
    "8 GPUs, InfiniBand) at that size's eastus price in this table; H200 lists above H100 on AWS "
    "(p5en vs p5) and below it on GCP (a3-ultragpu vs a3-highgpu)"
)
# machine -> region -> (on demand, Spot), entered by hand where the table's source has none.
MACHINE_ESTIMATES: Mapping[str, Mapping[str, Mapping[str, tuple[float, float | None]]]] = {
    "aws": {
        "p6-b200.48xlarge": {"us-east-1": (113.9328, None)},
        # p5en.48xlarge's us-east-1 price (see _P5E_AS_P5EN).
        "p5e.48xlarge": {"us-east-1": (63.296, None)},
    },
    # Standard_ND96isr_H100_v5's eastus price (see _H200_AS_H100).
    "azure": {"Standard_ND96isr_H200_v5": {"eastus": (98.32, None)}},
    "gcp": {
        "a4-highgpu-8g": {"us-central1": (90.22, None)},
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
    "aws": {"p6-b200.48xlarge": _B200_VANTAGE, "p5e.48xlarge": _P5E_AS_P5EN},
    "azure": {"Standard_ND96isr_H200_v5": _H200_AS_H100},
    "gcp": {
        **{name: _GPU_PAGE for name in GPU_ESTIMATES},
        "a3-ultragpu-8g": _H200_DATASET,
        "a4-highgpu-8g": _A4_QUOTED,
    },
}
