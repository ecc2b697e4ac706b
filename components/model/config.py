"""The typed model of every `gpufleet:*` stack config key, validated before any resource exists.

`parse_config(raw)` takes the stack's `gpufleet:` keys (prefix stripped) and returns a frozen
`StackConfig`, or raises `ConfigError` carrying every problem at once, each naming the key path,
the bad value and what is allowed. The same function serves `pulumi up` (via `load_from_pulumi`)
and the offline engine, so both reject exactly the same input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from components.model.catalog import charts, gpus
from components.model.problems import ConfigError, Problem

CloudName = Literal["gcp", "aws", "azure", "existing"]
TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
SoftwareMode = Literal["auto", "device-plugin", "gpu-operator", "cloud-managed"]


class _Model(BaseModel):
    """camelCase keys like Pulumi's own, unknown keys rejected (typos must not pass silently)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class TaintConfig(_Model):
    key: str
    value: str = ""
    effect: TaintEffect = "NoSchedule"


class SharingConfig(_Model):
    """GPU sharing between containers: time-slicing or MPS, N clients per physical GPU."""

    strategy: Literal["time-sharing", "mps"]
    max_shared_clients_per_gpu: int


class GcpPoolOptions(_Model):
    # GKE-managed driver version; set explicitly (an unset value caused permanent diffs).
    driver_version: Literal["default", "latest"] = "default"


class AwsPoolOptions(_Model):
    # self-managed: one auto scaling group per zone (default); managed: EKS managed node group.
    node_group: Literal["self-managed", "managed"] = "self-managed"
    ami_family: Literal["al2023", "bottlerocket"] = "al2023"


class AzurePoolOptions(_Model):
    pass


class GpuPoolConfig(_Model):
    name: str
    accelerator: str
    machine_type: str | None = None
    machine_types: list[str] | None = None
    gpus_per_node: int | None = Field(default=None, ge=1)
    min_nodes: int = Field(default=0, ge=0)
    max_nodes: int = Field(default=2, ge=1)
    spot: bool = False
    zones: list[str] | None = None
    sharing: SharingConfig | None = None
    mig_partition_size: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[TaintConfig] = Field(default_factory=list)
    disk_size_gb: int = Field(default=100, ge=30, le=65536)
    gcp: GcpPoolOptions = Field(default_factory=GcpPoolOptions)
    aws: AwsPoolOptions = Field(default_factory=AwsPoolOptions)
    azure: AzurePoolOptions = Field(default_factory=AzurePoolOptions)


class SystemPoolConfig(_Model):
    machine_type: str | None = None
    min_nodes: int = Field(default=1, ge=1)
    max_nodes: int = Field(default=3, ge=1)


class GcpClusterOptions(_Model):
    project: str | None = None
    release_channel: Literal["RAPID", "REGULAR", "STABLE"] = "REGULAR"
    network: str | None = None
    subnetwork: str | None = None
    subnet_cidr: str = "10.10.0.0/20"
    pods_cidr: str = "10.20.0.0/14"
    services_cidr: str = "10.24.0.0/20"
    master_cidr: str = "172.16.0.0/28"
    master_authorized_cidrs: list[str] = Field(default_factory=lambda: ["0.0.0.0/0"])


class AwsClusterOptions(_Model):
    vpc_cidr: str = "10.0.0.0/16"
    private_subnet_ids: list[str] | None = None
    public_subnet_ids: list[str] | None = None
    # Cluster autoscaler expander (FACTS: priority,least-waste is the recommended pairing).
    autoscaler_expander: str = "priority,least-waste"
    public_endpoint_cidrs: list[str] = Field(default_factory=lambda: ["0.0.0.0/0"])
    # Kubernetes service range; nodeadm needs it to join (fixed at cluster creation).
    service_cidr: str = "172.20.0.0/16"
    # single: one NAT gateway for all zones (cheap); per-zone: one per zone (survives a zone outage).
    nat_gateways: Literal["single", "per-zone"] = "single"


class AzureClusterOptions(_Model):
    # The subscription every resource goes to; unset: ARM_SUBSCRIPTION_ID or the az CLI default.
    subscription_id: str | None = None
    # An existing resource group / node subnet (full resource id); otherwise gpufleet creates them.
    resource_group_name: str | None = None
    vnet_subnet_id: str | None = None
    vnet_cidr: str = "10.224.0.0/12"
    subnet_cidr: str = "10.224.0.0/16"
    # Azure CNI overlay: pods get IPs from pod_cidr, outside the VNet (fixed at creation).
    pod_cidr: str = "10.244.0.0/16"
    service_cidr: str = "10.0.0.0/16"
    dns_service_ip: str = "10.0.0.10"
    autoscaler_expander: Literal["least-waste", "most-pods", "priority", "random"] = "least-waste"
    scale_down_unneeded_time: str = "10m"
    scale_down_delay_after_add: str = "10m"
    # Free has no uptime SLA; production stacks use Standard.
    sku_tier: Literal["Free", "Standard", "Premium"] = "Free"
    # Source ranges allowed to reach the API server; empty: any (AKS's default).
    api_server_authorized_cidrs: list[str] = Field(default_factory=list)
    # entra-id: Entra ID sign-in, Azure RBAC, local accounts disabled (short-lived tokens via
    # kubelogin). local-accounts: AKS's static client certificate (no Entra ID needed).
    authentication: Literal["entra-id", "local-accounts"] = "entra-id"
    # How kubelogin signs in for the Kubernetes provider (entra-id): the az CLI login, a workload
    # identity / service principal / managed identity from the environment, or azd.
    kubelogin_mode: Literal["azurecli", "workloadidentity", "spn", "msi", "azd"] = "azurecli"
    # Entra ID groups granted cluster-admin (entra-id).
    admin_group_object_ids: list[str] = Field(default_factory=list)
    # Create the role assignments AKS needs: Network Contributor on the node subnet for the
    # cluster identity and AKS RBAC Cluster Admin for the deploying principal (entra-id). Needs
    # Owner or User Access Administrator; set false when an administrator creates them.
    role_assignments: bool = True


