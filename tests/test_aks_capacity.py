"""AKS capacity on the whole graph: a pool in a capacity reservation group, and queued pools.

The stack is stacks/Pulumi.azure-reserved.yaml: `a100` in a reservation group that holds 2 of
its VMs ([reserved, on-demand]), `train` queued. What AKS and Azure do, and the sources:
components/azure/model/reservations.py (reservation groups) and components/model/catalog/
provisioning.py (the autoscaler's ProvisioningRequest class); docs/aks.md says it for users.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest

from components.azure.gpu_pool import POOL_REPLACE_ON_CHANGES, fixed_at_creation
from components.azure.mock import IDENTITY_PRINCIPAL_ID
from components.azure.model.deployed import kept
from components.azure.model.reservations import (
    GroupFacts,
    Reservation,
    group_problems,
)
from components.mock_world import World
from components.model.capacity import QUEUE_LABEL
from components.model.config import ConfigError, parse_config
from components.model.cost import stack_cost
from components.model.pools import resolve_pools
from components.tooling.capacity_fit import Workload
from components.tooling.commands import BadInput
from components.tooling.diff import diff_plans
from components.tooling.engine import Plan, RecordedResource, plan_stack
from components.tooling.fit import fit_check
from components.tooling.pool_views import pool_checks
from components.tooling.scheduling.workloads import read_workloads
from components.tooling.stacks import load_stack
from tests.conftest import PINNED_TODAY, plan_of
from tests.test_kueue import crd_schema, document, kueue_objects

STACK = "azure-reserved"
SUBSCRIPTION = "8c2d4e6f-1a3b-4c5d-9e7f-2a4b6c8d0e1f"
GROUP = (
    f"/subscriptions/{SUBSCRIPTION}/resourceGroups/gpu-reservations/providers/"
    "Microsoft.Compute/capacityReservationGroups/a100-eastus2"
)
IDENTITY = (
    f"/subscriptions/{SUBSCRIPTION}/resourceGroups/gpufleet-identities/providers/"
    "Microsoft.ManagedIdentity/userAssignedIdentities/gpufleet-reserved-control-plane"
)
OTHER_SUBSCRIPTION = GROUP.replace(SUBSCRIPTION, "00000000-0000-0000-0000-000000000000")
CONTRIBUTOR = "b24988ac-6180-42a0-ab88-20f7382dd24c"
NETWORK_CONTRIBUTOR = "4d97b98b-1d4f-4787-a291-c67834d212e7"
AGENT_POOL = "azure-native:containerservice:AgentPool"
CLUSTER = "azure-native:containerservice:ManagedCluster"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"


def raw_of(stack: str = STACK) -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(stack).gpufleet))


def overrides(raw: dict[str, Any]) -> dict[str, Any]:
    return {f"gpufleet:{key}": value for key, value in raw.items()}


def problems_of(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, PINNED_TODAY)
    return [str(p) for p in caught.value.problems]


def pools(plan: Plan) -> dict[str, RecordedResource]:
    return {r.inputs["agentPoolName"]: r for r in plan.of_type(AGENT_POOL)}


def grants(plan: Plan) -> dict[str, RecordedResource]:
    return {r.name: r for r in plan.of_type(ROLE_ASSIGNMENT)}


def test_a_pool_in_a_reservation_group_is_created_in_it_by_the_control_planes_identity() -> None:
    plan = plan_of(STACK)
    a100, train = pools(plan)["a100"], pools(plan)["train"]
    assert a100.inputs["capacityReservationGroupID"] == GROUP
    assert "capacityReservationGroupID" not in train.inputs
    # AKS fixes the group at creation: a change replaces the pool, deleting it first (its name
    # is the node label pods select).
    assert "capacityReservationGroupID" in a100.replace_on_changes
    assert a100.delete_before_replace
    # A system-assigned identity does not work for reservation groups: the control plane runs
    # as the user-assigned identity the stack names ...
    (cluster,) = plan.of_type(CLUSTER)
    assert cluster.inputs["identity"] == {
        "type": "UserAssigned",
        "userAssignedIdentities": [IDENTITY],
    }
    # ... which gets Contributor on the group's resource group, and Network Contributor on the
    # node subnet, by its principal (read while planning, so both precede the cluster).
    by_name = grants(plan)
    reservations = by_name["gpufleet-reserved-reservations-gpu-reservations"]
    assert (
        reservations.inputs["scope"]
        == f"/subscriptions/{SUBSCRIPTION}/resourceGroups/gpu-reservations"
    )
    assert reservations.inputs["roleDefinitionId"].endswith(f"/roleDefinitions/{CONTRIBUTOR}")
    assert reservations.inputs["principalId"] == IDENTITY_PRINCIPAL_ID
    subnet = by_name["gpufleet-reserved-subnet-network-contributor"]
    assert subnet.inputs["roleDefinitionId"].endswith(f"/roleDefinitions/{NETWORK_CONTRIBUTOR}")
    assert subnet.inputs["principalId"] == IDENTITY_PRINCIPAL_ID
    # The pool is created only once the grant exists (AKS places its VMs as that identity).
    assert reservations.urn in a100.dependencies
    # One grant per resource group, and none for a stack without a group.
    assert [g for g in by_name if "-reservations-" in g] == [reservations.name]
    assert not [g for g in grants(plan_of("azure-dev")) if "-reservations-" in g]


def test_every_bad_reservation_input_is_refused_at_once_with_key_value_and_what_to_do() -> None:
    raw = raw_of()
    a100 = raw["gpuPools"][0]
    crg = {"capacityReservationGroupId": GROUP}
    raw["gpuPools"] = [
        # 0: a CRG on a Spot pool.
        {**a100, "name": "spot", "capacity": "spot", "azure": crg},
        # 1: not a reservation group's ARM id.
        {**a100, "name": "badid", "azure": {"capacityReservationGroupId": "a100-eastus2"}},
        # 2: reserved without a group.
        {**a100, "name": "nogroup", "azure": {}},
        # 3: reserved alone, with nothing saying the pool stays within the reservation.
        {**a100, "name": "alone", "capacity": "reserved", "azure": crg},
        # 4: reserved alone beyond the VMs reserved for it.
        {**a100, "name": "beyond", "capacity": "reserved", "azure": {**crg, "reservedNodes": 2}},
        # 5: a VM size Azure reserves none of.
        {
            **a100,
            "name": "h100",
            "accelerator": "h100-80gb",
            "machineType": "Standard_ND96isr_H100_v5",
            "migPartitionSize": None,
        },
        # 6: a group on an on-demand pool; reservedNodes without a group.
        {**a100, "name": "ondemand", "capacity": "on-demand", "azure": crg},
        {**a100, "name": "nodes", "capacity": "on-demand", "azure": {"reservedNodes": 2}},
        # 8: a group in another subscription than the cluster's.
        {**a100, "name": "othersub", "azure": {"capacityReservationGroupId": OTHER_SUBSCRIPTION}},
    ]
    raw["gpuPools"][5].pop("migPartitionSize")
    raw["gpuPools"][5]["azure"] = crg
    raw["cluster"]["azure"]["controlPlaneIdentityId"] = "gpufleet-reserved-control-plane"
    found = problems_of(raw)
    key = "azure.capacityReservationGroupId"
    expected = [
        f"gpuPools[0].{key}: Spot VMs cannot use a capacity reservation (Azure: capacity-"
        "reservation-overview, Limitations); remove it, or make the pool on-demand in the group "
        f"with capacity: [reserved, on-demand] (got '{GROUP}')",
        f"gpuPools[1].{key}: must be a capacity reservation group's ARM id, /subscriptions/<id>/"
        "resourceGroups/<group>/providers/Microsoft.Compute/capacityReservationGroups/<name> (az "
        "capacity reservation group show --query id) (got 'a100-eastus2')",
        f"gpuPools[2].{key}: is required with capacity [reserved, on-demand]: the ARM id of the "
        "capacity reservation group the pool's VMs are placed in",
        "gpuPools[3].capacity: Azure does not stop at a reservation: a pool in a capacity "
        "reservation group takes regular on-demand VMs beyond the reserved ones (capacity-"
        "reservation-overallocate), so capacity reserved alone holds only while maxNodes stays "
        "within them, and azure.reservedNodes does not say how many VMs the group reserves for "
        "it; write capacity: [reserved, on-demand], or set azure.reservedNodes and keep maxNodes "
        "within it (got 'reserved')",
        "gpuPools[4].capacity: Azure does not stop at a reservation: a pool in a capacity "
        "reservation group takes regular on-demand VMs beyond the reserved ones (capacity-"
        "reservation-overallocate), so capacity reserved alone holds only while maxNodes stays "
        "within them, and maxNodes 4 is more than azure.reservedNodes 2;",
        "gpuPools[5].machineType: Standard_ND96isr_H100_v5 cannot be reserved: Azure has "
        "capacity reservations for no ND-series and no NCads H100 v5 VM (capacity-reservation-"
        "overview, Limitations); GPU sizes gpufleet knows that can be: Standard_NC4as_T4_v3, "
        "Standard_NC8as_T4_v3, Standard_NC16as_T4_v3, Standard_NC64as_T4_v3, "
        "Standard_NC24ads_A100_v4, Standard_NC48ads_A100_v4, Standard_NC96ads_A100_v4, "
        "Standard_NV36ads_A10_v5; or leave capacity out (got 'Standard_ND96isr_H100_v5')",
        f"gpuPools[6].{key}: applies only to a pool whose capacity is reserved (this pool's is "
        "on-demand); write capacity: [reserved, on-demand] (AKS fills the reservation first, "
        f"then takes regular VMs) or remove it (got '{GROUP}')",
        "gpuPools[7].azure.reservedNodes: applies only with azure.capacityReservationGroupId and "
        "capacity reserved; remove it (got 2)",
        f"gpuPools[8].{key}: is in subscription 00000000-0000-0000-0000-000000000000, the "
        f"cluster in {SUBSCRIPTION}: sharing a reservation group with another subscription is a "
        "preview (capacity-reservation-group-share) that AKS documents no support for; use a "
        "group in the cluster's subscription",
        "cluster.azure.controlPlaneIdentityId: must be a user-assigned managed identity's ARM "
        "id, /subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.ManagedIdentity/"
        "userAssignedIdentities/<name> (az identity show --query id) (got "
        "'gpufleet-reserved-control-plane')",
    ]
    for start in expected:
        assert any(p.startswith(start) for p in found), (start, found)
    # Without a control-plane identity, every pool in a group says what AKS needs.
    del raw["cluster"]["azure"]["controlPlaneIdentityId"]
    raw["gpuPools"] = raw_of()["gpuPools"]
    (problem,) = problems_of(raw)
    assert problem.startswith(
        f"gpuPools[0].{key}: AKS places a pool in a capacity reservation group only for a cluster "
        "whose control plane has a user-assigned managed identity (a system-assigned one does "
        "not work: aks/use-capacity-reservation-groups); create one (az identity create) and set "
        "cluster.azure.controlPlaneIdentityId to its id when the cluster is created"
    ), problem
    # Reserved alone is accepted while maxNodes stays within the VMs reserved for the pool.
    raw = raw_of()
    raw["gpuPools"][0].update(capacity="reserved", maxNodes=2)
    (spec, _) = resolve_pools(parse_config(raw, PINNED_TODAY))
    assert spec.capacity == ("reserved",)


def _group(
    *reservations: Reservation, zones: tuple[str, ...] = ("1",), where: str = "eastus2"
) -> GroupFacts:
    return GroupFacts("a100-eastus2", where, zones, reservations)


def test_the_group_as_azure_reports_it_must_take_the_pool() -> None:
    config = parse_config(raw_of(), PINNED_TODAY)
    pool, cluster = config.gpu_pools[0], config.cluster  # zone 1, 2 reserved, maxNodes 4
    a100 = "Standard_NC24ads_A100_v4"

    def said(group: GroupFacts) -> list[str]:
        return [str(p) for p in group_problems(group, pool, cluster, "gpuPools[0]")]

    assert said(_group(Reservation(a100, ("1",), 2))) == []
    # Fewer reserved than the config says would make fit's cap a lie.
    assert said(_group(Reservation(a100, ("1",), 1))) == [
        "gpuPools[0].azure.reservedNodes: group a100-eastus2 reserves 1 Standard_NC24ads_A100_v4 "
        "where the pool runs, fewer than this; set it to what the group reserves for the pool "
        "(az capacity reservation show) (got 2)"
    ]
    wrong = [
        (
            _group(Reservation(a100, ("1",), 2), where="westus3"),
            "is in westus3, the cluster in eastus2",
        ),
        (_group(), "holds no capacity reservation, and AKS then adds the pool without the group"),
        (
            _group(Reservation("Standard_NC4as_T4_v3", ("1",), 2)),
            "reserves no Standard_NC24ads_A100_v4 (it reserves Standard_NC4as_T4_v3): Azure "
            "refuses a VM whose size the group does not reserve",
        ),
        (
            _group(Reservation(a100, ("2",), 2), zones=("1", "2")),
            "reserves Standard_NC24ads_A100_v4 in zones 2, not in 1 where the pool also runs",
        ),
        (
            _group(Reservation(a100, (), 2), zones=()),
            "is regional (no zones): it takes only VMs deployed without a zone, and the pool is "
            "in zones 1",
        ),
    ]
    for group, says in wrong:
        found = said(group)
        assert any(
            p.startswith(f"gpuPools[0].azure.capacityReservationGroupId: group a100-eastus2 {says}")
            for p in found
        ), (says, found)
        assert all(p.endswith(f"(got '{GROUP}')") or "reservedNodes" in p for p in found)


def test_the_program_reads_the_group_and_stops_before_anything_is_created() -> None:
    stack = load_stack(STACK)
    t4_only = {
        "gpu-reservations/a100-eastus2": {
            "location": "eastus2",
            "zones": ["1"],
            "reservations": [
                {"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "zones": ["1"], "capacity": 2}
            ],
        }
    }
    with pytest.raises(BadInput, match="reserves no Standard_NC24ads_A100_v4"):
        plan_stack(stack, world=World(exists=False, capacity_reservation_groups=t4_only))
    with pytest.raises(
        BadInput, match="group a100-eastus2 was not found in resource group gpu-reservations"
    ):
        plan_stack(stack, world=World(exists=False, capacity_reservation_groups={}))


def test_an_adopted_cluster_needs_a_user_assigned_control_plane_for_reserved_pools() -> None:
    raw = raw_of("azure-existing")
    pool = raw["gpuPools"][0]
    pool.update(
        accelerator="a100-80gb",
        machineType="Standard_NC24ads_A100_v4",
        capacity=["reserved", "on-demand"],
        azure={"capacityReservationGroupId": OTHER_SUBSCRIPTION},
    )
    stack = load_stack("azure-existing")
    config = overrides(raw)
    with pytest.raises(BadInput, match="runs its control plane as a system-assigned identity"):
        plan_stack(stack, config, World(kubernetes_version="1.35.3", stack=raw))
    user_assigned = World(
        kubernetes_version="1.35.3", stack=raw, control_plane_identity_id=IDENTITY
    )
    plan = plan_stack(stack, config, user_assigned)
    assert pools(plan)["t4"].inputs["capacityReservationGroupID"] == OTHER_SUBSCRIPTION
    # The owner's cluster: gpufleet grants nothing, and says the grant is not checked.
    assert not plan.of_type(ROLE_ASSIGNMENT)
    assert any("that grant is its owner's to make, and not checked" in w for w in plan.warnings)
    # Without cluster.azure.subscriptionId, the group must be in the subscription the deployer
    # signs in to (the mock's), which is read while planning.
    pool["azure"]["capacityReservationGroupId"] = GROUP
    with pytest.raises(BadInput, match=f"is in subscription {SUBSCRIPTION}, the cluster in 0000"):
        plan_stack(stack, overrides(raw), user_assigned)


def test_a_running_cluster_keeps_its_control_plane_identity() -> None:
    before = raw_of("azure-dev")
    after = copy.deepcopy(before)
    after["cluster"]["azure"]["controlPlaneIdentityId"] = IDENTITY
    # The program reads the running cluster (system-assigned, as it was created) and stops.
    with pytest.raises(BadInput, match="runs its control plane as a system-assigned identity"):
        plan_stack(
            load_stack("azure-dev"),
            overrides(after),
            World(kubernetes_version="1.35.3", exists=True, stack=before),
        )
    # diff of two plans says the same.
    diff = diff_plans(
        plan_of("azure-dev").to_json(), plan_of("azure-dev", overrides(after)).to_json()
    )
    (cluster,) = [c for c in diff.changed if c.type == CLUSTER]
    assert cluster.verdict == "reject"
    assert any(
        r.startswith("identity: gpufleet keeps a running cluster's control-plane identity")
        for r in cluster.refusals
    )


def test_another_reservation_group_replaces_the_pool_deleting_first() -> None:
    raw = raw_of()
    raw["gpuPools"][0]["azure"]["capacityReservationGroupId"] = GROUP.replace(
        "a100-eastus2", "a100-next"
    )
    diff = diff_plans(plan_of(STACK).to_json(), plan_of(STACK, overrides(raw)).to_json())
    (pool,) = [c for c in diff.changed if c.type == AGENT_POOL]
    assert pool.verdict == "replace"
    assert "capacityReservationGroupID" in pool.replace_paths
    assert not pool.refusals
    assert "capacityReservationGroupID" in POOL_REPLACE_ON_CHANGES
    # A pool that exists in another group is created anew, so it gets a node count.
    spec = resolve_pools(parse_config(raw_of(), PINNED_TODAY))[0]
    running = {"a100": fixed_at_creation(spec, "Install", GROUP.upper())}
    assert kept(running, "a100", fixed_at_creation(spec, "Install", GROUP))
    assert not kept(running, "a100", fixed_at_creation(spec, "Install", None))


POD = """
apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: ml-training, labels: {labels}}}
spec:
  parallelism: {pods}
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {{kubernetes.azure.com/agentpool: {pool}}}
      tolerations: [{{key: sku, operator: Equal, value: gpu, effect: NoSchedule}}]
      containers:
      - name: main
        image: example.com/train:1
        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""


