"""Where the GPU software comes from: digest pins always, and `gpuSoftware.mirror` when set.

`gpuSoftware.mirror` names a chart repository (`charts`: `oci://host/path` or
`https://host/path`) and a registry prefix (`images`: `host[:port]/path`) that every chart and
image gpufleet installs is pulled from instead of the public ones, and optionally a pull
Secret's name (`pullSecret`) every pod of gpufleet's gets. An image keeps its repository path
below the prefix (`nvcr.io/nvidia/k8s-device-plugin` becomes `<images>/nvidia/k8s-device-plugin`,
as `crane copy`/`skopeo sync` lay a copy out), and its tag and digest; a chart keeps its name and
version (`<charts>/<chart>` for OCI; one Helm repository holding every chart for HTTPS).

Pure functions over Helm values and pod specs; `components.kubernetes.sources` applies them to
every release and workload the program creates, and `plan` lists what to copy
(`components.tooling.mirror_list`). Image keys and pins: `components.model.catalog.images`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from components.model.catalog.images import (
    CHART_IMAGES,
    ImagePin,
    ImageSlot,
    Path,
    SecretShape,
    pin_of,
)
from components.model.problems import Problem
from components.model.schema import MirrorConfig

_CHARTS = re.compile(r"^(oci|https)://[a-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~-]+)*$")
# distribution/reference: a registry host, then lowercase path components.
_HOST = r"(localhost|[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+)(:[0-9]+)?"
_COMPONENT = r"[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*"
_IMAGES = re.compile(rf"^{_HOST}(/{_COMPONENT})*$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
MAX_SECRET_NAME = 253


def problems(mirror: MirrorConfig | None, path: str = "gpuSoftware.mirror") -> list[Problem]:
    """Every problem of a `gpuSoftware.mirror` block, each with its key path."""
    if mirror is None:
        return []
    found = []
    if mirror.charts is None and mirror.images is None:
        found.append(
            Problem(path, "names neither charts nor images; set one or both, or remove it", {})
        )
    if mirror.charts is not None and not _CHARTS.match(mirror.charts):
        plain = mirror.charts.startswith("http://")
        found.append(
            Problem(
                f"{path}.charts",
                "must be an OCI or HTTPS chart repository without credentials, query or "
                "trailing slash: oci://HOST/PATH (charts at oci://HOST/PATH/<chart>) or "
                "https://HOST/PATH (one Helm repository with every chart)"
                + ("; plain http is refused: charts would travel unauthenticated" if plain else ""),
                mirror.charts,
            )
        )
    if mirror.images is not None and not _IMAGES.match(mirror.images):
        found.append(
            Problem(
                f"{path}.images",
                "must be a registry prefix HOST[:PORT][/PATH] in lower case, without scheme, "
                "tag, digest or trailing slash (e.g. registry.example.com/gpu)",
                mirror.images,
            )
        )
    if mirror.pull_secret is not None:
        if not (
            _DNS_SUBDOMAIN.match(mirror.pull_secret) and len(mirror.pull_secret) <= MAX_SECRET_NAME
        ):
            found.append(
                Problem(
                    f"{path}.pullSecret",
                    "must be a Secret name: lower-case letters, digits, '-' and '.', at most "
                    f"{MAX_SECRET_NAME} characters",
                    mirror.pull_secret,
                )
            )
        if mirror.images is None:
            found.append(
                Problem(
                    f"{path}.pullSecret",
                    "applies to images pulled from the mirror; set images too",
                    mirror.pull_secret,
                )
            )
    return found


def mirrored_repository(repository: str, images: str) -> str:
    """`repository` below the `images` prefix: its registry host replaced by the prefix."""
    first, _, rest = repository.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return f"{images}/{rest}"
    return f"{images}/{repository}"


def chart_source(chart: str, repository: str, charts: str | None) -> tuple[str, str | None]:
    """The release's `chart` and its HTTP repository (None for OCI, whose chart reference names
    it), from the chart's own repository or the mirror's."""
    origin = charts or repository
    if origin.startswith("oci://"):
        return f"{origin}/{chart}", None
    return chart, origin


def chart_name(chart_reference: str) -> str:
    """The chart's name in a release's `chart` (an OCI reference or a bare name)."""
    return chart_reference.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class SlotImage:
    """One image a release runs: the table's pin and where the cluster pulls it from."""

    pin: ImagePin
    pulled_from: str
    runs: bool
    # The digest the pull names (the table's, else a chart's own, None: by tag).
    digest: str | None


