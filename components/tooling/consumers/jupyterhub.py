"""`--for jupyterhub`: KubeSpawner GPU profiles, as Zero to JupyterHub Helm values (default,
`singleuser.profileList`) or as Python for jupyterhub_config.py (`--format python`).

Read from the sources: Zero to JupyterHub 4.4.0 (`jupyterhub/values.schema.yaml`: profileList
is an array handed to `KubeSpawner.profile_list` unchanged; `jupyterhub/files/hub/
jupyterhub_config.py`: `matchNodePurpose: require` appends a required node affinity term for
`hub.jupyter.org/node-purpose=user` to `KubeSpawner.node_affinity_required`, and
`singleuser.nodeSelector` becomes `KubeSpawner.node_selector`) and KubeSpawner 7.1.0
(`_apply_overrides`: a profile's dict overrides are merged recursively into the setting, any
other value replaces it; `make_pod` applies `extra_pod_config` last, replacing each pod spec
field it names). Hence each profile sets `node_affinity_required: []` and
`extra_pod_config.nodeSelector`, so those two chart settings cannot keep it off its pool.

A notebook is one pod on one node and never uses a fabric pool's GPU network, so its profile
asks for the GPU only: no fabric device or network, which on a type with fewer fabric devices
than GPUs (1 EFA for 8 GPUs on g6.48xlarge) would hold a whole node per notebook.
"""

from __future__ import annotations

from typing import Any

from components.model.pools import PoolSpec
from components.tooling.consumers.shared import (
    Request,
    comment,
    describe,
    gpu_name,
    python_literal,
    to_yaml,
)

FORMATS = ("helm", "python")
Z2JH_CHART = "jupyterhub chart 4.4.0"
Z2JH_DOC = "https://z2jh.jupyter.org/en/stable/resources/reference.html#singleuser-profilelist"
KUBESPAWNER_DOC = (
    "https://jupyterhub-kubespawner.readthedocs.io/en/latest/spawner.html"
    "#kubespawner.KubeSpawner.profile_list"
)
NODE_PURPOSE_LABEL = "hub.jupyter.org/node-purpose"


def jupyterhub_profile(spec: PoolSpec) -> dict[str, Any]:
    """One KubeSpawner profile; override keys are KubeSpawner traits."""
    scheduling = spec.pod_scheduling
    selector = dict(scheduling["nodeSelector"])
    override: dict[str, Any] = {
        # KubeSpawner puts these into the notebook container's resources.limits: the GPU only.
        "extra_resource_limits": {
            name: str(count) for name, count in scheduling["resources"].get("limits", {}).items()
        },
        "node_selector": selector,
        "tolerations": list(scheduling["tolerations"]),
    }
    if spec.container_env:
        override["environment"] = dict(spec.container_env)
    # Replaces the node-purpose term `matchNodePurpose: require` adds (lists are replaced).
    override["node_affinity_required"] = []
    # Applied to the pod spec last: the pool's selector, not merged with singleuser.nodeSelector.
    override["extra_pod_config"] = {"nodeSelector": dict(selector), **dict(spec.pod_settings)}
    return {
        "display_name": f"GPU: {gpu_name(spec)} ({spec.name})",
        "slug": f"gpu-{spec.name}",
        "description": describe(spec),
        "kubespawner_override": override,
    }


def helm_values(request: Request) -> dict[str, Any]:
    return {"singleuser": {"profileList": [jupyterhub_profile(s) for s in request.pools]}}


def _why_it_schedules() -> list[str]:
    return [
        "Each profile lands on its pool whatever these two Zero to JupyterHub settings say:",
        "- scheduling.userPods.nodeAffinity.matchNodePurpose: require makes user pods require",
        f"  the node label {NODE_PURPOSE_LABEL}=user, which gpufleet's GPU nodes do not have.",
        "  The profile's `node_affinity_required: []` replaces that list (KubeSpawner replaces",
        "  list settings), dropping singleuser.extraNodeAffinity.required for GPU profiles too;",
        "  their node selector pins the pool.",
        "- singleuser.nodeSelector: KubeSpawner merges a profile's node_selector into it key by",
        "  key, so the pod would need both. `extra_pod_config.nodeSelector` is applied to the pod",
        "  last and replaces its whole nodeSelector with the pool's (keep nodeSelector out of",
        "  singleuser.extraPodConfig, which it would merge with).",
        "The profiles' tolerations replace scheduling.userPods.tolerations and",
        "singleuser.extraTolerations (GPU nodes have no hub.jupyter.org/dedicated taint).",
    ]


def render_jupyterhub(request: Request) -> str:
    if request.format == "python":
        header = comment(
            f"JupyterHub KubeSpawner profiles for gpufleet stack {request.stack} "
            f"({request.cloud}).",
            "Format: " + KUBESPAWNER_DOC,
            "Put this in jupyterhub_config.py (Zero to JupyterHub: under hub.extraConfig, or use",
            "the default Helm form for singleuser.profileList). Add your CPU profiles to the list.",
            *_why_it_schedules(),
        )
        profiles = [jupyterhub_profile(s) for s in request.pools]
        return f"{header}\nc.KubeSpawner.profile_list = {python_literal(profiles)}"
    header = comment(
        f"Zero to JupyterHub Helm values ({Z2JH_CHART}) for gpufleet stack {request.stack} "
        f"({request.cloud}): GPU profiles.",
        "singleuser.profileList goes to KubeSpawner unchanged: " + Z2JH_DOC,
        "Profile keys: " + KUBESPAWNER_DOC,
        "Merge into your values.yaml; Helm replaces lists, so add your CPU profiles to this one.",
        "Python for jupyterhub_config.py instead: --format python.",
        *_why_it_schedules(),
    )
    return f"{header}\n{to_yaml(helm_values(request))}"