def _fit(pool: str, pods: int, gpus: int, queued: bool = False) -> Any:
    checks = {c.name: c for c in pool_checks(parse_config(raw_of(), PINNED_TODAY))}
    labels = json.dumps({QUEUE_LABEL: pool} if queued else {})
    (template,) = read_workloads(
        POD.format(labels=labels, pods=pods, pool=pool, gpus=gpus)
    ).templates
    return fit_check(
        template.spec, checks[pool], Workload(template.pods, template.labels, template.namespace)
    )


def test_fit_names_the_reservations_cap_and_a_queued_jobs_wait() -> None:
    reserved = _fit("a100", 1, 1)
    assert reserved.fits
    assert (
        "the first 2 nodes come from capacity reservation group a100-eastus2 (2 reserved "
        "Standard_NC24ads_A100_v4); beyond them, on-demand (capacity [reserved, on-demand])"
    ) in reserved.notes
    queued = _fit("train", 4, 4, queued=True)
    assert queued.fits
    assert any(
        n.startswith(
            "queued, all or nothing: the Job waits in Kueue until all 4 nodes for its 4 pods can be had at once"
        )
        for n in queued.notes
    ), queued.notes
    assert not _fit("train", 5, 4, queued=True).fits  # 5 nodes > maxNodes 4: waits forever