class ExistingClusterOptions(_Model):
    # A kubeconfig comes from the secret key `gpufleet:kubeconfig`; `context` picks one of it
    # (or of the ambient kubeconfig when no secret is given).
    context: str | None = None
    # The device plugin and operator DaemonSets must tolerate these too (CPU-pool taints are
    # not ours to know on an existing cluster).
    distribution: Literal["generic", "gke", "eks", "aks"] = "generic"


class ClusterConfig(_Model):
    name: str
    kubernetes_version: str = "1.33"
    region: str | None = None
    zones: list[str] | None = None
    system_pool: SystemPoolConfig = Field(default_factory=SystemPoolConfig)
    # Production stacks set this: the cluster cannot be deleted by `pulumi destroy` or a replace.
    protect: bool = False
    gcp: GcpClusterOptions = Field(default_factory=GcpClusterOptions)
    aws: AwsClusterOptions = Field(default_factory=AwsClusterOptions)
    azure: AzureClusterOptions = Field(default_factory=AzureClusterOptions)
    existing: ExistingClusterOptions = Field(default_factory=ExistingClusterOptions)


class MonitoringConfig(_Model):
    dcgm_exporter: bool = False
    # Needs the Prometheus Operator CRDs on the cluster.
    service_monitor: bool = False


class GpuSoftwareConfig(_Model):
    mode: SoftwareMode = "auto"
    # AKS with the GPU Operator: let the operator install the driver (pools get driver None).
    operator_driver: bool = False
    monitoring: MonitoringConfig = Field(default_factory=MonitoringConfig)


class SamplesConfig(_Model):
    enabled: bool = False


@dataclass(frozen=True)
class StackConfig:
    """The validated stack config. `gpu_software_mode` is `auto` resolved for the cloud."""

    cloud: CloudName
    cluster: ClusterConfig
    gpu_pools: tuple[GpuPoolConfig, ...]
    gpu_software: GpuSoftwareConfig
    samples: SamplesConfig
    warnings: tuple[str, ...] = ()

    @property
    def gpu_software_mode(self) -> SoftwareMode:
        return resolve_software_mode(self.cloud, self.gpu_software.mode)


def resolve_software_mode(cloud: CloudName, mode: SoftwareMode) -> SoftwareMode:
    """`auto`: GKE brings driver and device plugin; elsewhere NVIDIA's device plugin."""
    if mode != "auto":
        return mode
    return "cloud-managed" if cloud == "gcp" else "device-plugin"


# --- names and formats the clouds accept ----------------------------------------------------

