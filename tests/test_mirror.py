"""The GPU software pinned by digest and, with `gpuSoftware.mirror`, from a private mirror
(issue 36, item 6 and SEC-14): every chart and every image any stage installs comes from the
mirror, with the pull Secret on every pod; bad mirror keys are refused with their path; `plan`
lists what to copy; adding a mirror to a running stack updates releases in place."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.kubernetes import chart_values
from components.kubernetes.sources import OUTPUT
from components.model import mirror
from components.model.catalog import charts, images
from components.model.config import ConfigError, parse_config
from components.model.schema import MirrorConfig
from components.tooling.cli import main as cli_main
from components.tooling.diff import diff_plans
from components.tooling.engine import Plan
from components.tooling.stacks import load_stack
from tests.conftest import chart_defaults, plan_of

RELEASE = "kubernetes:helm.sh/v3:Release"
WORKLOADS = ("kubernetes:batch/v1:Job", "kubernetes:apps/v1:Deployment")
CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"
FIXTURE = str(Path(__file__).parent / "fixtures" / "mirror" / "Pulumi.existing-mirror.yaml")
IMAGES = "registry.example.com/gpu"
CHARTS = "oci://registry.example.com/gpu/charts"
SECRET = "gpu-mirror"
MIRROR = {"charts": CHARTS, "images": IMAGES, "pullSecret": SECRET}
PUBLIC = ("nvcr.io", "registry.k8s.io", "public.ecr.aws", "gcr.io", "docker.io", "ghcr.io")
SHA256 = re.compile(r"^sha256:[0-9a-f]{64}$")
# Every chart gpufleet installs, with the stacks (and software mode) that install it.
CASES = [
    ("aws-dev", None),  # cluster-autoscaler, termination handler, device plugin
    ("aws-karpenter", None),  # karpenter, karpenter-crd
    ("azure-a100-mig", None),  # gpu-operator
    ("gcp-flex-start", None),  # kueue
    ("gcp-dev", "gpu-operator"),  # GKE's driver installer
    (FIXTURE, None),  # cloud: existing, dcgm-exporter, samples
]


def mirrored(stack: str, mode: str | None = None, given: Mapping[str, str] = MIRROR) -> Any:
    software = dict(load_stack(stack).gpufleet.get("gpuSoftware") or {})
    software["mirror"] = dict(given)
    if mode:
        software["mode"] = mode
    return {"gpufleet:gpuSoftware": software, "gpufleet:samples": {"enabled": True}}


def given(**keys: str) -> MirrorConfig:
    """A `gpuSoftware.mirror` block as written in a stack file."""
    return MirrorConfig.model_validate(keys)


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, str):
        yield value


def pod_specs(plan: Plan) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for resource in plan.resources:
        if resource.type in WORKLOADS:
            yield resource.name, resource.inputs["spec"]["template"]["spec"]
        if resource.type == CONFIG_GROUP:
            for document in yaml.safe_load_all(resource.inputs["yaml"]):
                if document and document.get("kind") == "DaemonSet":
                    yield resource.name, document["spec"]["template"]["spec"]


@pytest.mark.parametrize(("stack", "mode"), CASES)
def test_every_chart_and_image_comes_from_the_mirror(stack: str, mode: str | None) -> None:
    plan = plan_of(stack, mirrored(stack, mode))
    releases = plan.of_type(RELEASE)
    assert releases
    for release in releases:
        inputs = release.inputs
        chart = mirror.chart_name(inputs["chart"])
        assert inputs["chart"] == f"{CHARTS}/{chart}" and not inputs.get("repositoryOpts")
        values = inputs.get("values") or {}
        for image in mirror.release_images(chart, values):
            if image.runs:
                assert image.pulled_from.startswith(f"{IMAGES}/"), (chart, image)
        # What the chart pulls is under the mirror; the public registries appear nowhere.
        assert not [s for s in strings(values) if s.startswith(PUBLIC)], chart
        table = images.CHART_IMAGES[chart]
        for key, shape in table.secret_keys.items():
            secrets = mirror._get(values, key)
            expected = [SECRET] if shape == "names" else [{"name": SECRET}]
            assert secrets in (expected, None), (chart, key)
        if table.secret_keys:
            assert any(mirror._get(values, key) for key in table.secret_keys), chart
        # The keys gpufleet sets are the chart's own.
        if chart in charts.CHARTS:
            passthrough = chart_values.PASSTHROUGH.get(chart, ())
            defaults = chart_defaults(chart)
            assert chart_values.unknown_keys(values, defaults, passthrough=passthrough) == []
    for name, spec in pod_specs(plan):
        for image in mirror.pod_images(spec):
            assert image.startswith(f"{IMAGES}/"), (name, image)
        assert spec["imagePullSecrets"] == [{"name": SECRET}], name


def test_a_https_mirror_is_one_helm_repository_for_every_chart() -> None:
    given = {"charts": "https://charts.example.com/gpu", "images": IMAGES}
    plan = plan_of("aws-dev", mirrored("aws-dev", given=given))
    for release in plan.of_type(RELEASE):
        inputs = release.inputs
        assert inputs["repositoryOpts"] == {"repo": "https://charts.example.com/gpu"}
        assert "/" not in inputs["chart"]
        # No pull secret named: none is set.
        assert "gpu-mirror" not in json.dumps(inputs["values"])


def test_images_alone_leave_the_charts_where_they_were() -> None:
    public = {r.name: r.inputs for r in plan_of("existing-dev").of_type(RELEASE)}
    images_only = plan_of(FIXTURE, mirrored(FIXTURE, given={"images": IMAGES}))
    assert images_only.of_type(RELEASE)
    for release in images_only.of_type(RELEASE):
        assert release.inputs["chart"] == public[release.name]["chart"]
        assert release.inputs["repositoryOpts"] == public[release.name]["repositoryOpts"]
        assert release.inputs["values"]["image"]["repository"].startswith(f"{IMAGES}/")


def test_without_a_mirror_images_are_pinned_by_the_tables_digests() -> None:
    plan = plan_of("existing-dev")
    assert OUTPUT not in plan.outputs
    digests = []
    for release in plan.of_type(RELEASE):
        chart = mirror.chart_name(release.inputs["chart"])
        for image in mirror.release_images(chart, release.inputs["values"]):
            assert image.pulled_from == f"{image.pin.repository}:{image.pin.tag}"
            assert image.digest == image.pin.digest
            digests.append(image.digest)
    assert [d for d in digests if d]  # the device plugin's and the exporter's


def test_every_digest_in_the_table_is_a_digest_with_a_source() -> None:
    pinned = [pin for pin in images.IMAGES if pin.digest]
    assert len(pinned) >= 7
    for pin in pinned:
        assert SHA256.match(pin.digest or ""), pin
        assert "bundle/manifests" in pin.source and re.search(r"\([0-9a-f]{8}\)", pin.source)
    for pin in images.IMAGES:
        assert pin.source, pin


def test_the_table_states_the_pinned_charts_own_images() -> None:
    """Each slot's default is the chart's (tests/data/chart_facts.json) and each image a slot
    can pull is in the table."""
    device_plugin = chart_defaults("nvidia-device-plugin")["image"]
    (slot,) = images.CHART_IMAGES["nvidia-device-plugin"].slots
    assert slot.default_repository == device_plugin["repository"]
    assert slot.default_tag == f"v{charts.NVIDIA_DEVICE_PLUGIN.version}"  # the chart's appVersion
    exporter = chart_defaults("dcgm-exporter")["image"]
    (slot,) = images.CHART_IMAGES["dcgm-exporter"].slots
    assert (slot.default_repository, slot.default_tag) == (exporter["repository"], exporter["tag"])
    operator = chart_defaults("gpu-operator")
    for slot in images.CHART_IMAGES["gpu-operator"].slots:
        section = operator
        for key in slot.repository[:-1]:
            section = section.get(key, {})
        if slot.image is not None and "image" in section:
            assert section["image"] == slot.default_image, slot
        if slot.tag is not None and "version" in section:
            assert section["version"] == slot.default_tag, slot
        if "enabled" in section and slot.runs_if is not None:
            assert section["enabled"] is slot.runs_by_default, slot
    for table in images.CHART_IMAGES.values():
        for slot in table.slots:
            if slot.default_tag:
                images.pin_of(slot.full_repository, slot.default_tag)
    for tag in charts.CLUSTER_AUTOSCALER_IMAGE_TAGS.values():
        images.pin_of("registry.k8s.io/autoscaling/cluster-autoscaler", tag)


def test_every_chart_the_stacks_install_is_in_the_table() -> None:
    from components.aws.model import fabric, karpenter, termination
    from components.azure.model import rdma
    from components.model import kueue

    pins = [
        *charts.CHARTS.values(),
        karpenter.PIN,
        karpenter.CRD_PIN,
        termination.PIN,
        kueue.PIN,
        rdma.NETWORK_OPERATOR,
        fabric.DEVICE_PLUGIN,
    ]
    assert {pin.chart for pin in pins} == set(images.CHART_IMAGES)


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("charts", "http://charts.example.com", "plain http is refused"),
        ("charts", "oci://registry.example.com/charts/", "trailing slash"),
        ("charts", "oci://user:pass@registry.example.com", "without credentials"),
        ("charts", "registry.example.com/charts", "oci://HOST/PATH"),
        ("images", "https://registry.example.com/gpu", "without scheme"),
        ("images", "registry.example.com/GPU", "lower case"),
        ("images", "registry.example.com/gpu/", "trailing slash"),
        ("images", "registry.example.com/gpu:v1", "tag"),
        ("pullSecret", "Gpu_Mirror", "Secret name"),
        ("pullSecret", "a" * 254, "at most 253"),
    ],
)
def test_a_bad_mirror_key_is_refused_with_its_path(key: str, value: str, said: str) -> None:
    raw = dict(load_stack("existing-dev").gpufleet)
    given = {"charts": CHARTS, "images": IMAGES, key: value}
    raw["gpuSoftware"] = {**raw["gpuSoftware"], "mirror": given}
    with pytest.raises(ConfigError) as refused:
        parse_config(raw)
    (problem,) = refused.value.problems
    assert problem.path == f"gpuSoftware.mirror.{key}" and said in problem.message
    assert problem.value == value


def test_mirror_limits_at_their_edges() -> None:
    assert mirror.problems(given(images=IMAGES, pullSecret="a" * 253)) == []
    assert mirror.problems(given(charts="https://h.example.com:8443/a/b")) == []
    assert mirror.problems(given(images="localhost:5000")) == []
    (empty,) = mirror.problems(given())
    assert empty.path == "gpuSoftware.mirror" and "neither" in empty.message
    (alone,) = mirror.problems(given(charts=CHARTS, pullSecret=SECRET))
    assert alone.path == "gpuSoftware.mirror.pullSecret" and "set images too" in alone.message
    raw = dict(load_stack("existing-dev").gpufleet)
    raw["gpuSoftware"] = {**raw["gpuSoftware"], "mirror": {"registry": "x"}}
    with pytest.raises(ConfigError) as refused:
        parse_config(raw)
    assert [p.path for p in refused.value.problems] == ["gpuSoftware.mirror.registry"]


def test_mirrored_repositories_keep_their_path_below_the_prefix() -> None:
    assert (
        mirror.mirrored_repository("nvcr.io/nvidia/k8s-device-plugin", IMAGES)
        == f"{IMAGES}/nvidia/k8s-device-plugin"
    )
    assert mirror.mirrored_repository("localhost:5000/a/b", IMAGES) == f"{IMAGES}/a/b"
    assert mirror.image_reference("gke.gcr.io/pause:3.8@sha256:" + "0" * 64, None).endswith(
        "@sha256:" + "0" * 64
    )
    assert mirror.chart_source("kueue", "", "oci://r.example.com/c") == (
        "oci://r.example.com/c/kueue",
        None,
    )
    assert mirror.chart_source("kueue", "", "https://r.example.com/c") == (
        "kueue",
        "https://r.example.com/c",
    )


def test_plan_lists_what_to_copy(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["plan", FIXTURE]) == 0
    printed = capsys.readouterr().out
    listed = printed[printed.index("to copy to the mirror") :]
    plan = plan_of(FIXTURE)
    rows = plan.outputs[OUTPUT]
    charts_listed = {(r["name"], r["version"]) for r in rows if r["kind"] == "chart"}
    assert charts_listed == {("nvidia-device-plugin", "0.20.0"), ("dcgm-exporter", "4.8.2")}
    for row in rows:
        assert row["from"] in listed and row["to"] in listed
        if row["kind"] == "image":
            assert row["from"].startswith(PUBLIC) and row["to"].startswith(f"{IMAGES}/")
            assert (row["digest"] or "none: by tag") in listed
    plugin = next(r for r in rows if r["from"].startswith("nvcr.io/nvidia/k8s-device-plugin"))
    assert plugin["digest"] == images.pin_of("nvcr.io/nvidia/k8s-device-plugin", "v0.20.0").digest
    assert plugin["namespaces"] == ["nvidia-device-plugin"]
    assert (
        f"pull Secret {SECRET} (kubernetes.io/dockerconfigjson) must exist in: gpu-monitoring, "
        "gpufleet-samples, nvidia-device-plugin" in listed
    )


@pytest.mark.parametrize("stack", ["aws-dev", "azure-a100-mig", "gcp-flex-start"])
def test_adding_a_mirror_to_a_running_stack_updates_releases_in_place(stack: str) -> None:
    before = plan_of(stack, {"gpufleet:samples": {"enabled": True}}).to_json()
    after = plan_of(stack, mirrored(stack)).to_json()
    diff = diff_plans(before, after)
    changed = [c for c in diff.changed if c.type == RELEASE]
    assert changed and not [c.name for c in changed if c.replaces]
    assert not [r for r in diff.removed if r.type == RELEASE]
    # Workloads with fixed names are replaced (delete before replace): only the samples.
    replaced = {c.type for c in diff.replaced}
    assert replaced <= set(WORKLOADS)


@pytest.mark.parametrize("stack", ["aws-dev", "aws-karpenter", "existing-dev"])
def test_upgrading_gpufleet_pins_images_in_place(stack: str) -> None:
    """main at a7c846e (tests/data/before_issue36) against today: the releases' image tags gain
    their digests, an update in place; no release is replaced."""
    old = json.loads(
        (Path(__file__).parent / "data" / "before_issue36" / f"{stack}.json").read_text()
    )
    plan = plan_of(stack).to_json()
    new = {**plan, "resources": [r for r in plan["resources"] if r["type"] == RELEASE]}
    old = {**old, "resources": [r for r in old["resources"] if r["type"] == RELEASE]}
    diff = diff_plans(old, new)
    assert not diff.replaced and not diff.removed and not diff.added


def test_pod_specs_keep_the_nodes_own_images() -> None:
    """A pod spec from the table keeps `imagePullPolicy: Never` images (a node's own) as they
    are, and under no mirror changes nothing but the digest."""
    spec = {
        "containers": [
            {"name": "a", "image": "cos-nvidia-installer:fixed", "imagePullPolicy": "Never"},
            {"name": "b", "image": charts.CUDA_BASE_IMAGE},
        ]
    }
    out = mirror.pod_spec(copy.deepcopy(spec), given(images=IMAGES, pullSecret=SECRET))
    assert out["containers"][0]["image"] == "cos-nvidia-installer:fixed"
    assert out["containers"][1]["image"] == f"{IMAGES}/nvidia/cuda:12.5.0-base-ubuntu22.04"
    assert mirror.pod_spec(spec, None) == spec


def test_files_pulumi_downloads_are_listed_as_not_mirrored() -> None:
    """EKS's ProvisioningRequest CRD (queued pools) is a file pulumi itself reads at preview and
    up; a mirror cannot serve it, and the list says so."""
    from components.kubernetes.sources import CONFIG_FILE, SoftwareSources, _merged

    found = SoftwareSources(given(images=IMAGES))
    url = "https://raw.githubusercontent.com/kubernetes/autoscaler/abc/crd.yaml"
    assert found._rewritten(CONFIG_FILE, {"file": url}) is None  # left as it is
    (row,) = _merged(found._rows)
    assert row["kind"] == "file" and row["from"] == url
    from components.tooling.mirror_list import render_mirror_list

    assert url in render_mirror_list([row], given(images=IMAGES))


def test_a_chart_the_table_does_not_know_stops_the_program() -> None:
    import pulumi

    from components.kubernetes.sources import RELEASE as RELEASE_TYPE
    from components.kubernetes.sources import SoftwareSources

    with pytest.raises(pulumi.RunError, match=r"not in components/model/catalog/images\.py"):
        SoftwareSources(None)._rewritten(RELEASE_TYPE, {"chart": "oci://example.com/x/unknown"})