def test_queued_pools_ask_aks_own_autoscaler_for_all_their_nodes_at_once() -> None:
    plan = plan_of(STACK)
    objects = kueue_objects(plan)
    assert sorted(k for k, _, _ in objects) == sorted(
        [
            "AdmissionCheck",
            "ClusterQueue",
            "LocalQueue",
            "ProvisioningRequestConfig",
            "ResourceFlavor",
        ]
    )
    for (kind, _, _), resource in objects.items():
        jsonschema.validate(document(resource), crd_schema(kind))
    (config,) = [r for (k, _, _), r in objects.items() if k == "ProvisioningRequestConfig"]
    assert config.inputs["spec"]["provisioningClassName"] == ATOMIC
    (flavor,) = [r for (k, _, _), r in objects.items() if k == "ResourceFlavor"]
    assert flavor.inputs["spec"]["nodeLabels"] == {"kubernetes.azure.com/agentpool": "train"}
    # AKS runs the autoscaler and serves the ProvisioningRequest API: gpufleet installs neither.
    charts = [r.inputs["chart"] for r in plan.of_type("kubernetes:helm.sh/v3:Release")]
    assert not [c for c in charts if "autoscaler" in c]
    assert not [r for r in plan.resources if "CustomResourceDefinition" in r.type]
    assert any("is queued: AKS's own cluster autoscaler serves" in w for w in plan.warnings)


def test_the_cost_counts_what_the_reservation_bills_used_or_not() -> None:
    # Issue 31: the reserved VMs are billed whether or not nodes run, so idle counts them.
    raw = raw_of()
    cost = stack_cost(parse_config(raw, PINNED_TODAY), PINNED_TODAY)
    a100 = next(p for p in cost.pools if p.name == "a100")
    price = a100.per_node_hour
    assert price is not None and a100.min_nodes == 0
    assert (a100.committed_nodes, a100.committed_per_hour) == (2, pytest.approx(2 * price))
    assert cost.committed == pytest.approx(2 * price)
    (note,) = [w for w in cost.warnings if "capacity reservation group a100-eastus2" in w]
    assert "billed at its pay-as-you-go rate whether the pool's nodes run or not" in note
    del raw["gpuPools"][0]["azure"]["reservedNodes"]
    cost = stack_cost(parse_config(raw, PINNED_TODAY), PINNED_TODAY)
    (note,) = [w for w in cost.warnings if "capacity reservation group a100-eastus2" in w]
    assert "gpufleet does not know how many it holds (set azure.reservedNodes)" in note
    assert cost.committed == 0.0