POOL_NAME_RULES: Mapping[str, tuple[str, str]] = {
    "gcp": (r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$", "GKE: 1-40 of a-z 0-9 -, starting with a letter"),
    "aws": (
        r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
        "EKS: 1-63 of a-z 0-9 -, starting and ending alphanumeric",
    ),
    "azure": (
        r"^[a-z][a-z0-9]{0,11}$",
        "AKS: 1-12 lowercase letters and digits, starting with a letter",
    ),
    "existing": (r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", "1-63 of a-z 0-9 -"),
}
CLUSTER_NAME_RULES: Mapping[str, tuple[str, str]] = {
    "gcp": (r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$", "GKE: 1-40 of a-z 0-9 -, starting with a letter"),
    "aws": (r"^[a-zA-Z0-9][-a-zA-Z0-9_]{0,99}$", "EKS: 1-100 of A-Z a-z 0-9 - _"),
    "azure": (r"^[a-zA-Z0-9][-a-zA-Z0-9_]{0,62}$", "AKS: 1-63 of A-Z a-z 0-9 - _"),
    "existing": (r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", "1-63 of a-z 0-9 -"),
}
REGION_RULES: Mapping[str, tuple[str, str]] = {
    "gcp": (r"^[a-z]+-[a-z]+[0-9]+$", "a GCP region such as us-central1"),
    "aws": (r"^[a-z]{2}(-gov)?-[a-z]+-[0-9]$", "an AWS region such as us-east-1"),
    "azure": (r"^[a-z]+[a-z0-9]*$", "an Azure location such as eastus2"),
}
SYSTEM_POOL_NAME = "system"
DEFAULT_SYSTEM_MACHINE: Mapping[str, str] = {
    "gcp": "e2-standard-4",
    "aws": "m6i.large",
    "azure": "Standard_D4s_v5",
}
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
# Prefixes a kubelet may not self-register (NodeRestriction) or that clouds and gpufleet own.
RESERVED_LABEL_PREFIXES = (
    "kubernetes.io",
    "k8s.io",
    "cloud.google.com",
    "kubernetes.azure.com",
    "eks.amazonaws.com",
    "k8s.amazonaws.com",
    "gpufleet.io",
)


def label_key_problem(key: str) -> str | None:
    """Why `key` is not a valid Kubernetes label/taint key, or None."""
    prefix, _, name = key.rpartition("/")
    if not name or len(name) > 63 or not _QUALIFIED_NAME.match(name):
        return "must be [prefix/]name, name 1-63 of A-Z a-z 0-9 - _ . (alphanumeric at both ends)"
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return "prefix must be a DNS subdomain (lowercase, dots), at most 253 characters"
    return None


def label_value_problem(value: str) -> str | None:
    if len(value) > 63 or not _LABEL_VALUE.match(value):
        return "must be at most 63 of A-Z a-z 0-9 - _ . (alphanumeric at both ends), or empty"
    return None


# --- parsing --------------------------------------------------------------------------------

_SECTIONS: Mapping[str, Any] = {
    "cluster": ClusterConfig,
    "gpuSoftware": GpuSoftwareConfig,
    "samples": SamplesConfig,
}
KNOWN_KEYS = ("cloud", "cluster", "gpuPools", "gpuSoftware", "samples", "kubeconfig")


def parse_config(raw: Mapping[str, Any]) -> StackConfig:
    """Validate the `gpufleet:` keys (prefix stripped); raise ConfigError with every problem."""
    problems: list[Problem] = []
    for key in sorted(set(raw) - set(KNOWN_KEYS)):
        problems.append(
            Problem(key, f"unknown config key; allowed: {', '.join(KNOWN_KEYS)}", has_value=False)
        )

    cloud = raw.get("cloud")
    if cloud not in ("gcp", "aws", "azure", "existing"):
        problems.append(Problem("cloud", "must be one of gcp, aws, azure, existing", cloud))
        cloud = None

    parsed: dict[str, Any] = {}
    for key, model in _SECTIONS.items():
        value = raw.get(key, {} if key != "cluster" else None)
        if value is None:
            problems.append(Problem(key, "is required", has_value=False))
            continue
        parsed[key] = _validate(model, value, key, problems)

    indexed_pools: list[tuple[int, GpuPoolConfig]] = []
    raw_pools = raw.get("gpuPools", [])
    if not isinstance(raw_pools, list):
        problems.append(Problem("gpuPools", "must be a list of pools", raw_pools))
        raw_pools = []
    for index, raw_pool in enumerate(raw_pools):
        pool = _validate(GpuPoolConfig, raw_pool, f"gpuPools[{index}]", problems)
        if pool is not None:
            indexed_pools.append((index, pool))
    pools = [pool for _, pool in indexed_pools]

    warnings: list[str] = []
    cluster: ClusterConfig | None = parsed.get("cluster")
    software: GpuSoftwareConfig | None = parsed.get("gpuSoftware")
    if cloud is not None and cluster is not None:
        problems += _check_cluster(cloud, cluster)
        names: dict[str, int] = {}
        for index, pool in indexed_pools:
            path = f"gpuPools[{index}]"
            if pool.name in names:
                problems.append(
                    Problem(
                        f"{path}.name",
                        f"duplicate pool name (also gpuPools[{names[pool.name]}].name)",
                        pool.name,
                    )
                )
            names.setdefault(pool.name, index)
            mode = resolve_software_mode(cloud, software.mode) if software else "auto"
            problems += _check_pool(cloud, cluster, mode, pool, path, warnings)
    if cloud is not None and software is not None:
        problems += _check_software(cloud, software, pools, cluster)

    if problems:
        raise ConfigError(problems)
    assert cloud is not None and cluster is not None and software is not None
    return StackConfig(
        cloud=cloud,
        cluster=cluster,
        gpu_pools=tuple(pools),
        gpu_software=software,
        samples=parsed["samples"],
        warnings=tuple(warnings),
    )


def _validate(model: Any, value: Any, path: str, problems: list[Problem]) -> Any:
    try:
        return model.model_validate(value)
    except ValidationError as error:
        for detail in error.errors():
            loc = _render_loc(path, detail["loc"])
            if detail["type"] == "extra_forbidden":
                allowed = ", ".join(_allowed_keys(model, detail["loc"][:-1]))
                problems.append(
                    Problem(loc, f"unknown key; allowed here: {allowed}", has_value=False)
                )
            elif detail["type"] == "missing":
                problems.append(Problem(loc, "is required", has_value=False))
            else:
                problems.append(Problem(loc, detail["msg"], detail.get("input")))
        return None


def _render_loc(path: str, loc: Iterable[int | str]) -> str:
    rendered = path
    for part in loc:
        rendered += f"[{part}]" if isinstance(part, int) else f".{part}"
    return rendered


def _allowed_keys(model: Any, loc: Sequence[int | str]) -> list[str]:
    """The camelCase keys a model accepts at `loc` (for 'unknown key' messages)."""
    current = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = next(
            (f for n, f in current.model_fields.items() if (f.alias or n) == part or n == part),
            None,
        )
        if field is None:
            return []
        annotation = field.annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        nested = [c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)]
        if not nested:
            # list[Model] / Model | None
            for candidate in candidates:
                for arg in getattr(candidate, "__args__", ()):
                    if isinstance(arg, type) and issubclass(arg, BaseModel):
                        nested.append(arg)
        if not nested:
            return []
        current = nested[0]
    return sorted(f.alias or n for n, f in current.model_fields.items())


# --- semantic checks ------------------------------------------------------------------------


def _check_cluster(cloud: CloudName, cluster: ClusterConfig) -> list[Problem]:
    problems = []
    pattern, rule = CLUSTER_NAME_RULES[cloud]
    if not re.match(pattern, cluster.name):
        problems.append(Problem("cluster.name", f"not a valid cluster name ({rule})", cluster.name))
    if cluster.kubernetes_version not in charts.KUBERNETES_MINORS:
        problems.append(
            Problem(
                "cluster.kubernetesVersion",
                f"unsupported Kubernetes minor; allowed: {', '.join(charts.KUBERNETES_MINORS)}",
                cluster.kubernetes_version,
            )
        )
    if cloud != "existing":
        if cluster.region is None:
            problems.append(Problem("cluster.region", "is required", has_value=False))
        else:
            pattern, rule = REGION_RULES[cloud]
            if not re.match(pattern, cluster.region):
                problems.append(Problem("cluster.region", f"must be {rule}", cluster.region))
            problems += _check_zones(cloud, cluster.region, cluster.zones or [], "cluster.zones")
        if cloud == "aws" and not cluster.zones:
            problems.append(
                Problem(
                    "cluster.zones",
                    "is required on aws (the VPC spans these zones), e.g. [us-east-1a, us-east-1b]",
                    has_value=False,
                )
            )
    if cloud == "gcp" and not cluster.gcp.project:
        problems.append(
            Problem(
                "cluster.gcp.project", "is required on gcp (the GCP project id)", has_value=False
            )
        )
    if cloud == "azure":
        problems += _check_azure_cluster(cluster.azure)
    system = cluster.system_pool
    if system.min_nodes > system.max_nodes:
        problems.append(
            Problem(
                "cluster.systemPool.minNodes",
                f"must be <= maxNodes ({system.max_nodes})",
                system.min_nodes,
            )
        )
    if (
        cloud == "aws"
        and cluster.aws.private_subnet_ids is not None
        and not cluster.aws.private_subnet_ids
    ):
        problems.append(Problem("cluster.aws.privateSubnetIds", "must not be empty", []))
    if cloud == "aws":
        problems += _check_aws_cluster(cluster)
    return problems


# Expanders cluster-autoscaler knows (FAQ "What are Expanders?").
AWS_AUTOSCALER_EXPANDERS = (
    "random",
    "most-pods",
    "least-waste",
    "price",
    "priority",
    "least-nodes",
)


def _check_aws_cluster(cluster: ClusterConfig) -> list[Problem]:
    """Network ranges, subnets and the autoscaler expander of an EKS cluster."""
    import ipaddress

    aws = cluster.aws
    problems = []
    ranges: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for key, cidr, max_prefix in (
        ("vpcCidr", aws.vpc_cidr, 20),
        ("serviceCidr", aws.service_cidr, 24),
    ):
        try:
            network = ipaddress.ip_network(cidr)
        except ValueError:
            problems.append(
                Problem(f"cluster.aws.{key}", "must be an IPv4 CIDR such as 10.0.0.0/16", cidr)
            )
            continue
        if network.version != 4 or not 12 <= network.prefixlen <= max_prefix:
            problems.append(
                Problem(
                    f"cluster.aws.{key}", f"must be an IPv4 CIDR from /12 to /{max_prefix}", cidr
                )
            )
        else:
            ranges.append(network)
    if len(ranges) == 2 and ranges[0].overlaps(ranges[1]):
        problems.append(
            Problem(
                "cluster.aws.serviceCidr",
                f"must not overlap vpcCidr {aws.vpc_cidr}",
                aws.service_cidr,
            )
        )
    if cluster.zones is not None and len(cluster.zones) < 2:
        problems.append(
            Problem("cluster.zones", "EKS needs subnets in at least two zones", list(cluster.zones))
        )
    if aws.public_subnet_ids is not None and aws.private_subnet_ids is None:
        problems.append(
            Problem(
                "cluster.aws.publicSubnetIds",
                "needs privateSubnetIds too (nodes run in private subnets)",
                aws.public_subnet_ids,
            )
        )
    expanders = [e.strip() for e in aws.autoscaler_expander.split(",")]
    unknown = [e for e in expanders if e not in AWS_AUTOSCALER_EXPANDERS]
    if unknown or len(set(expanders)) != len(expanders):
        problems.append(
            Problem(
                "cluster.aws.autoscalerExpander",
                f"comma-separated, no repeats, from: {', '.join(AWS_AUTOSCALER_EXPANDERS)}",
                aws.autoscaler_expander,
            )
        )
    return problems


def _check_zones(cloud: str, region: str, zones: Sequence[str], path: str) -> list[Problem]:
    problems = []
    for index, zone in enumerate(zones):
        if cloud == "gcp":
            ok, rule = bool(re.fullmatch(rf"{re.escape(region)}-[a-z]", zone)), f"{region}-<letter>"
        elif cloud == "aws":
            ok, rule = bool(re.fullmatch(rf"{re.escape(region)}[a-z]", zone)), f"{region}<letter>"
        else:
            ok, rule = zone in ("1", "2", "3"), '"1", "2" or "3"'
        if not ok:
            problems.append(
                Problem(f"{path}[{index}]", f"zone outside region {region}; allowed: {rule}", zone)
            )
    if len(set(zones)) != len(zones):
        problems.append(Problem(path, "zones must not repeat", list(zones)))
    return problems


_AZURE_SUBNET_ID = re.compile(
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/"
    r"virtualNetworks/[^/]+/subnets/[^/]+$",
    re.IGNORECASE,
)
_AZURE_RESOURCE_GROUP = re.compile(r"^[-\w.()]{0,89}[-\w()]$")
_GUID = re.compile(r"^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")


def _check_azure_cluster(azure: AzureClusterOptions) -> list[Problem]:
    """AKS network ranges (overlay pods and services outside the VNet), ids and durations."""
    import ipaddress

    problems = []
    where = "cluster.azure"
    networks: dict[str, ipaddress.IPv4Network] = {}
    keys = {"podCidr": azure.pod_cidr, "serviceCidr": azure.service_cidr}
    if azure.vnet_subnet_id is None:
        keys = {"vnetCidr": azure.vnet_cidr, "subnetCidr": azure.subnet_cidr, **keys}
    for key, cidr in keys.items():
        try:
            network = ipaddress.ip_network(cidr)
        except ValueError:
            network = None
        if not isinstance(network, ipaddress.IPv4Network):
            problems.append(
                Problem(f"{where}.{key}", "must be an IPv4 CIDR such as 10.0.0.0/16", cidr)
            )
            continue
        networks[key] = network
    vnet, subnet = networks.get("vnetCidr"), networks.get("subnetCidr")
    if vnet and subnet and not subnet.subnet_of(vnet):
        problems.append(
            Problem(f"{where}.subnetCidr", f"must lie inside vnetCidr {vnet}", str(subnet))
        )
    for key in ("podCidr", "serviceCidr"):
        network = networks.get(key)
        if network is None:
            continue
        clash = [
            k
            for k, other in networks.items()
            if k not in (key, "subnetCidr") and other.overlaps(network)
        ]
        if key == "serviceCidr":
            clash = [k for k in clash if k != "podCidr"]
        if clash:
            problems.append(
                Problem(f"{where}.{key}", f"must not overlap {', '.join(clash)}", str(network))
            )
    service = networks.get("serviceCidr")
    try:
        dns = ipaddress.ip_address(azure.dns_service_ip)
    except ValueError:
        dns = None
    if dns is None or (service is not None and dns not in service):
        problems.append(
            Problem(
                f"{where}.dnsServiceIp",
                "must be an IPv4 address inside serviceCidr",
                azure.dns_service_ip,
            )
        )
    if azure.vnet_subnet_id is not None and not _AZURE_SUBNET_ID.match(azure.vnet_subnet_id):
        problems.append(
            Problem(
                f"{where}.vnetSubnetId",
                "must be a subnet resource id (/subscriptions/<id>/resourceGroups/<rg>/providers/"
                "Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>)",
                azure.vnet_subnet_id,
            )
        )
    if azure.resource_group_name is not None and not _AZURE_RESOURCE_GROUP.match(
        azure.resource_group_name
    ):
        problems.append(
            Problem(
                f"{where}.resourceGroupName",
                "must be 1-90 of letters, digits, - _ . ( ), not ending with a dot",
                azure.resource_group_name,
            )
        )
    for key, value in (
        ("scaleDownUnneededTime", azure.scale_down_unneeded_time),
        ("scaleDownDelayAfterAdd", azure.scale_down_delay_after_add),
    ):
        if not re.fullmatch(r"[1-9][0-9]*m", value):
            problems.append(
                Problem(
                    f"{where}.{key}",
                    "must be whole minutes such as 10m (AKS takes minutes only)",
                    value,
                )
            )
    for index, cidr in enumerate(azure.api_server_authorized_cidrs):
        try:
            ipaddress.ip_network(cidr)
        except ValueError:
            problems.append(
                Problem(
                    f"{where}.apiServerAuthorizedCidrs[{index}]",
                    "must be a CIDR such as 203.0.113.0/24",
                    cidr,
                )
            )
    if azure.subscription_id is not None and not _GUID.match(azure.subscription_id):
        problems.append(
            Problem(
                f"{where}.subscriptionId",
                "must be a subscription id (a GUID)",
                azure.subscription_id,
            )
        )
    for index, group in enumerate(azure.admin_group_object_ids):
        if not _GUID.match(group):
            problems.append(
                Problem(
                    f"{where}.adminGroupObjectIds[{index}]",
                    "must be an Entra ID group object id (a GUID)",
                    group,
                )
            )
    if azure.authentication == "local-accounts" and azure.admin_group_object_ids:
        problems.append(
            Problem(
                f"{where}.adminGroupObjectIds",
                "only applies with authentication: entra-id",
                azure.admin_group_object_ids,
            )
        )
    return problems


def _check_pool(
    cloud: CloudName,
    cluster: ClusterConfig,
    mode: SoftwareMode,
    pool: GpuPoolConfig,
    path: str,
    warnings: list[str],
) -> list[Problem]:
    problems: list[Problem] = []
    pattern, rule = POOL_NAME_RULES[cloud]
    if not re.match(pattern, pool.name):
        problems.append(Problem(f"{path}.name", f"not a valid pool name ({rule})", pool.name))
    if pool.name == SYSTEM_POOL_NAME:
        problems.append(Problem(f"{path}.name", "is reserved for the CPU system pool", pool.name))
    if pool.min_nodes > pool.max_nodes:
        problems.append(
            Problem(f"{path}.minNodes", f"must be <= maxNodes ({pool.max_nodes})", pool.min_nodes)
        )
    if pool.machine_type is not None and pool.machine_types is not None:
        problems.append(
            Problem(
                f"{path}.machineTypes",
                "give machineType or machineTypes, not both",
                pool.machine_types,
            )
        )
    problems += _check_labels_and_taints(pool, path)
    if cloud == "azure":
        # AKS takes taints as key=value:Effect and rejects an empty value.
        problems += [
            Problem(f"{path}.taints[{index}].value", "AKS taints need a value", taint.value)
            for index, taint in enumerate(pool.taints)
            if not taint.value
        ]

    model = gpus.GPU_MODELS.get(pool.accelerator)
    if model is None:
        allowed = ", ".join(sorted(gpus.GPU_MODELS))
        problems.append(
            Problem(
                f"{path}.accelerator", f"unknown accelerator; allowed: {allowed}", pool.accelerator
            )
        )
        return problems

    if cloud in ("gcp", "aws") and not (pool.zones or cluster.zones):
        problems.append(
            Problem(
                f"{path}.zones",
                "is required (here or as cluster.zones): GPU types are offered in some zones only",
                has_value=False,
            )
        )
    if cloud != "existing":
        if cluster.region is not None and pool.zones is not None:
            problems += _check_zones(cloud, cluster.region, pool.zones, f"{path}.zones")
        if cloud == "aws" and cluster.zones and pool.zones:
            outside = [z for z in pool.zones if z not in cluster.zones]
            if outside:
                problems.append(
                    Problem(
                        f"{path}.zones", f"not among cluster.zones {list(cluster.zones)}", outside
                    )
                )
        problems += _check_machines(cloud, pool, path, warnings)
        if cloud == "aws":
            problems += _check_aws_pool(cluster, pool, path)

    if pool.sharing is not None:
        problems += _check_sharing(pool, model, path)
    if pool.mig_partition_size is not None:
        problems += _check_mig(cloud, mode, pool, model, path)
    return problems


def _check_aws_pool(cluster: ClusterConfig, pool: GpuPoolConfig, path: str) -> list[Problem]:
    """What the autoscaler's tags and one-group-per-zone can express."""
    problems = []
    zones = pool.zones or cluster.zones or []
    if pool.aws.node_group == "self-managed" and zones and pool.max_nodes < len(zones):
        problems.append(
            Problem(
                f"{path}.maxNodes",
                f"must be at least the number of zones ({len(zones)}): each zone's auto scaling "
                "group gets a share of maxNodes; raise it or list fewer zones",
                pool.max_nodes,
            )
        )
    # One node-template tag per taint key: the GPU taint's key and repeats cannot be expressed.
    keys = ["nvidia.com/gpu", *(t.key for t in pool.taints)]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        problems.append(
            Problem(
                f"{path}.taints",
                "taint keys must be unique on aws (nvidia.com/gpu is already the GPU taint)",
                repeated,
            )
        )
    return problems


def _check_labels_and_taints(pool: GpuPoolConfig, path: str) -> list[Problem]:
    problems = []
    for key, value in pool.labels.items():
        why = label_key_problem(key)
        if why:
            problems.append(Problem(f"{path}.labels.{key}", f"bad label key: {why}", key))
        elif key.split("/")[0].endswith(RESERVED_LABEL_PREFIXES) and "/" in key:
            problems.append(
                Problem(
                    f"{path}.labels.{key}",
                    f"label prefix is reserved ({', '.join(RESERVED_LABEL_PREFIXES)})",
                    key,
                )
            )
        why = label_value_problem(value)
        if why:
            problems.append(Problem(f"{path}.labels.{key}", f"bad label value: {why}", value))
    for index, taint in enumerate(pool.taints):
        why = label_key_problem(taint.key)
        if why:
            problems.append(
                Problem(f"{path}.taints[{index}].key", f"bad taint key: {why}", taint.key)
            )
        why = label_value_problem(taint.value)
        if why:
            problems.append(
                Problem(f"{path}.taints[{index}].value", f"bad taint value: {why}", taint.value)
            )
    return problems


def _check_machines(
    cloud: Literal["gcp", "aws", "azure"], pool: GpuPoolConfig, path: str, warnings: list[str]
) -> list[Problem]:
    problems: list[Problem] = []
    names = pool.machine_types or ([pool.machine_type] if pool.machine_type else [])
    key = "machineTypes" if pool.machine_types is not None else "machineType"
    candidates = gpus.machine_types_for(cloud, pool.accelerator)
    if not candidates:
        offered = ", ".join(gpus.models_on(cloud))
        problems.append(
            Problem(
                f"{path}.accelerator",
                f"not offered on {cloud}; offered there: {offered}",
                pool.accelerator,
            )
        )
        return problems
    if pool.machine_types is not None and cloud != "aws":
        problems.append(
            Problem(
                f"{path}.machineTypes",
                "several machine types are only supported on aws; use machineType",
                names,
            )
        )
    if pool.machine_types is not None and not pool.machine_types:
        problems.append(Problem(f"{path}.machineTypes", "must list at least one machine type", []))
    allowed = ", ".join(m.name for m in candidates)
    machines: list[gpus.MachineType] = []
    for index, name in enumerate(names):
        where = f"{path}.{key}[{index}]" if pool.machine_types is not None else f"{path}.{key}"
        machine = gpus.MACHINE_TYPES.get((cloud, pool.accelerator, name))
        if machine is None:
            carries = gpus.carriers_of(cloud, name)
            known = (
                f"it carries {', '.join(carries)}" if carries else "not a GPU machine type we know"
            )
            problems.append(
                Problem(
                    where,
                    f"cannot carry {pool.accelerator} on {cloud} ({known}); allowed: {allowed}",
                    name,
                )
            )
            continue
        machines.append(machine)
        if machine.spot_only and not pool.spot:
            problems.append(
                Problem(where, "is sold only as Spot (or Flex-start) on GKE; set spot: true", name)
            )
        if machine.attach_counts:
            count = pool.gpus_per_node or 1
            if count not in machine.attach_counts:
                counts = ", ".join(str(c) for c in machine.attach_counts)
                problems.append(
                    Problem(
                        f"{path}.gpusPerNode",
                        f"{name} takes {counts} attached {pool.accelerator} GPU(s)",
                        count,
                    )
                )
        elif pool.gpus_per_node is not None and pool.gpus_per_node != machine.gpus:
            problems.append(
                Problem(
                    f"{path}.gpusPerNode",
                    f"{name} always has {machine.gpus} GPU(s); leave gpusPerNode unset or set {machine.gpus}",
                    pool.gpus_per_node,
                )
            )
    if len(machines) > 1:
        gpu_counts = {m.name: m.gpus for m in machines}
        if len(set(gpu_counts.values())) > 1:
            problems.append(
                Problem(
                    f"{path}.machineTypes",
                    "every instance type of one auto scaling group must have the same GPU count "
                    f"(the autoscaler simulates the first); got {gpu_counts}",
                    names,
                )
            )
        shapes = {(m.vcpus, m.memory_gib) for m in machines}
        if len(shapes) > 1:
            first = machines[0]
            warnings.append(
                f"{path}.machineTypes: vCPU or memory differ ({', '.join(f'{m.name} {m.vcpus} vCPU/{m.memory_gib:g} GiB' for m in machines)}); "
                f"the cluster autoscaler sizes the group at zero from the first type, {first.name}"
            )
    return problems


def _check_sharing(pool: GpuPoolConfig, model: gpus.GpuModel, path: str) -> list[Problem]:
    assert pool.sharing is not None
    problems = []
    if pool.mig_partition_size is not None:
        problems.append(
            Problem(
                f"{path}.sharing",
                "sharing and migPartitionSize cannot be combined; pick one",
                has_value=False,
            )
        )
    if pool.sharing.strategy not in model.sharing:
        problems.append(
            Problem(
                f"{path}.sharing.strategy",
                f"{model.name} supports {', '.join(model.sharing)}",
                pool.sharing.strategy,
            )
        )
    clients = pool.sharing.max_shared_clients_per_gpu
    if not 0 < clients <= gpus.MAX_SHARED_CLIENTS_PER_GPU:
        problems.append(
            Problem(
                f"{path}.sharing.maxSharedClientsPerGpu",
                f"must be between 1 and {gpus.MAX_SHARED_CLIENTS_PER_GPU}",
                clients,
            )
        )
    return problems


def _check_mig(
    cloud: CloudName, mode: SoftwareMode, pool: GpuPoolConfig, model: gpus.GpuModel, path: str
) -> list[Problem]:
    where = f"{path}.migPartitionSize"
    size = pool.mig_partition_size
    assert size is not None
    if not model.mig_partitions:
        return [Problem(where, f"{model.name} does not support MIG", size)]
    if size not in model.mig_partitions:
        return [Problem(where, f"{model.name} supports {', '.join(model.mig_partitions)}", size)]
    problems = []
    if cloud == "azure":
        # Without machineType the pool gets the catalog's default size, which must support MIG too.
        vm_size = pool.machine_type or gpus.DEFAULT_MACHINE_TYPES.get(("azure", pool.accelerator))
        machine = gpus.MACHINE_TYPES.get(("azure", pool.accelerator, vm_size or ""))
        if machine is not None and not machine.mig_capable:
            problems.append(Problem(where, f"{vm_size} does not support MIG on AKS", size))
        slices = size.split(".")[0]
        if slices not in gpus.AKS_MIG_PROFILES:
            problems.append(
                Problem(where, "AKS has no gpuInstanceProfile for this partition", size)
            )
    if cloud == "aws" and mode != "gpu-operator":
        problems.append(
            Problem(
                where,
                "MIG on EKS needs the GPU Operator's MIG manager; set gpuSoftware.mode: gpu-operator",
                size,
            )
        )
    return problems


def _check_software(
    cloud: CloudName,
    software: GpuSoftwareConfig,
    pools: Sequence[GpuPoolConfig],
    cluster: ClusterConfig | None = None,
) -> list[Problem]:
    problems = []
    mode = resolve_software_mode(cloud, software.mode)
    if cloud == "existing" and cluster is not None:
        problems += _check_existing_software(cluster.existing, mode, software, pools)
    if cloud == "aws":
        problems += _check_bottlerocket_software(mode, pools)
    if mode in ("device-plugin", "gpu-operator"):
        for index, pool in enumerate(pools):
            if pool.name == "default" and (pool.sharing or pool.mig_partition_size):
                problems.append(
                    Problem(
                        f"gpuPools[{index}].name",
                        "a shared or MIG pool cannot be named `default`: it would take the "
                        "device plugin's default config entry, which every other node uses",
                        pool.name,
                    )
                )
    if cloud == "gcp" and mode == "device-plugin":
        problems.append(
            Problem(
                "gpuSoftware.mode",
                "NVIDIA's device plugin conflicts with GKE's own on GKE-managed drivers; "
                "use auto, cloud-managed or gpu-operator",
                software.mode,
            )
        )
    if (
        cloud in ("aws", "azure", "existing")
        and mode == "cloud-managed"
        and any(p.sharing for p in pools)
    ):
        problems.append(
            Problem(
                "gpuSoftware.mode",
                "GPU sharing on this cloud is configured through NVIDIA's device plugin or operator; "
                "use device-plugin or gpu-operator",
                software.mode,
            )
        )
    if software.operator_driver and not (cloud == "azure" and mode == "gpu-operator"):
        problems.append(
            Problem(
                "gpuSoftware.operatorDriver",
                "only applies to azure with mode gpu-operator",
                software.operator_driver,
            )
        )
    if software.monitoring.service_monitor and not software.monitoring.dcgm_exporter:
        problems.append(
            Problem("gpuSoftware.monitoring.serviceMonitor", "needs dcgmExporter: true", True)
        )
    return problems


def _check_existing_software(
    existing: ExistingClusterOptions,
    mode: SoftwareMode,
    software: GpuSoftwareConfig,
    pools: Sequence[GpuPoolConfig],
) -> list[Problem]:
    """An existing cluster's GPU pools are found by their labels; GKE keeps its own plugin."""
    problems = []
    if existing.distribution == "gke" and mode == "device-plugin":
        problems.append(
            Problem(
                "gpuSoftware.mode",
                "on an existing GKE cluster NVIDIA's device plugin conflicts with GKE's own; "
                "set cloud-managed or gpu-operator",
                software.mode,
            )
        )
    for index, pool in enumerate(pools):
        if not pool.labels:
            problems.append(
                Problem(
                    f"gpuPools[{index}].labels",
                    "describe the pool's nodes by at least one label they carry: the GPU "
                    "software, monitoring and samples select the nodes by it",
                    has_value=False,
                )
            )
            continue
        for other_index, other in enumerate(pools):
            if (
                other_index != index
                and other.labels
                and pool.labels.items() <= other.labels.items()
            ):
                problems.append(
                    Problem(
                        f"gpuPools[{index}].labels",
                        f"every label also selects gpuPools[{other_index}] ({other.name}); "
                        "add a label that only this pool's nodes carry",
                        dict(pool.labels),
                    )
                )
    return problems


def _check_bottlerocket_software(
    mode: SoftwareMode, pools: Sequence[GpuPoolConfig]
) -> list[Problem]:
    """Bottlerocket's NVIDIA variant brings its own device plugin and is not an operator platform."""
    problems = []
    for index, pool in enumerate(pools):
        if pool.aws.ami_family != "bottlerocket":
            continue
        where = f"gpuPools[{index}].aws.amiFamily"
        if mode == "gpu-operator":
            problems.append(
                Problem(
                    where,
                    "the GPU Operator does not support Bottlerocket; use al2023",
                    "bottlerocket",
                )
            )
        elif pool.sharing is not None:
            problems.append(
                Problem(
                    where,
                    "Bottlerocket runs its own device plugin, which gpufleet does not configure "
                    "for sharing; use al2023 for shared pools",
                    "bottlerocket",
                )
            )
    return problems


# --- reading from Pulumi --------------------------------------------------------------------


def load_from_pulumi() -> StackConfig:
    """Read and validate the stack's config inside a Pulumi program.

    Raises `pulumi.RunError` (printed without a traceback by the Pulumi CLI) on bad config.
    """
    import json

    import pulumi
    from pulumi.runtime.config import CONFIG, get_config_env

    all_config: dict[str, Any] = {**get_config_env(), **CONFIG.get()}
    raw: dict[str, Any] = {}
    for full_key, value in all_config.items():
        namespace, _, key = full_key.partition(":")
        if namespace != "gpufleet" or key == "kubeconfig":
            continue
        try:
            raw[key] = json.loads(value) if isinstance(value, str) else value
        except json.JSONDecodeError:
            raw[key] = value
    try:
        config = parse_config(raw)
    except ConfigError as error:
        raise pulumi.RunError(error.render()) from None
    for warning in config.warnings:
        pulumi.log.warn(warning)
    return config
