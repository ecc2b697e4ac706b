"""Properties over every pool of every stack in stacks/: a pod built from a pool's `podScheduling`
output always fits that pool, and dropping any toleration of one of its taints stops it (except
where GKE's admission plugin, or Kueue for a queued pool's Job, adds that toleration back)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.model.config import parse_config
from components.tooling.capacity_fit import Workload
from components.tooling.fit import fit_check
from components.tooling.pool_views import PoolCheck, needs_plan, pool_checks
from components.tooling.scheduling.model import Taint
from components.tooling.stacks import load_stack
from tests.conftest import every_stack, plan_of

# Every GPU pool of every stack in stacks/ (the examples and the user's own).
pytestmark = pytest.mark.every_stack


def _all_checks() -> list[tuple[str, PoolCheck, PoolCheck | None]]:
    """(stack, GPU pool, the stack's CPU system pool) for every stack."""
    found = []
    for stack in every_stack():
        config = parse_config(load_stack(stack).gpufleet)
        resources = plan_of(stack).resources if needs_plan(config) else None
        checks = pool_checks(config, resources)
        system = next((c for c in checks if c.kind == "system"), None)
        found += [(stack, c, system) for c in checks if c.kind == "gpu"]
    return found


@pytest.fixture(scope="module")
def pools() -> list[tuple[str, PoolCheck, PoolCheck | None]]:
    found = _all_checks()
    assert {stack for stack, _, _ in found} == set(every_stack())
    return found


def pod_from(check: PoolCheck) -> dict[str, Any]:
    scheduling = copy.deepcopy(check.spec.pod_scheduling)
    return {
        "nodeSelector": scheduling["nodeSelector"],
        "tolerations": scheduling["tolerations"],
        "containers": [{"name": "main", "image": "x", "resources": scheduling["resources"]}],
    }


def tolerates(toleration: dict[str, str], taint: Taint) -> bool:
    """Kubernetes' Toleration.ToleratesTaint."""
    if toleration.get("effect") and toleration["effect"] != taint.effect:
        return False
    if toleration.get("key") and toleration["key"] != taint.key:
        return False
    if toleration.get("operator", "Equal") == "Exists":
        return True
    return toleration.get("value", "") == taint.value


def workload_of(check: PoolCheck) -> Workload | None:
    """The Job around the pod: on a queued pool, labelled for its queue (`consumers --for pod`
    prints the label with the fragment; GKE's queued pools take no other pod)."""
    queue = check.spec.queue
    return Workload(labels=queue.label) if queue is not None else None


def auto_tolerated(check: PoolCheck, taint: Taint) -> bool:
    """GKE's ExtendedResourceToleration adds `<resource> Exists NoSchedule` for requested GPUs."""
    return (
        check.spec.extended_resource_toleration
        and taint.key == check.spec.gpu_resource
        and taint.effect == "NoSchedule"
    )


# Harmless variations a user makes: extra unrelated tolerations, an equivalent toleration
# spelled with Exists, a CPU/memory request within the machine, a sidecar without GPUs.
variations = st.fixed_dictionaries(
    {
        "extra_tolerations": st.lists(
            st.from_regex(r"example\.com/[a-z]{1,8}", fullmatch=True), max_size=3
        ),
        "exists_form": st.booleans(),
        "cpu_share": st.floats(min_value=0, max_value=0.9),
        "memory_share": st.floats(min_value=0, max_value=0.9),
        "sidecar": st.booleans(),
        "order_seed": st.randoms(use_true_random=False),
    }
)


def vary(check: PoolCheck, pod: dict[str, Any], how: dict[str, Any]) -> dict[str, Any]:
    tolerations = list(pod["tolerations"])
    if how["exists_form"]:
        tolerations = [
            {"key": t["key"], "operator": "Exists", "effect": t["effect"]} for t in tolerations
        ]
    tolerations += [
        {"key": k, "operator": "Exists", "effect": "NoSchedule"} for k in how["extra_tolerations"]
    ]
    how["order_seed"].shuffle(tolerations)
    main = pod["containers"][0]
    template = check.views[0][1].node
    if template.cpu_millis < 2**62:  # known machine shape
        main["resources"]["requests"] = {
            "cpu": f"{int(template.cpu_millis * how['cpu_share'])}m",
            "memory": str(int(template.memory_bytes * how["memory_share"])),
        }
    containers = [main]
    if how["sidecar"]:
        containers.append({"name": "sidecar", "image": "y"})
    return {**pod, "tolerations": tolerations, "containers": containers}


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), how=variations)
def test_a_pod_from_pod_scheduling_fits_its_pool_and_never_the_cpu_pool(
    pools: list[tuple[str, PoolCheck, PoolCheck | None]], data: st.DataObject, how: dict[str, Any]
) -> None:
    stack, check, system = data.draw(st.sampled_from(pools))
    pod = vary(check, pod_from(check), how)
    verdict = fit_check(pod, check, workload_of(check))
    assert verdict.fits, (stack, check.name, pod, verdict.reasons)
    if system is not None:
        assert not fit_check(pod, system).fits


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), how=variations)
def test_removing_any_toleration_of_a_taint_makes_it_not_fit(
    pools: list[tuple[str, PoolCheck, PoolCheck | None]], data: st.DataObject, how: dict[str, Any]
) -> None:
    tainted = [(s, c, sys) for s, c, sys in pools if c.views[0][1].node.taints]
    stack, check, _ = data.draw(st.sampled_from(tainted))
    taints = check.views[0][1].node.taints
    taint = data.draw(st.sampled_from([t for t in taints if t.effect != "PreferNoSchedule"]))
    pod = vary(check, pod_from(check), how)
    pod["tolerations"] = [t for t in pod["tolerations"] if not tolerates(t, taint)]
    verdict = fit_check(pod, check, workload_of(check))
    # Kueue adds a queued pool's flavor tolerations (all its taints) to the Jobs it admits.
    if auto_tolerated(check, taint) or check.spec.queue is not None:
        assert verdict.fits, (stack, check.name, verdict.reasons)
    else:
        assert not verdict.fits, (stack, check.name, taint)
        assert any(f"taint {taint} is not tolerated" in reason for reason in verdict.reasons)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), key=st.from_regex(r"example\.com/[a-z]{1,8}", fullmatch=True))
def test_selecting_a_label_no_node_has_makes_it_not_fit(
    pools: list[tuple[str, PoolCheck, PoolCheck | None]], data: st.DataObject, key: str
) -> None:
    _, check, _ = data.draw(st.sampled_from(pools))
    pod = pod_from(check)
    pod["nodeSelector"][key] = "yes"
    verdict = fit_check(pod, check)
    assert not verdict.fits
    assert any(f"nodeSelector {key}=yes" in reason for reason in verdict.reasons)
