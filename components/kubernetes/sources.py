"""Every chart and image the program installs, pinned and (with `gpuSoftware.mirror`) pulled
from the mirror: one stack transformation, so no release or workload of any stage, any cloud,
escapes it (`components.model.mirror` has the rules, `components.model.catalog.images` the
table).

It rewrites, as each resource is declared:
- a Helm release (`kubernetes:helm.sh/v3:Release`): its chart's source, and its values' image
  tags (with digests) and, under a mirror, repositories and pull secrets; a chart the image table
  does not know stops the program (nothing would say what it pulls);
- a Job or Deployment (the samples): its containers' images and pull secret;
- a YAML ConfigGroup (GKE's driver installer): the same in each pod template it holds.

Under a mirror it also records, from what each resource named before the rewrite, what must be
copied to the mirror: the stack output `softwareSources`, which `plan` lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.model import mirror as sources
from components.model.catalog.images import CHART_IMAGES
from components.model.schema import MirrorConfig, StackConfig

RELEASE = "kubernetes:helm.sh/v3:Release"
WORKLOADS = ("kubernetes:batch/v1:Job", "kubernetes:apps/v1:Deployment")
CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
_POD_TEMPLATE_KINDS = ("DaemonSet", "Deployment", "Job", "StatefulSet")
OUTPUT = "softwareSources"

Row = dict[str, Any]


class SoftwareSources:
    """The stack's transformation and, under a mirror, what it found to copy."""

    def __init__(self, mirror: MirrorConfig | None) -> None:
        self.mirror = mirror
        self._rows: list[pulumi.Input[list[Row]]] = []

    def transform(
        self, args: pulumi.ResourceTransformationArgs
    ) -> pulumi.ResourceTransformationResult | None:
        props = self._rewritten(args.type_, dict(args.props))
        return None if props is None else pulumi.ResourceTransformationResult(props, args.opts)

    def export(self) -> None:
        """The stack output listing what to mirror (only when the stack names a mirror)."""
        if self.mirror is not None:
            pulumi.export(OUTPUT, pulumi.Output.all(*self._rows).apply(_merged))

    def _rewritten(self, type_: str, props: dict[str, Any]) -> dict[str, Any] | None:
        if type_ == RELEASE:
            return self._release(props)
        if type_ in WORKLOADS:
            metadata = props.get("metadata")
            namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
            spec = dict(props["spec"])
            template = dict(spec["template"])
            self._images(template["spec"], namespace)
            template["spec"] = sources.pod_spec(template["spec"], self.mirror)
            spec["template"] = template
            return {**props, "spec": spec}
        if type_ == CONFIG_FILE and str(props.get("file", "")).startswith("https://"):
            if self.mirror is not None:
                # Read by the machine running pulumi at preview and up, never by the cluster.
                self._rows.append([{"kind": "file", "from": props["file"], "to": "", "name": ""}])
            return None
        if type_ == CONFIG_GROUP and isinstance(props.get("yaml"), str):
            for document in _documents(props["yaml"]):
                if document.get("kind") in _POD_TEMPLATE_KINDS:
                    self._images(
                        document["spec"]["template"]["spec"], document["metadata"].get("namespace")
                    )
            return {**props, "yaml": manifests_yaml(props["yaml"], self.mirror)}
        return None

    def _release(self, props: dict[str, Any]) -> dict[str, Any]:
        mirror = self.mirror
        reference = str(props["chart"])
        chart = sources.chart_name(reference)
        images = CHART_IMAGES.get(chart)
        if images is None:
            # Nothing would say what it pulls, nor pin or mirror it.
            raise pulumi.RunError(
                f"chart {chart} is not in components/model/catalog/images.py: add its images "
                "there (repository, tag, digest and source) before installing it"
            )
        origin = reference if reference.startswith("oci://") else _repository(props)
        if mirror is not None and mirror.charts is not None:
            chart_reference, repository = sources.chart_source(chart, "", mirror.charts)
            props["chart"] = chart_reference
            props["repository_opts"] = (
                k8s.helm.v3.RepositoryOptsArgs(repo=repository) if repository else None
            )
            target = chart_reference if repository is None else f"{repository} {chart}"
            self._rows.append([_chart_row(chart, str(props["version"]), origin, target)])
        if images.slots or (mirror is not None and mirror.pull_secret and images.secret_keys):
            values = pulumi.Output.from_input(props.get("values") or {}).apply(
                lambda given: sources.release_values(chart, given, mirror)
            )
            props["values"] = values
            if mirror is not None and mirror.images is not None:
                namespace = pulumi.Output.from_input(props.get("namespace"))
                self._rows.append(
                    pulumi.Output.all(values, namespace).apply(
                        lambda parts: _release_image_rows(chart, parts[0], parts[1])
                    )
                )
        return props

    def _images(self, spec: Mapping[str, Any], namespace: str | None) -> None:
        if self.mirror is None or self.mirror.images is None:
            return
        rows = []
        for image in sources.pod_images(spec):
            pulled = sources.image_reference(image, self.mirror)
            note = "" if "@" in pulled else sources.pin_note(image)
            rows.append(_image_row(image, pulled, namespace, "workload", note))
        self._rows.append(rows)


