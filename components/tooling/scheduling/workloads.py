"""Find the pod templates in a YAML file of Kubernetes workloads, and what the API server rejects.

Accepts what people feed `kubectl apply`: multi-document YAML with Pods, Deployments,
StatefulSets, ReplicaSets, ReplicationControllers, DaemonSets, Jobs, CronJobs, JobSets (one
template per replicated job), MPIJobs (kubeflow.org/v2beta1: the launcher's and the workers'),
PodTemplates, `List`s of those, or a bare pod spec (a mapping with
`containers`). What the object says about its pods (how many at once, whether together, the
labels Kueue reads) is `workload_objects`'.

Objects of a kind that runs no pods (Namespace, Service, ConfigMap, RBAC, PriorityClass, ...)
are skipped and listed in `Manifest.skipped`. A kind this module does not know at all (a custom
resource such as RayCluster or PyTorchJob, or a known name under another API group, such as
Knative's `Service`) may run pods it cannot see, so it is a problem unless the caller asks to
skip unknown kinds too.

`read_workloads` also checks every container's resources as the API server validates them
(`api_problems`), so a manifest `kubectl apply` would refuse is reported as bad input, every
problem at once, instead of as a pod that does not fit.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from components.tooling.scheduling import quantity
from components.tooling.scheduling.workload_objects import (
    JOBSET_GROUP,
    MPIJOB_VERSION,
    Around,
    PodSet,
    around,
    members,
)

# Where each kind keeps its pod spec.
_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "PodTemplate": ("template", "spec"),
}
ACCEPTED_KINDS = (*sorted([*_SPEC_PATHS, "JobSet", "MPIJob"]), "List")

# The API groups of the workload kinds above ("" is the core group, apiVersion "v1"); the same
# kind name in another group (Volcano's batch.volcano.sh Job) is a different, unknown kind.
_WORKLOAD_GROUPS: dict[str, frozenset[str]] = {
    "Pod": frozenset({""}),
    "PodTemplate": frozenset({""}),
    "ReplicationController": frozenset({""}),
    "Deployment": frozenset({"apps", "extensions"}),
    "ReplicaSet": frozenset({"apps", "extensions"}),
    "DaemonSet": frozenset({"apps", "extensions"}),
    "StatefulSet": frozenset({"apps"}),
    "Job": frozenset({"batch"}),
    "CronJob": frozenset({"batch"}),
}

# Kinds that never run a pod themselves, by API group: skipped with a note.
_NO_POD_GROUPS: dict[str, tuple[str, ...]] = {
    "": (
        "Namespace",
        "Service",
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "Endpoints",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "ResourceQuota",
        "LimitRange",
        "Event",
        "Node",
    ),
    "rbac.authorization.k8s.io": ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"),
    "scheduling.k8s.io": ("PriorityClass",),
    "networking.k8s.io": ("Ingress", "IngressClass", "NetworkPolicy"),
    "discovery.k8s.io": ("EndpointSlice",),
    "policy": ("PodDisruptionBudget",),
    "autoscaling": ("HorizontalPodAutoscaler",),
    "autoscaling.k8s.io": ("VerticalPodAutoscaler",),
    "storage.k8s.io": ("StorageClass", "CSIDriver", "CSINode", "VolumeAttachment"),
    "apiextensions.k8s.io": ("CustomResourceDefinition",),
    "admissionregistration.k8s.io": (
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
    ),
    "apiregistration.k8s.io": ("APIService",),
    "node.k8s.io": ("RuntimeClass",),
    "coordination.k8s.io": ("Lease",),
    "certificates.k8s.io": ("CertificateSigningRequest",),
    "events.k8s.io": ("Event",),
    "flowcontrol.apiserver.k8s.io": ("FlowSchema", "PriorityLevelConfiguration"),
    "resource.k8s.io": ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice"),
    "gateway.networking.k8s.io": ("Gateway", "GatewayClass", "HTTPRoute", "GRPCRoute"),
    "monitoring.coreos.com": ("ServiceMonitor", "PodMonitor", "PrometheusRule"),
    "cert-manager.io": ("Certificate", "Issuer", "ClusterIssuer"),
    "kueue.x-k8s.io": ("ResourceFlavor", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass"),
}
_NO_POD_KINDS: dict[str, frozenset[str]] = {
    kind: frozenset(group for group, kinds in _NO_POD_GROUPS.items() if kind in kinds)
    for listed in _NO_POD_GROUPS.values()
    for kind in listed
}
NO_POD_KINDS = tuple(sorted(_NO_POD_KINDS))


class WorkloadError(ValueError):
    """The file cannot be read as workloads; the message says where and why, one problem a
    line, and `problems` holds them one by one."""

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems: tuple[str, ...] = problems


@dataclass(frozen=True)
class PodTemplate:
    """One pod spec and where it came from, e.g. ``Deployment/trainer`` in ``document 2``."""

    source: str
    spec: Mapping[str, Any]
    where: str = ""
    # The pods the object runs at once (a Job's parallelism capped by its completions, as
    # Kueue counts a Job's pod set; a Deployment's replicas), and the object's own labels (a
    # CronJob's: its job template's), where a Job names its Kueue queue.
    pods: int = 1
    labels: Mapping[str, str] = field(default_factory=dict)
    namespace: str | None = None
    # Why the object's pods must all run at once (a Job's parallelism, a JobSet; None: they
    # need not), and every pod set it runs (what Kueue admits as one workload).
    together: str | None = None
    pod_sets: tuple[PodSet, ...] = ()

    @property
    def label(self) -> str:
        """``document 2 (Deployment/trainer)``: the document that finds it, and the object."""
        if not self.where or self.where in self.source:
            return self.source
        return f"{self.where} ({self.source})"


@dataclass(frozen=True)
class Skipped:
    """An object that holds no pod template fit can check, e.g. ``Namespace/x`` in document 1.

    `known` is True for kinds that run no pods; False for kinds fit does not know (skipped only
    when asked to), whose pods, if any, go unchecked."""

    source: str
    where: str
    known: bool

    def __str__(self) -> str:
        return f"{self.source} ({self.where})"


@dataclass(frozen=True)
class Manifest:
    """What a manifest holds: the pod templates, the objects skipped, and every problem (the
    objects' shape, unknown kinds, what the API server would reject), in file order."""

    templates: tuple[PodTemplate, ...]
    skipped: tuple[Skipped, ...] = ()
    problems: tuple[str, ...] = ()
    unknown_kinds: tuple[str, ...] = ()


def read_workloads(text: str, *, skip_unknown_kinds: bool = False) -> Manifest:
    """Every pod template in `text`, the objects skipped, and every problem.

    Raises `WorkloadError` only when `text` is not YAML at all; everything else is collected in
    `Manifest.problems`, so one run names every mistake.
    """
    return _collect(text, skip_unknown_kinds=skip_unknown_kinds, check_api=True)


def extract_pod_templates(text: str, *, ignore_other_kinds: bool = False) -> list[PodTemplate]:
    """Every pod template in `text`, in file order.

    Kinds that run no pods (ConfigMap, Service, ...) are skipped. A kind this module does not
    know is an error by default, so a typo'd kind (or a custom resource whose pods cannot be
    seen) is not silently skipped; `ignore_other_kinds=True` skips those too. Resource values
    are not checked against the API server's rules here (`read_workloads` does that).
    """
    manifest = _collect(text, skip_unknown_kinds=ignore_other_kinds, check_api=False)
    if manifest.problems:
        raise WorkloadError(*manifest.problems)
    return list(manifest.templates)


# --------------------------------------------------------------------------- finding templates


@dataclass
class _Found:
    templates: list[PodTemplate] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unknown_kinds: list[str] = field(default_factory=list)


def _collect(text: str, *, skip_unknown_kinds: bool, check_api: bool) -> Manifest:
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as error:
        raise WorkloadError(_yaml_message(error)) from error
    found = _Found()
    for number, document in enumerate(documents, start=1):
        if document is None:  # `---` separators with nothing between them
            continue
        _from_object(document, f"document {number}", skip_unknown_kinds, found)
    if check_api:
        for template in found.templates:
            found.problems.extend(
                f"{template.label}, {problem}" for problem in api_problems(template.spec)
            )
    if not found.templates and not found.problems:
        skipped = f"; skipped {', '.join(map(str, found.skipped))}" if found.skipped else ""
        found.problems.append(
            "no workloads found: expected a pod spec or one of "
            + ", ".join(ACCEPTED_KINDS)
            + skipped
        )
    return Manifest(
        tuple(found.templates),
        tuple(found.skipped),
        tuple(found.problems),
        tuple(dict.fromkeys(found.unknown_kinds)),
    )


def _yaml_message(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    if mark is not None:
        # PyYAML counts from 0; editors count from 1.
        return f"cannot read YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return f"cannot read YAML: {problem}"


def _group(obj: Mapping[str, Any]) -> str | None:
    """The API group of `apiVersion` ("" for the core group's "v1"); None when not given."""
    version = obj.get("apiVersion")
    if not isinstance(version, str) or not version:
        return None
    return version.rsplit("/", 1)[0] if "/" in version else ""


def _from_object(obj: object, where: str, skip_unknown_kinds: bool, found: _Found) -> None:
    if not isinstance(obj, Mapping):
        found.problems.append(
            f"{where} is a {_type_name(obj)}, not a mapping (a Kubernetes object)"
        )
        return
    kind = obj.get("kind")
    if kind is None:
        if "containers" in obj:
            source = f"{where} (pod spec)"
            _add_template(found, source, obj, where, Around(pod_sets=(PodSet("pod", obj, 1),)))
            return
        found.problems.append(
            f"{where} has neither `kind` nor `containers`: expected a pod spec or one of "
            + ", ".join(ACCEPTED_KINDS)
        )
        return
    if kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in obj):
        items = obj.get("items") or []
        if not isinstance(items, list):
            found.problems.append(f"{where} ({kind}): items is not a list")
            return
        for index, item in enumerate(items, start=1):
            _from_object(item, f"{where} item {index}", skip_unknown_kinds, found)
        return
    source = _source(obj, kind, where)
    group = _group(obj)
    name = kind if isinstance(kind, str) else ""
    path = _SPEC_PATHS.get(name)
    if path is not None and (group is None or group in _WORKLOAD_GROUPS[name]):
        spec: object = obj
        for step in path:
            spec = spec.get(step) if isinstance(spec, Mapping) else None
            if spec is None:
                found.problems.append(f"{source} has no {'.'.join(path)}")
                return
        namespace = _namespace(obj)
        if isinstance(spec, Mapping):
            _add_template(found, source, spec, where, around(obj, name, spec), namespace)
        else:
            _add_template(found, source, spec, where, Around(), namespace)
        return
    if (name == "JobSet" and group in (None, JOBSET_GROUP)) or (
        name == "MPIJob" and obj.get("apiVersion") in (None, MPIJOB_VERSION)
    ):
        _from_sets(obj, source, where, found)
        return
    if name in _NO_POD_KINDS and (group is None or group in _NO_POD_KINDS[name]):
        found.skipped.append(Skipped(source, where, known=True))
        return
    if skip_unknown_kinds:
        found.skipped.append(Skipped(source, where, known=False))
        return
    found.unknown_kinds.append(name or repr(kind))
    found.problems.append(_unknown_kind_message(obj, kind, where, source))


def _unknown_kind_message(obj: Mapping[str, Any], kind: object, where: str, source: str) -> str:
    version = obj.get("apiVersion")
    what = f"kind {kind}" + (f" (apiVersion {version})" if version else "")
    guess = (
        difflib.get_close_matches(kind, [*ACCEPTED_KINDS[:-1], *_NO_POD_KINDS], n=1, cutoff=0.8)
        if isinstance(kind, str)
        else []
    )
    hint = f"; did you mean {guess[0]}?" if guess and guess[0] != kind else ""
    return (
        f"{where} ({source}): fit does not know {what}, so it cannot check the pods it may run; "
        "it reads " + ", ".join(ACCEPTED_KINDS[:-1]) + ", List or a bare pod spec, and skips "
        f"kinds that run no pods (Namespace, Service, ConfigMap, ...){hint}"
    )


def _namespace(obj: Mapping[str, Any]) -> str | None:
    metadata = obj.get("metadata")
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    return namespace if isinstance(namespace, str) else None


def _from_sets(obj: Mapping[str, Any], source: str, where: str, found: _Found) -> None:
    """A template per JobSet replicated job or MPIJob replica type, each knowing what the
    object runs at once."""
    listed, field_name = members(obj)
    if not listed:
        found.problems.append(f"{source} has no {field_name}")
    for member in listed:
        if member.pod_spec is None:
            found.problems.append(f"{source} {member.label} has no {member.path}")
            continue
        label = f"{source} {member.label}"
        _add_template(found, label, member.pod_spec, where, member.around, _namespace(obj))


def _add_template(
    found: _Found,
    source: str,
    spec: object,
    where: str,
    workload: Around,
    namespace: str | None = None,
) -> None:
    if not isinstance(spec, Mapping):
        found.problems.append(f"{source}: pod spec is a {_type_name(spec)}, not a mapping")
        return
    problem = _spec_problem(spec, source)
    if problem:
        found.problems.append(problem)
    else:
        found.templates.append(
            PodTemplate(
                source,
                spec,
                where,
                workload.pods,
                dict(workload.labels),
                namespace,
                workload.together,
                workload.pod_sets,
            )
        )


def _source(obj: Mapping[str, Any], kind: object, where: str) -> str:
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    # Without a name (e.g. generateName), the document number is what finds it again.
    return f"{kind}/{name}" if name else f"{kind} in {where}"


def _spec_problem(spec: Mapping[str, Any], source: str) -> str | None:
    containers = spec.get("containers")
    if not containers:
        return f"{source}: pod spec has no containers"
    if not isinstance(containers, list) or not all(isinstance(c, Mapping) for c in containers):
        return f"{source}: pod spec containers must be a list of mappings"
    return None


def _type_name(value: object) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


# --------------------------------------------------------------------------- API server rules
# The rules themselves, with their sources, are in `quantity.resource_problems`.


def _containers(pod_spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for key, label in (("initContainers", "init container"), ("containers", "container")):
        listed = pod_spec.get(key)
        for index, container in enumerate(listed if isinstance(listed, list) else [], start=1):
            if isinstance(container, Mapping):
                yield f"{label} {container.get('name') or f'#{index}'}", container


def api_problems(pod_spec: Mapping[str, Any]) -> list[str]:
    """What the API server would refuse in this pod spec's resources, each problem naming the
    container, the key, the value as written and what is allowed; [] when it would accept it."""
    problems: list[str] = []
    for label, container in _containers(pod_spec):
        problems.extend(
            f"{label}: {problem}"
            for problem in quantity.resource_problems(container.get("resources"), check_names=True)
        )
    pod_level = pod_spec.get("resources")
    if pod_level is not None:
        problems.extend(
            f"pod spec {problem}"
            for problem in quantity.resource_problems(pod_level, check_names=False)
        )
    overhead = pod_spec.get("overhead")
    if overhead is not None and not isinstance(overhead, Mapping):
        problems.append(f"pod spec overhead: {quantity.written(overhead)} is not a mapping")
    for name, value in overhead.items() if isinstance(overhead, Mapping) else []:
        problem = quantity.value_problem(str(name), value)
        if problem:
            problems.append(f"pod spec overhead[{name}]: {problem}")
    return problems
