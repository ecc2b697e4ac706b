"""Every container image gpufleet's charts and workloads run, pinned by digest where a source
names one, and where each chart keeps its image keys (issue 36: SEC-14, private mirrors).

`IMAGES` is the table: repository, tag, digest and where the digest was read. A digest comes
only from a publisher's own record of that exact tag; where none was found the digest is None
and the image stays pinned by its tag (plan's mirror list says so). Sources:

- NVIDIA/gpu-operator's OLM bundle lists its operands as tag@digest
  (bundle/manifests/gpu-operator-certified.clusterserviceversion.yaml, spec.relatedImages): at
  tag v26.7.0 (commit 10ee5b3638b89e11e949412aafa5ba99279c3721) for the operator's operands and
  the device plugin v0.20.0; at tag v26.3.3 (commit b0a49c0e7b2e061dcd83f2bb2fe4fe960c5d0338) for
  dcgm-exporter 4.5.3-4.8.2-distroless, the standalone chart 4.8.2's default.
- No digest found: the GPU Operator and its validator v26.7.0 (the bundle lists a development
  tag), DCGM 4.6.0-1-ubuntu24.04 (the bundle lists the ubi10 build), NFD v0.19.0, Kueue v0.19.2
  and cluster-autoscaler v1.32.7-v1.36.1 (the registry.k8s.io promoter manifests in kubernetes/
  k8s.io, registry.k8s.io/images/k8s-staging-{kueue,autoscaling,nfd}/images.yaml, were read only
  up to Kueue v0.13.3 and cluster-autoscaler v1.33.1), node-termination-handler v1.25.6, the CUDA
  sample images, and Karpenter 1.14.1, whose published chart sets its own digest at release (the
  values.yaml in git at the release commit 1d927085 still carries v1.14.0's digest), which gpufleet
  keeps.
- Never pinnable: the GPU Operator's driver image, whose tag the operator completes with each
  node's OS (`<version>-<os>`, gpu-operator internal/state driver image path), so one digest
  cannot serve every node.

`CHART_IMAGES`: per chart, each image slot's values keys (from the pinned charts' values.yaml
and templates: ../shared/reference/helm, ../shared/reference/karpenter, kubernetes-sigs/kueue
charts/kueue at v0.19.2, aws-node-termination-handler config/helm at 0.27.6, the GPU Operator's
node-feature-discovery 0.19.0 subchart) and the pull-secret key with its shape: a list of names
(`- name: {{ . }}` in the template) or of `{name: ...}` objects (`toYaml`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from components.model import kueue
from components.model.catalog import charts

_BUNDLE_26_7 = (
    "NVIDIA/gpu-operator v26.7.0 (10ee5b36), bundle/manifests/"
    "gpu-operator-certified.clusterserviceversion.yaml relatedImages"
)
_BUNDLE_26_3_3 = (
    "NVIDIA/gpu-operator v26.3.3 (b0a49c0e), bundle/manifests/"
    "gpu-operator-certified.clusterserviceversion.yaml relatedImages"
)
_NO_SOURCE = "no digest found in a source gpufleet can cite; pinned by tag"


@dataclass(frozen=True)
class ImagePin:
    repository: str
    tag: str
    digest: str | None
    source: str

    @property
    def reference(self) -> str:
        return f"{self.repository}:{self.tag}" + (f"@{self.digest}" if self.digest else "")

    @property
    def pinned_tag(self) -> str:
        """What a chart's tag (or version) key gets: the tag, and the digest when known (a
        `name:tag@digest` reference pulls by the digest)."""
        return f"{self.tag}@{self.digest}" if self.digest else self.tag


def _nvidia(path: str, tag: str, digest: str | None, source: str = _BUNDLE_26_7) -> ImagePin:
    return ImagePin(f"nvcr.io/nvidia/{path}", tag, digest, source if digest else _NO_SOURCE)


IMAGES: Final[tuple[ImagePin, ...]] = (
    # The Network Operator 26.4.0 (AKS InfiniBand): no digest found; pinned by tag.
    _nvidia("cloud-native/network-operator", "v26.4.0", None),
    _nvidia(
        "k8s-device-plugin",
        f"v{charts.NVIDIA_DEVICE_PLUGIN.version}",
        "sha256:a61ba9fd8efb82f3a79f877f7580e02c1e8e7593f62473644bc9c79e315c3312",
    ),
    _nvidia(
        "k8s/dcgm-exporter",
        "4.5.3-4.8.2-distroless",
        "sha256:60d3b00ac80b4ae77f94dae2f943685605585ad9e92fdccda3154d009ae317cc",
        _BUNDLE_26_3_3,
    ),
    _nvidia(
        "k8s/dcgm-exporter",
        "4.6.0-4.8.3-distroless",
        "sha256:613ab03c11d442fd960ff515f547e9921537454a712d08160bc8f677f89f1c35",
    ),
    _nvidia("gpu-operator", charts.GPU_OPERATOR.version, None),
    ImagePin(
        "nvcr.io/nvidia/driver",
        "595.91.07",
        None,
        "not pinnable: the GPU Operator appends each node's OS to the driver tag",
    ),
    _nvidia(
        "cloud-native/k8s-driver-manager",
        "v0.12.0",
        "sha256:7d98d08a751cc528d1c8c8bdc2f9d9fcd59714b158a3985a5a0262f1620098e4",
    ),
    _nvidia(
        "k8s/container-toolkit",
        "v1.20.0",
        "sha256:f8c647d581f7c8b178efdb7e6c94f5fb6eb12ebc05e2157fa314d327560fcb7a",
    ),
    _nvidia("cloud-native/dcgm", "4.6.0-1-ubuntu24.04", None),
    _nvidia(
        "cloud-native/k8s-mig-manager",
        "v0.15.0",
        "sha256:cab2cf9deafc9602da69d0832a82958a7687f22f4a2f19674099dc9a5c4ea8e2",
    ),
    _nvidia(
        "cloud-native/k8s-cc-manager",
        "v0.4.3",
        "sha256:61fe0f5c45f240094667d2e63e770710450fd2fd768745ab899531284d197a65",
    ),
    ImagePin("registry.k8s.io/nfd/node-feature-discovery", "v0.19.0", None, _NO_SOURCE),
    ImagePin(kueue.IMAGE_REPOSITORY, kueue.IMAGE_TAG, None, _NO_SOURCE),
    *(
        ImagePin("registry.k8s.io/autoscaling/cluster-autoscaler", tag, None, _NO_SOURCE)
        for tag in charts.CLUSTER_AUTOSCALER_IMAGE_TAGS.values()
    ),
    ImagePin(
        "public.ecr.aws/karpenter/controller",
        "1.14.1",
        None,
        "the published karpenter chart 1.14.1 sets its own digest (controller.image.digest), "
        "which gpufleet keeps; not recorded here",
    ),
    ImagePin("public.ecr.aws/aws-ec2/aws-node-termination-handler", "v1.25.6", None, _NO_SOURCE),
    # aws/eks-charts stable/aws-efa-k8s-device-plugin v0.5.30 values.yaml (@5239609242f3).
    ImagePin(
        "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin",
        "v0.5.20",
        None,
        _NO_SOURCE,
    ),
    ImagePin(charts.CUDA_VECTORADD_IMAGE.split(":")[0], "vectoradd-cuda12.5.0", None, _NO_SOURCE),
    ImagePin(charts.CUDA_BASE_IMAGE.split(":")[0], "12.5.0-base-ubuntu22.04", None, _NO_SOURCE),
)


def pin_of(repository: str, tag: str) -> ImagePin:
    """The table's pin for an image (KeyError: an image gpufleet does not know)."""
    for pin in IMAGES:
        if pin.repository == repository and pin.tag == tag:
            return pin
    raise KeyError(f"{repository}:{tag}")


