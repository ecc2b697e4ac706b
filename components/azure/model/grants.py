"""The control plane's role assignments gpufleet may leave to someone else.

ARM keeps one role assignment per principal, role and scope: creating a second one under another
name fails with 409 `RoleAssignmentExists` ("The role assignment already exists"; seen in
openshift/cloud-credential-operator commit ec2398375eb6, which reads existing assignments first
for that reason). The installed pulumi-azure-native (3.29.0) can read an assignment only by its
name (`authorization.get_role_assignment`), and one made by `az role assignment create` or by
another stack has a random name, so gpufleet cannot find it while planning. When the control
plane's identity already has a grant (AKS's own prerequisite for capacity reservation groups,
aks/use-capacity-reservation-groups "Prerequisites", asks users to make the Contributor grant;
a second stack sharing the identity and the group's resource group makes it again), the user
says so in `cluster.azure.grantsMadeElsewhere` and gpufleet creates only the others (the
deployer's Cluster Admin grant included).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from components.azure.model.config import AzureClusterOptions
from components.model.problems import Problem

# `grantsMadeElsewhere` values -> the grant each one skips.
GRANTS: Mapping[str, str] = MappingProxyType(
    {
        "subnet": "Network Contributor on the node subnet (cluster.azure.vnetSubnetId)",
        "reservation-groups": (
            "Contributor on the resource group of each capacity reservation group the pools use"
        ),
    }
)
KEY = "cluster.azure.grantsMadeElsewhere"


def grant_problems(azure: AzureClusterOptions) -> list[Problem]:
    """`grantsMadeElsewhere` only where a grant of the control plane can already exist."""
    made = azure.grants_made_elsewhere
    if not made:
        return []
    problems = []
    if not azure.role_assignments:
        problems.append(
            Problem(
                KEY,
                "cluster.azure.roleAssignments false already leaves every grant to an "
                "administrator; remove one of the two",
                made,
            )
        )
    elif azure.control_plane_identity_id is None:
        problems.append(
            Problem(
                KEY,
                "applies to a user-assigned control-plane identity "
                "(cluster.azure.controlPlaneIdentityId): AKS's system-assigned one is new with "
                "the cluster, so it has no grant yet; remove it",
                made,
            )
        )
    if "subnet" in made and azure.vnet_subnet_id is None:
        problems.append(
            Problem(
                KEY,
                "names subnet, but gpufleet creates the node subnet (no "
                "cluster.azure.vnetSubnetId), so no grant on it exists yet; remove subnet",
                made,
            )
        )
    if len(set(made)) != len(made):
        problems.append(Problem(KEY, "must not repeat", made))
    return problems


def skipped_grant_warnings(azure: AzureClusterOptions) -> list[str]:
    """What plan says gpufleet leaves out, and that it is not checked."""
    if not azure.role_assignments or azure.control_plane_identity_id is None:
        return []
    return [
        f"{KEY}: gpufleet does not create the control plane identity's {GRANTS[grant]}; it "
        "must exist before `pulumi up` (not checked: an assignment made outside the stack "
        "cannot be read by name). A grant another stack made goes when that stack is destroyed"
        for grant in dict.fromkeys(azure.grants_made_elsewhere)
    ]