def install(config: StackConfig) -> SoftwareSources:
    """Apply the stack's software sources to every resource declared from now on."""
    found = SoftwareSources(config.gpu_software.mirror)
    pulumi.runtime.register_stack_transformation(found.transform)
    return found


def _repository(props: Mapping[str, Any]) -> str:
    options = props.get("repository_opts")
    repository = getattr(options, "repo", None) if options is not None else None
    return f"{repository} {props['chart']}" if repository else str(props["chart"])


def _chart_row(chart: str, version: str, origin: str, target: str) -> Row:
    return {"kind": "chart", "name": chart, "version": version, "from": origin, "to": target}


def _image_row(
    original: str, pulled: str, namespace: str | None, chart: str, note: str = ""
) -> Row:
    name, _, digest = pulled.partition("@")
    source = original.partition("@")[0]
    return {
        "kind": "image",
        "name": chart,
        "from": source,
        "to": name,
        "digest": digest or None,
        "namespace": namespace,
        "note": note,
    }


def _release_image_rows(chart: str, values: Mapping[str, Any], namespace: str | None) -> list[Row]:
    rows = []
    for image in sources.release_images(chart, values):
        if not image.runs:
            continue
        digest = image.digest or image.pin.digest
        pulled = image.pulled_from + (f"@{digest}" if digest else "")
        original = f"{image.pin.repository}:{image.pin.tag}"
        rows.append(
            _image_row(original, pulled, namespace, chart, "" if digest else image.pin.source)
        )
    return rows


def _merged(parts: list[list[Row]]) -> list[Row]:
    """Every row once, charts first, then images by source (an image pulled into several
    namespaces lists them all)."""
    merged: dict[tuple[str, str], Row] = {}
    for rows in parts:
        for row in rows:
            key = (row["kind"], row["from"])
            if key in merged and row["kind"] == "image":
                spaces = set(merged[key]["namespaces"]) | {row.get("namespace")}
                merged[key]["namespaces"] = sorted(s for s in spaces if s)
                continue
            entry = {k: v for k, v in row.items() if k != "namespace"}
            if row["kind"] == "image":
                entry["namespaces"] = [row["namespace"]] if row.get("namespace") else []
            merged[key] = entry
    order = {"chart": 0, "image": 1, "file": 2}
    return sorted(merged.values(), key=lambda row: (order[row["kind"]], row["from"]))


def _documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def manifests_yaml(text: str, mirror: MirrorConfig | None) -> str:
    """YAML documents with every pod template's images mirrored (unchanged without a mirror:
    what the vendored file names is pinned by digest already)."""
    if mirror is None:
        return text
    documents = _documents(text)
    for document in documents:
        if document.get("kind") in _POD_TEMPLATE_KINDS:
            template: Mapping[str, Any] = document["spec"]["template"]
            document["spec"]["template"] = {
                **template,
                "spec": sources.pod_spec(template["spec"], mirror),
            }
    return yaml.safe_dump_all(documents, sort_keys=False)