def pin_of_reference(reference: str) -> ImagePin:
    """The pin of a `repository:tag` reference as a workload names it."""
    repository, _, tag = reference.rpartition(":")
    return pin_of(repository, tag)


Path = tuple[str, ...]


@dataclass(frozen=True)
class ImageSlot:
    """One image a chart runs, by its values keys.

    `repository` holds the whole repository, or (GPU Operator style, `image` set) the registry
    and organisation `image` is appended to. `tag` is the tag (or GPU Operator `version`) key
    (None: the chart takes its appVersion, and gpufleet leaves it). `default_*` are the chart's
    defaults, stated because a chart's defaults are not known at runtime; `runs_if` is the
    values key of the switch the slot runs under, with its chart default."""

    default_repository: str
    default_tag: str
    repository: Path
    tag: Path | None
    image: Path | None = None
    default_image: str = ""
    runs_if: Path | None = None
    runs_by_default: bool = True
    # False: gpufleet never writes a digest into this slot's tag (the module docstring says why).
    pinnable: bool = True

    @property
    def full_repository(self) -> str:
        if self.image is None:
            return self.default_repository
        return f"{self.default_repository}/{self.default_image}"


SecretShape = Literal["names", "objects"]


@dataclass(frozen=True)
class ChartImages:
    slots: tuple[ImageSlot, ...] = ()
    # Every pull-secret key of the chart, with its shape.
    secret_keys: Mapping[Path, SecretShape] = field(default_factory=dict)