def _get(values: Mapping[str, Any], path: Path) -> Any:
    node: Any = values
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def _set(values: dict[str, Any], path: Path, value: Any) -> None:
    node = values
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[path[-1]] = value


def _slot_pin(slot: ImageSlot, values: Mapping[str, Any]) -> ImagePin:
    given = _get(values, slot.tag) if slot.tag else None
    tag = str(given).split("@", 1)[0] if given else slot.default_tag
    return pin_of(slot.full_repository, tag)


def _runs(slot: ImageSlot, values: Mapping[str, Any]) -> bool:
    if slot.runs_if is None:
        return True
    switch = _get(values, slot.runs_if)
    return slot.runs_by_default if switch is None else bool(switch)


def release_values(
    chart: str, values: Mapping[str, Any] | None, mirror: MirrorConfig | None
) -> dict[str, Any]:
    """The release's values with every image slot's tag stated (with its digest where the table
    has one), and under a mirror its repositories and pull secrets (KeyError: a chart or an
    image the table does not know)."""
    images = CHART_IMAGES[chart]
    result: dict[str, Any] = copy.deepcopy(dict(values or {}))
    running: set[str] = set()
    for slot in images.slots:
        if not _runs(slot, result):
            continue  # an operand switched off pulls nothing: its keys stay as they are
        running.add(slot.repository[0])
        pin = _slot_pin(slot, result)
        if slot.tag is not None:
            _set(result, slot.tag, pin.pinned_tag if slot.pinnable else pin.tag)
        if mirror is not None and mirror.images is not None:
            repository = mirrored_repository(slot.default_repository, mirror.images)
            _set(result, slot.repository, repository)
    operands = {slot.repository[0] for slot in images.slots}
    if mirror is not None and mirror.pull_secret is not None:
        for key, shape in images.secret_keys.items():
            # A pod-wide key, or the key of an operand that runs.
            if len(key) == 1 or key[0] not in operands or key[0] in running:
                _set(result, key, _secrets(mirror.pull_secret, shape))
    return result


def release_images(chart: str, values: Mapping[str, Any]) -> list[SlotImage]:
    """What a release's final values pull: each slot's pin, repository and whether it runs."""
    found = []
    for slot in CHART_IMAGES[chart].slots:
        pin = _slot_pin(slot, values)
        repository = _get(values, slot.repository) or slot.default_repository
        if slot.image is not None:
            repository = f"{repository}/{_get(values, slot.image) or slot.default_image}"
        given = str(_get(values, slot.tag) or "") if slot.tag else ""
        digest = given.split("@", 1)[1] if "@" in given else None
        found.append(
            SlotImage(
                pin=pin,
                pulled_from=f"{repository}:{pin.tag}",
                runs=_runs(slot, values),
                digest=digest,
            )
        )
    return found


def _secrets(name: str, shape: SecretShape) -> list[Any]:
    return [name] if shape == "names" else [{"name": name}]


def image_reference(reference: str, mirror: MirrorConfig | None) -> str:
    """A workload's image: pinned by the table's digest when it has one (an image already
    carrying a digest keeps it), from the mirror when set."""
    name, at, digest = reference.partition("@")
    if not at:
        pin = pin_of(*name.rsplit(":", 1))
        name, digest = f"{pin.repository}:{pin.tag}", pin.digest or ""
    if mirror is not None and mirror.images is not None:
        name = mirrored_repository(name, mirror.images)
    return f"{name}@{digest}" if digest else name


def pin_note(reference: str) -> str:
    """Why an image the table knows has no digest (empty for one it does not know)."""
    try:
        return pin_of(*reference.partition("@")[0].rsplit(":", 1)).source
    except KeyError:
        return ""


def pod_spec(spec: Mapping[str, Any], mirror: MirrorConfig | None) -> dict[str, Any]:
    """A pod spec with every container's image pinned and mirrored (not those the node already
    has: `imagePullPolicy: Never`), and the mirror's pull secret."""
    result: dict[str, Any] = copy.deepcopy(dict(spec))
    for key in ("initContainers", "containers"):
        for container in result.get(key, []):
            if container.get("imagePullPolicy") != "Never":
                container["image"] = image_reference(container["image"], mirror)
    if mirror is not None and mirror.pull_secret is not None:
        result["imagePullSecrets"] = _secrets(mirror.pull_secret, "objects")
    return result


def pod_images(spec: Mapping[str, Any]) -> list[str]:
    """The images a pod spec pulls (not those the node has: `imagePullPolicy: Never`)."""
    return [
        container["image"]
        for key in ("initContainers", "containers")
        for container in spec.get(key, [])
        if container.get("imagePullPolicy") != "Never"
    ]
