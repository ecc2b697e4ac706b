"""The scheduling simulator against kube-scheduler's rules, table by table."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.tooling.scheduling import quantity
from components.tooling.scheduling.evaluate import evaluate, fit_pool
from components.tooling.scheduling.model import NodeTemplate, PoolView, Taint

GIB = 2**30
ZONE = "topology.kubernetes.io/zone"
TYPE = "node.kubernetes.io/instance-type"
GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")


def node(**overrides: Any) -> NodeTemplate:
    fields: dict[str, Any] = {
        "pool": "gpu-l4",
        "labels": {"kubernetes.io/arch": "amd64", "gpu.type": "l4", "gpu.count": "4", "odd": "x4"},
        "label_choices": {ZONE: ("us-a", "us-b"), TYPE: ("g2-standard-48", "g2-standard-96")},
        "taints": (),
        "allocatable": {"nvidia.com/gpu": 4},
        "cpu_millis": 48_000,
        "memory_bytes": 192 * GIB,
    }
    fields.update(overrides)
    return NodeTemplate(**fields)


def pod(resources: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "trainer", "image": "trainer:1"}
    if resources is not None:
        container["resources"] = resources
    return {"containers": [container], **spec}


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
        }
    }


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    found: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        found["values"] = list(values)
    return found


def term(*expressions: dict[str, Any]) -> dict[str, Any]:
    return {"matchExpressions": list(expressions)}


def check(
    spec: dict[str, Any], template: NodeTemplate | None = None, gke: bool | None = False
) -> list[str]:
    return evaluate(spec, template or node(), extended_resource_toleration=gke)


# --------------------------------------------------------------------------- nodeSelector


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({}, []),
        ({"kubernetes.io/arch": "amd64", "gpu.type": "l4"}, []),
        ({ZONE: "us-b"}, []),
        ({ZONE: "us-b", TYPE: "g2-standard-96"}, []),
        (
            {"kubernetes.io/arch": "arm64"},
            ["nodeSelector kubernetes.io/arch=arm64: node has kubernetes.io/arch=amd64"],
        ),
        (
            {"cloud.google.com/gke-nodepool": "foo"},
            ["nodeSelector cloud.google.com/gke-nodepool=foo: no such label on pool's nodes"],
        ),
        ({ZONE: "eu-a"}, [f"nodeSelector {ZONE}=eu-a: nodes have {ZONE} in [us-a, us-b]"]),
        (
            {"gpu.type": "a100", "missing": "x"},
            [
                "nodeSelector gpu.type=a100: node has gpu.type=l4",
                "nodeSelector missing=x: no such label on pool's nodes",
            ],
        ),
        ({"gpu": True}, ["nodeSelector gpu: value True is not a string"]),
    ],
)
def test_node_selector(selector: dict[str, Any], expected: list[str]) -> None:
    got = check(pod(nodeSelector=selector))
    assert len(got) == len(expected)
    for reason, start in zip(got, expected, strict=True):
        assert reason.startswith(start)


# --------------------------------------------------------------------------- node affinity


@pytest.mark.parametrize(
    ("expression", "fits"),
    [
        (expr("gpu.type", "In", "a100", "l4"), True),
        (expr("gpu.type", "In", "a100"), False),
        (expr("gpu.type", "NotIn", "a100"), True),
        (expr("gpu.type", "NotIn", "l4"), False),
        (expr("absent", "NotIn", "x"), True),  # NotIn matches an absent label
        (expr("gpu.type", "Exists"), True),
        (expr("absent", "Exists"), False),
        (expr("absent", "DoesNotExist"), True),
        (expr("gpu.type", "DoesNotExist"), False),
        (expr("gpu.count", "Gt", "3"), True),
        (expr("gpu.count", "Gt", "4"), False),
        (expr("gpu.count", "Lt", "5"), True),
        (expr("gpu.count", "Lt", "4"), False),
        (expr("gpu.count", "Gt", "-1"), True),
        (expr("odd", "Gt", "1"), False),  # non-integer label value never matches
        (expr("absent", "Lt", "10"), False),
        (expr(ZONE, "In", "us-b"), True),  # some node is in us-b
        (expr(ZONE, "NotIn", "us-a"), True),  # ... and some node is not in us-a
        (expr(ZONE, "NotIn", "us-a", "us-b"), False),
        (expr(ZONE, "Exists"), True),
    ],
)
def test_affinity_operators(expression: dict[str, Any], fits: bool) -> None:
    got = check(pod(affinity=required(term(expression))))
    assert (got == []) == fits, got
    if not fits:
        assert got[0].startswith("required node affinity: no term matches (term 1: ")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (
            expr("gpu.count", "Gt", "a"),
            "invalid expression gpu.count Gt: needs exactly one integer",
        ),
        (expr("gpu.count", "Gt", "1", "2"), "needs exactly one integer value"),
        (expr("gpu.type", "In"), "gpu.type In: needs at least one value"),
        (expr("gpu.type", "Exists", "l4"), "gpu.type Exists: must not have values"),
        (expr("gpu.type", "Like", "l4"), "unknown operator 'Like'"),
        ({"key": "gpu.count", "operator": "In", "values": [4]}, "values must be a list of strings"),
    ],
)
def test_invalid_expressions_never_match(expression: dict[str, Any], message: str) -> None:
    (reason,) = check(pod(affinity=required(term(expression))))
    assert message in reason


def test_reason_names_term_and_node_value() -> None:
    (reason,) = check(pod(affinity=required(term(expr("gpu.type", "In", "a100")))))
    assert reason == (
        "required node affinity: no term matches "
        "(term 1: gpu.type In [a100] but node has gpu.type=l4)"
    )


def test_terms_are_ored_and_expressions_anded() -> None:
    failing = term(expr("gpu.type", "In", "a100"))
    passing = term(expr("gpu.type", "In", "l4"), expr("kubernetes.io/arch", "In", "amd64"))
    half = term(expr("gpu.type", "In", "l4"), expr("absent", "Exists"))
    assert check(pod(affinity=required(failing, passing))) == []
    (reason,) = check(pod(affinity=required(failing, half)))
    assert "term 1: gpu.type In [a100] but node has gpu.type=l4" in reason
    assert "term 2: absent Exists but node has no absent label" in reason
    assert "gpu.type In [l4]" not in reason  # only the failing expression is named


@pytest.mark.parametrize(
    ("node_affinity", "message"),
    [
        (required(), "nodeSelectorTerms is empty, which matches no node"),
        ({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}, "is empty"),
        (required({}), "term 1: empty term matches no node"),
        (required({"matchExpressions": []}), "term 1: empty term matches no node"),
    ],
)
def test_empty_terms_match_nothing(node_affinity: dict[str, Any], message: str) -> None:
    (reason,) = check(pod(affinity=node_affinity))
    assert message in reason


def test_preferred_and_absent_affinity_are_ignored() -> None:
    preferred = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": term(expr("gpu.type", "In", "a100"))}
            ],
            "requiredDuringSchedulingIgnoredDuringExecution": None,
        }
    }
    assert check(pod(affinity=preferred)) == []
    assert check(pod(affinity={"podAntiAffinity": {}})) == []


def test_match_fields_metadata_name() -> None:
    pinned = {"matchFields": [expr("metadata.name", "In", "node-1")]}
    (reason,) = check(pod(affinity=required(pinned)))
    assert "metadata.name In [node-1] names a specific node" in reason
    avoided = {"matchFields": [expr("metadata.name", "NotIn", "node-1")]}
    assert check(pod(affinity=required(avoided))) == []
    (reason,) = check(pod(affinity=required({"matchFields": [expr("spec.x", "In", "y")]})))
    assert "invalid matchFields entry" in reason


def test_label_choices_are_chosen_per_node() -> None:
    # One node has one zone: the same term cannot ask for two.
    both = term(expr(ZONE, "In", "us-a"), expr(ZONE, "NotIn", "us-a"))
    (reason,) = check(pod(affinity=required(both)))
    assert "cannot all hold on one node" in reason
    assert f"nodes have {ZONE} in [us-a, us-b]" in reason
    # Different choice keys are independent: any zone with any instance type.
    mixed = term(expr(ZONE, "In", "us-b"), expr(TYPE, "In", "g2-standard-48"))
    assert check(pod(affinity=required(mixed))) == []


def test_selector_and_affinity_must_hold_on_the_same_node() -> None:
    spec = pod(nodeSelector={ZONE: "us-a"}, affinity=required(term(expr(ZONE, "In", "us-b"))))
    (reason,) = check(spec)
    assert reason.startswith("nodeSelector and required node affinity each match some node")
    spec = pod(nodeSelector={ZONE: "us-a"}, affinity=required(term(expr(ZONE, "In", "us-a", "x"))))
    assert check(spec) == []


def test_selector_failure_is_not_blamed_on_affinity() -> None:
    spec = pod(
        nodeSelector={"gpu.type": "a100"}, affinity=required(term(expr("gpu.type", "Exists")))
    )
    assert check(spec) == ["nodeSelector gpu.type=a100: node has gpu.type=l4"]


def test_node_name_is_unsatisfiable_for_a_template() -> None:
    (reason,) = check(pod(nodeName="gke-node-1"))
    assert "spec.nodeName pins the pod to node gke-node-1" in reason


# --------------------------------------------------------------------------- taints


TAINTS = {
    "gpu": Taint("nvidia.com/gpu", "present", "NoSchedule"),
    "bare": Taint("dedicated", "", "NoSchedule"),
    "evict": Taint("spot", "true", "NoExecute"),
    "soft": Taint("prefer", "x", "PreferNoSchedule"),
}


@pytest.mark.parametrize(
    ("taint", "tolerations", "fits"),
    [
        ("soft", [], True),  # PreferNoSchedule only scores
        ("gpu", [], False),
        ("evict", [], False),
        ("gpu", [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}], True),
        ("gpu", [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present"}], True),
        ("gpu", [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "absent"}], False),
        ("gpu", [{"key": "nvidia.com/gpu", "operator": "Equal"}], False),  # value "" != present
        ("gpu", [{"key": "nvidia.com/gpu", "operator": "Exists"}], True),
        ("gpu", [{"key": "other", "operator": "Exists"}], False),
        ("gpu", [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}], False),
        ("gpu", [{"operator": "Exists"}], True),  # empty key + Exists tolerates everything
        ("evict", [{"operator": "Exists"}], True),
        ("gpu", [{"operator": "Exists", "effect": "NoSchedule"}], True),
        ("evict", [{"operator": "Exists", "effect": "NoSchedule"}], False),
        ("bare", [{"key": "dedicated", "operator": "Equal", "value": ""}], True),
        ("bare", [{"key": "dedicated"}], True),  # operator defaults to Equal, value to ""
        ("evict", [{"key": "spot", "value": "true", "tolerationSeconds": 30}], True),
        ("evict", [{"key": "spot", "value": "true", "effect": "NoSchedule"}], False),
        ("gpu", [{"key": "nvidia.com/gpu", "operator": "Gte", "value": "present"}], False),
    ],
)
def test_tolerations(taint: str, tolerations: list[dict[str, Any]], fits: bool) -> None:
    got = check(pod(tolerations=tolerations), node(taints=(TAINTS[taint],)))
    assert (got == []) == fits, got
    if not fits:
        assert got == [f"taint {TAINTS[taint]} is not tolerated"]


def test_taint_reason_wording() -> None:
    assert check(pod(), node(taints=(GPU_TAINT,))) == [
        "taint nvidia.com/gpu=present:NoSchedule is not tolerated"
    ]
    assert check(pod(), node(taints=(TAINTS["bare"],))) == [
        "taint dedicated:NoSchedule is not tolerated"
    ]


def test_non_string_toleration_is_reported() -> None:
    got = check(pod(tolerations=[{"key": "spot", "value": True}]), node(taints=(TAINTS["evict"],)))
    assert got[0].startswith("toleration 1: value True is not a string")
    assert got[1] == "taint spot=true:NoExecute is not tolerated"


GPU_LIMIT = {"limits": {"nvidia.com/gpu": 1}}


@pytest.mark.parametrize(
    ("spec", "taints", "gke", "fits"),
    [
        (pod(GPU_LIMIT), (GPU_TAINT,), True, True),
        (pod(GPU_LIMIT), (GPU_TAINT,), False, False),
        (pod(), (GPU_TAINT,), True, False),  # no GPU requested, no toleration added
        (
            pod({"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 1}}),
            (GPU_TAINT,),
            True,
            True,
        ),
        (
            {
                "initContainers": [{"name": "i", "resources": GPU_LIMIT}],
                "containers": [{"name": "c"}],
            },
            (GPU_TAINT,),
            True,
            True,
        ),
        # The added toleration is NoSchedule only.
        (pod(GPU_LIMIT), (Taint("nvidia.com/gpu", "present", "NoExecute"),), True, False),
        # ... and only for the requested resource's own key.
        (pod(GPU_LIMIT), (Taint("dedicated", "gpu", "NoSchedule"),), True, False),
        # kubernetes.io/ resources are native, not extended.
        (
            pod({"limits": {"example.kubernetes.io/thing": 1}}),
            (Taint("example.kubernetes.io/thing", "", "NoSchedule"),),
            True,
            False,
        ),
    ],
)
def test_gke_extended_resource_toleration(
    spec: dict[str, Any], taints: tuple[Taint, ...], gke: bool, fits: bool
) -> None:
    template = node(
        taints=taints, allocatable={"nvidia.com/gpu": 4, "example.kubernetes.io/thing": 1}
    )
    got = check(spec, template, gke=gke)
    assert (got == []) == fits, got


def test_a_missing_gpu_toleration_says_why_the_api_server_did_not_add_it() -> None:
    """Without the admission plugin the pod must list the toleration; where it is not known
    whether the plugin runs (a cluster of unknown distribution) fit says so, and judges the
    pod as if it did not; where it runs, a taint of another key still needs a toleration."""
    (without,) = check(pod(GPU_LIMIT), node(taints=(GPU_TAINT,)), gke=False)
    assert without == (
        "taint nvidia.com/gpu=present:NoSchedule is not tolerated (this cluster's API server "
        "does not add a toleration for requested nvidia.com/gpu: it does not run the "
        "ExtendedResourceToleration admission plugin; the pod must list one)"
    )
    (unknown,) = check(pod(GPU_LIMIT), node(taints=(GPU_TAINT,)), gke=None)
    assert unknown.startswith(
        "taint nvidia.com/gpu=present:NoSchedule is not tolerated (whether this cluster's API "
        "server adds a toleration for requested nvidia.com/gpu is not known"
    )
    assert check(pod(GPU_LIMIT), node(taints=(GPU_TAINT,)), gke=True) == []
    sku = Taint("sku", "gpu", "NoSchedule")
    (other,) = check(pod(GPU_LIMIT), node(taints=(sku,)), gke=True)
    assert other == (
        "taint sku=gpu:NoSchedule is not tolerated (the API server adds tolerations only for "
        "the resources the pod requests (nvidia.com/gpu, NoSchedule), not for sku; the pod must "
        "list one)"
    )
    # A NoExecute taint keyed by the GPU is not tolerated by the NoSchedule toleration added.
    evicting = Taint("nvidia.com/gpu", "present", "NoExecute")
    (effect,) = check(pod(GPU_LIMIT), node(taints=(evicting,)), gke=True)
    assert effect.startswith("taint nvidia.com/gpu=present:NoExecute is not tolerated")


# --------------------------------------------------------------------------- resources


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        ({"limits": {"nvidia.com/gpu": 4}}, []),
        ({"limits": {"nvidia.com/gpu": "8"}}, ["requests nvidia.com/gpu: 8 but a node offers 4"]),
        (
            {"limits": {"example.com/fpga": 1}},
            ["requests example.com/fpga: 1 but the node offers none"],
        ),
        ({"limits": {"example.com/fpga": 0}}, []),  # zero requests always fit
        ({"requests": {"cpu": "48", "memory": "192Gi"}}, []),  # exactly allocatable
        ({"requests": {"cpu": "64"}}, ["requests cpu 64 but the machine has 48 vCPU"]),
        ({"limits": {"cpu": "48001m"}}, ["requests cpu 48.001 but the machine has 48 vCPU"]),
        (
            {"requests": {"memory": "300Gi"}},
            ["requests memory 300 GiB but the machine has 192 GiB"],
        ),
        (
            {"requests": {"memory": str(192 * GIB + 1)}},
            [f"requests memory {192 * GIB + 1} bytes but the machine has {192 * GIB} bytes"],
        ),
        ({"requests": {"cpu": 0, "memory": 0}}, []),
        (
            {"requests": {"hugepages-2Mi": "1Gi"}, "limits": {"hugepages-2Mi": "1Gi"}},
            ["requests hugepages-2Mi: 1073741824 but the node offers none"],
        ),
        ({"requests": {"ephemeral-storage": "1Ti"}}, []),  # not modelled
        (
            {"requests": {"cpu": "-1"}},
            ["container trainer: requests cpu: invalid quantity '-1': must not be negative"],
        ),
        (
            {"limits": {"memory": "lots"}},
            ["container trainer: limits memory: invalid quantity 'lots'"],
        ),
        (
            {"requests": {"ephemeral-storage": "x"}},
            ["container trainer: requests ephemeral-storage"],
        ),
        (
            {"limits": {"nvidia.com/gpu": "0.5"}},
            [
                "container trainer: limits nvidia.com/gpu: "
                "invalid quantity '0.5': must be a whole number"
            ],
        ),
        (
            {"requests": {"nvidia.com/gpu": 1}},
            ["container trainer: requests nvidia.com/gpu=1 without limits"],
        ),
        (
            {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}},
            ["container trainer: requests nvidia.com/gpu=1 but limits nvidia.com/gpu=2"],
        ),
        (
            {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
            ["container trainer: requests cpu=2 exceeds limits cpu=1"],
        ),
        ("lots", ["container trainer: resources is not a mapping"]),
    ],
)
def test_resources(resources: Any, expected: list[str]) -> None:
    got = check(pod(resources))
    assert len(got) == len(expected), got
    for reason, start in zip(got, expected, strict=True):
        assert reason.startswith(start), reason


def test_resource_reason_names_containers() -> None:
    spec = {
        "containers": [
            {"name": "trainer", "resources": {"limits": {"nvidia.com/gpu": 3}}},
            {"name": "helper", "resources": {"limits": {"nvidia.com/gpu": 2}}},
        ]
    }
    assert check(spec) == [
        "requests nvidia.com/gpu: 5 but a node offers 4 (container trainer: limits "
        "nvidia.com/gpu=3 + container helper: limits nvidia.com/gpu=2)"
    ]


def containers(
    *cpus: str, init: tuple[str, ...] = (), sidecars: tuple[str, ...] = ()
) -> dict[str, Any]:
    def one(name: str, cpu: str, **extra: Any) -> dict[str, Any]:
        return {"name": name, "resources": {"requests": {"cpu": cpu}}, **extra}

    return {
        "initContainers": [one(f"s{i}", c, restartPolicy="Always") for i, c in enumerate(sidecars)]
        + [one(f"i{i}", c) for i, c in enumerate(init)],
        "containers": [one(f"c{i}", c) for i, c in enumerate(cpus)],
    }


@pytest.mark.parametrize(
    ("spec", "needed_millis", "blamed"),
    [
        (containers("20", "20"), 40_000, "container c0"),
        (containers("20", "20", init=("30",)), 40_000, "container c0"),
        (containers("20", "20", init=("50", "10")), 50_000, "init container i0"),
        # A sidecar runs next to the main containers and next to later init containers.
        (containers("20", "20", sidecars=("10",)), 50_000, "init container s0"),
        (containers("1", sidecars=("10",), init=("45",)), 55_000, "init container i0"),
        ({**containers("20"), "overhead": {"cpu": "30"}}, 50_000, "pod overhead cpu=30"),
        ({**containers("60"), "resources": {"requests": {"cpu": "4"}}}, 4_000, "pod-level"),
        ({**containers("1"), "resources": {"limits": {"cpu": "50"}}}, 50_000, "pod-level limits"),
    ],
)
def test_pod_request_aggregation(spec: dict[str, Any], needed_millis: int, blamed: str) -> None:
    fits = check(spec, node(cpu_millis=needed_millis))
    assert fits == []
    (reason,) = check(spec, node(cpu_millis=needed_millis - 1))
    assert reason.startswith(f"requests cpu {quantity.format_cpu(needed_millis)} but")
    assert blamed in reason


# --------------------------------------------------------------------------- fit_pool


def pool(min_nodes: int, scale_from_zero: NodeTemplate | None, gke: bool = False) -> PoolView:
    live = node(taints=(GPU_TAINT,))
    return PoolView("gpu-l4", "gpu", min_nodes, live, scale_from_zero, gke)


def test_fit_pool_running_nodes() -> None:
    result = fit_pool(pod(GPU_LIMIT), pool(1, None, gke=True))
    assert (result.pool, result.fits, result.reasons, result.via) == (
        "gpu-l4",
        True,
        [],
        "running nodes",
    )
    result = fit_pool(pod(GPU_LIMIT), pool(1, None, gke=False))
    assert not result.fits and result.reasons[0].startswith("taint nvidia.com/gpu")


def test_fit_pool_at_zero_uses_autoscaler_template() -> None:
    result = fit_pool(pod(GPU_LIMIT), pool(0, node(taints=(GPU_TAINT,)), gke=True))
    assert result.fits and result.via == "autoscaler template at zero"


def test_fit_pool_at_zero_without_template_never_scales() -> None:
    result = fit_pool(pod(GPU_LIMIT), pool(0, None, gke=True))
    assert not result.fits
    assert result.reasons == [
        "pool has 0 nodes and the cluster autoscaler cannot see its template, "
        "so it would never scale up for this pod"
    ]


def test_fit_pool_blames_template_lacking_gpu() -> None:
    template = node(taints=(GPU_TAINT,), allocatable={})
    result = fit_pool(pod(GPU_LIMIT), pool(0, template, gke=True))
    assert not result.fits
    assert result.reasons[0].startswith("a running node of this pool would fit")
    assert "autoscaler's template" in result.reasons[0]
    assert (
        result.reasons[1]
        == "autoscaler template: requests nvidia.com/gpu: 1 but the node offers none "
        "(container trainer: limits nvidia.com/gpu=1)"
    )


def test_fit_pool_template_and_node_both_fail() -> None:
    result = fit_pool(pod({"limits": {"nvidia.com/gpu": 9}}), pool(0, node(), gke=True))
    assert not result.fits
    assert result.reasons == [
        "requests nvidia.com/gpu: 9 but a node offers 4 "
        "(container trainer: limits nvidia.com/gpu=9)"
    ]


def test_fit_pool_template_fits_but_real_node_does_not() -> None:
    # The template forgot the GPU taint: scale-up happens, the pod still stays Pending.
    result = fit_pool(pod(GPU_LIMIT), pool(0, node(), gke=False))
    assert not result.fits and result.via == "autoscaler template at zero"
    assert result.reasons[0].startswith("the cluster autoscaler would add a node")
    assert result.reasons[1].startswith("running node: taint nvidia.com/gpu=present:NoSchedule")


# --------------------------------------------------------------------------- quantity


@pytest.mark.parametrize(
    ("value", "millis"),
    [
        ("500m", 500),
        ("2", 2000),
        ("1.5", 1500),
        (2, 2000),
        (0.25, 250),
        ("0.0001", 1),
        ("1e3", 10**6),
        ("+1", 1000),
    ],
)
def test_cpu_millis(value: object, millis: int) -> None:
    assert quantity.cpu_millis(value) == millis


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ("1Gi", GIB),
        ("512Mi", 512 * 2**20),
        ("1G", 10**9),
        ("1e9", 10**9),
        ("1E9", 10**9),
        ("1E", 10**18),
        ("100k", 100_000),
        (1024, 1024),
        ("1.5Ki", 1536),
        ("0.5", 1),  # rounded up
    ],
)
def test_memory_bytes(value: object, size: int) -> None:
    assert quantity.memory_bytes(value) == size


@pytest.mark.parametrize(
    ("value", "parse"),
    [
        ("", quantity.cpu_millis),
        ("1 Gi", quantity.memory_bytes),
        ("1gi", quantity.memory_bytes),
        ("1K", quantity.memory_bytes),  # decimal kilo is lower-case k
        ("abc", quantity.count),
        (True, quantity.count),
        (None, quantity.cpu_millis),
        (float("nan"), quantity.cpu_millis),
        ("-1", quantity.memory_bytes),
        ("1.5", quantity.count),
        ("1e999", quantity.memory_bytes),
        ("1e30", quantity.memory_bytes),
    ],
)
def test_quantity_garbage(value: object, parse: Any) -> None:
    with pytest.raises(ValueError, match="invalid quantity"):
        parse(value)


def test_count_and_format() -> None:
    assert quantity.count("1") == 1 and quantity.count(2) == 2 and quantity.count("1k") == 1000
    assert [quantity.format_cpu(m) for m in (64_000, 1_500, 250, 0)] == ["64", "1.5", "0.25", "0"]
    assert quantity.format_gib(3 * GIB // 2) == "1.5 GiB"


def test_node_template_rejects_ambiguous_labels() -> None:
    with pytest.raises(ValueError, match="both labels and label_choices"):
        node(labels={ZONE: "us-a"})
    with pytest.raises(ValueError, match="no choices"):
        node(label_choices={ZONE: ()})
    with pytest.raises(ValueError, match="effect"):
        Taint("k", "v", "NoScheduel")


# --------------------------------------------------------------------------- property

LABEL_KEYS = ("a", "b", "example.com/c", ZONE)
RESOURCES = ("nvidia.com/gpu", "example.com/fpga")
EFFECTS = ("NoSchedule", "NoExecute", "PreferNoSchedule")
values = st.sampled_from(("", "x", "y", "true"))


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[NodeTemplate, dict[str, Any], set[str]]:
    labels = draw(st.dictionaries(st.sampled_from(LABEL_KEYS[:3]), values.filter(bool)))
    choices = draw(
        st.lists(st.sampled_from(("z1", "z2", "z3")), min_size=1, max_size=3, unique=True)
    )
    # Node taints are unique per (key, effect), as the API server enforces.
    taint_keys = st.sampled_from(("dedicated", "spot", *RESOURCES))
    taint_map = draw(st.dictionaries(st.tuples(taint_keys, st.sampled_from(EFFECTS)), values))
    taints = tuple(Taint(key, value, effect) for (key, effect), value in taint_map.items())
    allocatable = draw(st.dictionaries(st.sampled_from(RESOURCES), st.integers(0, 8)))
    template = NodeTemplate(
        "p",
        labels=labels,
        label_choices={ZONE: tuple(choices)},
        taints=taints,
        allocatable=allocatable,
        cpu_millis=draw(st.integers(0, 96_000)),
        memory_bytes=draw(st.integers(0, 2**40)),
    )
    selector = {
        key: labels[key]
        for key in draw(st.sets(st.sampled_from(sorted(labels) or ["a"])))
        if key in labels
    }
    if draw(st.booleans()):
        selector[ZONE] = draw(st.sampled_from(choices))
    limits = {name: draw(st.integers(0, count)) for name, count in allocatable.items()}
    requests = {
        "cpu": f"{draw(st.integers(0, template.cpu_millis))}m",
        "memory": str(draw(st.integers(0, template.memory_bytes))),
    }
    tolerations = [
        {"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect} for t in taints
    ]
    draw(st.randoms()).shuffle(tolerations)
    spec = {
        "nodeSelector": selector,
        "tolerations": tolerations,
        "containers": [{"name": "c", "resources": {"requests": requests, "limits": limits}}],
    }
    return template, spec, set(limits)


@settings(max_examples=150, deadline=None)
@given(scenarios(), st.booleans(), st.data())
def test_property_tolerated_and_within_allocatable_fits(
    scenario: tuple[NodeTemplate, dict[str, Any], set[str]], gke: bool, data: st.DataObject
) -> None:
    template, spec, requested = scenario
    assert evaluate(spec, template, extended_resource_toleration=gke) == []
    blocking = [t for t in spec["tolerations"] if t["effect"] != "PreferNoSchedule"]
    if not blocking:
        return
    dropped = data.draw(st.sampled_from(blocking))
    without = {**spec, "tolerations": [t for t in spec["tolerations"] if t is not dropped]}
    admitted = gke and dropped["key"] in requested and dropped["effect"] == "NoSchedule"
    got = evaluate(without, template, extended_resource_toleration=gke)
    if admitted:  # GKE's admission plugin supplies exactly this toleration
        assert got == []
    else:
        assert len(got) == 1 and got[0].startswith(f"taint {dropped['key']}")