def _operand(
    key: str, repository: str, image: str, version: str, *, runs: bool | None = True
) -> ImageSlot:
    """A GPU Operator operand: `<key>.repository` + `<key>.image`, `<key>.version`; `runs`
    None: always (no switch)."""
    return ImageSlot(
        default_repository=repository,
        default_tag=version,
        repository=(key, "repository"),
        tag=(key, "version"),
        image=(key, "image"),
        default_image=image,
        runs_if=None if runs is None else (key, "enabled"),
        runs_by_default=runs is not False,
    )


_NV = "nvcr.io/nvidia"
_NV_CLOUD = "nvcr.io/nvidia/cloud-native"
_OPERATOR = charts.GPU_OPERATOR.version
_OPERANDS = (
    "validator",
    "operator",
    "driver",
    "toolkit",
    "devicePlugin",
    "dcgm",
    "dcgmExporter",
    "gfd",
    "migManager",
    "ccManager",
)
_OPERATOR_ITSELF = ImageSlot(
    _NV,
    _OPERATOR,
    ("operator", "repository"),
    None,
    image=("operator", "image"),
    default_image="gpu-operator",
)

CHART_IMAGES: Final[Mapping[str, ChartImages]] = {
    # NVIDIA's Network Operator 26.4.0 (AKS InfiniBand pools, components/azure/model/rdma.py):
    # the operator itself (`operator.repository` + `operator.image`, tag = the chart's
    # appVersion; Mellanox/network-operator v26.4.0 deployment/network-operator/values.yaml).
    # Its NFD subchart and the operands its NicClusterPolicy names are not mirrored (not listed).
    "network-operator": ChartImages(
        slots=(
            ImageSlot(
                _NV_CLOUD,
                "v26.4.0",
                ("operator", "repository"),
                None,
                image=("operator", "image"),
                default_image="network-operator",
            ),
        ),
    ),
    "nvidia-device-plugin": ChartImages(
        slots=(
            ImageSlot(
                f"{_NV}/k8s-device-plugin",
                f"v{charts.NVIDIA_DEVICE_PLUGIN.version}",
                ("image", "repository"),
                ("image", "tag"),
            ),
        ),
        secret_keys={("imagePullSecrets",): "objects"},
    ),
    "dcgm-exporter": ChartImages(
        slots=(
            ImageSlot(
                f"{_NV}/k8s/dcgm-exporter",
                "4.5.3-4.8.2-distroless",
                ("image", "repository"),
                ("image", "tag"),
            ),
        ),
        secret_keys={("imagePullSecrets",): "objects"},
    ),
    "gpu-operator": ChartImages(
        slots=(
            _OPERATOR_ITSELF,
            ImageSlot(
                _NV,
                _OPERATOR,
                ("validator", "repository"),
                None,
                image=("validator", "image"),
                default_image="gpu-operator",
            ),
            ImageSlot(
                _NV,
                "595.91.07",
                ("driver", "repository"),
                ("driver", "version"),
                image=("driver", "image"),
                default_image="driver",
                runs_if=("driver", "enabled"),
                pinnable=False,
            ),
            ImageSlot(
                _NV_CLOUD,
                "v0.12.0",
                ("driver", "manager", "repository"),
                ("driver", "manager", "version"),
                image=("driver", "manager", "image"),
                default_image="k8s-driver-manager",
                runs_if=("driver", "enabled"),
            ),
            _operand("toolkit", f"{_NV}/k8s", "container-toolkit", "v1.20.0"),
            _operand("devicePlugin", _NV, "k8s-device-plugin", "v0.20.0"),
            _operand("gfd", _NV, "k8s-device-plugin", "v0.20.0"),
            _operand("dcgmExporter", f"{_NV}/k8s", "dcgm-exporter", "4.6.0-4.8.3-distroless"),
            _operand("dcgm", _NV_CLOUD, "dcgm", "4.6.0-1-ubuntu24.04", runs=False),
            _operand("migManager", _NV_CLOUD, "k8s-mig-manager", "v0.15.0"),
            _operand("ccManager", _NV_CLOUD, "k8s-cc-manager", "v0.4.3"),
            ImageSlot(
                "registry.k8s.io/nfd/node-feature-discovery",
                "v0.19.0",
                ("node-feature-discovery", "image", "repository"),
                ("node-feature-discovery", "image", "tag"),
                runs_if=("nfd", "enabled"),
            ),
        ),
        secret_keys={
            **{(key, "imagePullSecrets"): "names" for key in _OPERANDS},
            ("node-feature-discovery", "imagePullSecrets"): "objects",
        },
    ),
    "cluster-autoscaler": ChartImages(
        slots=(
            ImageSlot(
                "registry.k8s.io/autoscaling/cluster-autoscaler",
                # Set per Kubernetes minor by the autoscaler's values.
                "",
                ("image", "repository"),
                ("image", "tag"),
            ),
        ),
        secret_keys={("image", "pullSecrets"): "names"},
    ),
    "kueue": ChartImages(
        slots=(
            ImageSlot(
                kueue.IMAGE_REPOSITORY,
                kueue.IMAGE_TAG,
                ("controllerManager", "manager", "image", "repository"),
                ("controllerManager", "manager", "image", "tag"),
            ),
        ),
        secret_keys={("controllerManager", "imagePullSecrets"): "objects"},
    ),
    "karpenter": ChartImages(
        slots=(
            ImageSlot(
                "public.ecr.aws/karpenter/controller",
                "1.14.1",
                ("controller", "image", "repository"),
                ("controller", "image", "tag"),
                # The chart's own controller.image.digest stays (see the module docstring).
                pinnable=False,
            ),
        ),
        secret_keys={("imagePullSecrets",): "objects"},
    ),
    "karpenter-crd": ChartImages(),
    "aws-efa-k8s-device-plugin": ChartImages(
        slots=(
            ImageSlot(
                "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin",
                "v0.5.20",
                ("image", "repository"),
                ("image", "tag"),
            ),
        ),
        secret_keys={("imagePullSecrets",): "objects"},
    ),
    "aws-node-termination-handler": ChartImages(
        slots=(
            ImageSlot(
                "public.ecr.aws/aws-ec2/aws-node-termination-handler",
                "v1.25.6",
                ("image", "repository"),
                ("image", "tag"),
            ),
        ),
        secret_keys={("image", "pullSecrets"): "objects"},
    ),
}
