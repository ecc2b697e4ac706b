"""What the object around a pod template says about its pods, as Kueue and the Job controller
count them: how many run at once, whether they must all run together, and the labels Kueue reads.

- A Job (or a CronJob's Job) runs `parallelism` pods at once, at most `completions` (kueue
  v0.19.2 pkg/controller/jobs/job `podsCount`). Asking for several at once is asking for them
  together: `fit` judges all of them on a pool, and the fix for a pool that holds fewer is a
  lower `parallelism` or a larger pool.
- A JobSet (jobset.x-k8s.io, API v1alpha2) runs every replicated job at once: `replicas` Jobs
  of `min(parallelism, completions)` pods each (kueue pkg/controller/jobs/jobset
  `PodsCountPerReplica`, `podsCount`; `replicas` defaults to 1 in api/jobset/v1alpha2
  jobset_types.go). Kueue admits the JobSet as one workload with a pod set per replicated job.
- An MPIJob (kubeflow.org/v2beta1) runs `spec.mpiReplicaSpecs.Launcher` (one pod; `replicas`
  defaults to 1) and `.Worker` (`replicas` pods, defaulted to 0), each with a pod `template`
  (kubeflow/mpi-operator @caa3c47f pkg/apis/kubeflow/v2beta1 types.go `ReplicaSpec`,
  `MPIReplicaSpecs`; default.go). The workers are MPI ranks: they all run at once, and the
  launcher starts with them (`launcherCreationPolicy` AtStartup, the default). Kueue admits it
  as one workload with both pod sets (kueue pkg/controller/jobs/mpijob).
- A Pod of a Kueue pod group (label `kueue.x-k8s.io/pod-group-name`, annotation
  `kueue.x-k8s.io/pod-group-total-count`, kueue pkg/controller/jobs/pod/constants) is admitted
  with the whole group.
- A Deployment's, ReplicaSet's or StatefulSet's replicas run at once but each on its own: one
  that does not get a node stays Pending without holding back the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

JOBSET_GROUP = "jobset.x-k8s.io"
MPIJOB_VERSION = "kubeflow.org/v2beta1"
# An MPIJob's replica types and their default replicas (mpi-operator v2beta1 default.go).
MPI_REPLICA_DEFAULTS = {"Launcher": 1, "Worker": 0}
POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
POD_GROUP_TOTAL_ANNOTATION = "kueue.x-k8s.io/pod-group-total-count"
REPLICATED = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")


@dataclass(frozen=True)
class PodSet:
    """One group of identical pods of a workload, as Kueue counts it (a Job's pods, a JobSet's
    replicated job): their pod spec and how many run at once."""

    name: str
    spec: Mapping[str, Any]
    count: int


@dataclass(frozen=True)
class Around:
    """What the object says about one pod template of it."""

    pods: int = 1
    labels: Mapping[str, str] = field(default_factory=dict)
    # Why the pods must run at the same time, in words (None: each pod runs on its own).
    together: str | None = None
    # Every pod set of the object (a JobSet's replicated jobs), for what Kueue admits as one.
    pod_sets: tuple[PodSet, ...] = ()


def count(value: object, default: int) -> int:
    """A count as written (the API server refuses what is not a whole number >= 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def labels_of(obj: Mapping[str, Any]) -> dict[str, str]:
    raw = _mapping(obj.get("metadata")).get("labels")
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}


def job_pods(job_spec: Mapping[str, Any]) -> int:
    """A Job's pods at once: parallelism (defaulted to 1), at most its completions."""
    pods = count(job_spec.get("parallelism"), 1)
    completions = job_spec.get("completions")
    if isinstance(completions, int) and not isinstance(completions, bool):
        pods = min(pods, completions)
    return pods


def _job(obj: Mapping[str, Any], kind: str, pod_spec: Mapping[str, Any]) -> Around:
    owner = obj
    if kind == "CronJob":
        owner = _mapping(_mapping(obj.get("spec")).get("jobTemplate"))
    spec = _mapping(owner.get("spec"))
    pods = job_pods(spec)
    together = None
    if pods > 1:
        parallelism = count(spec.get("parallelism"), 1)
        capped = f" (parallelism {parallelism}, completions {spec.get('completions')})"
        together = f"the Job runs {pods} pods at once" + (capped if pods < parallelism else "")
    name = str(_mapping(owner.get("metadata")).get("name") or kind)
    return Around(pods, labels_of(owner), together, (PodSet(name, pod_spec, pods),))


def _pod(obj: Mapping[str, Any], pod_spec: Mapping[str, Any]) -> Around:
    labels = labels_of(obj)
    group = labels.get(POD_GROUP_LABEL)
    annotations = _mapping(_mapping(obj.get("metadata")).get("annotations"))
    try:
        total = int(str(annotations.get(POD_GROUP_TOTAL_ANNOTATION, "")))
    except ValueError:
        total = 0
    if group is None or total < 1:
        return Around(1, labels, None, (PodSet("pod", pod_spec, 1),))
    together = f"Kueue admits pod group {group} ({total} pods) whole" if total > 1 else None
    return Around(total, labels, together, (PodSet(group, pod_spec, total),))


def around(obj: Mapping[str, Any], kind: str, pod_spec: Mapping[str, Any]) -> Around:
    """What a Job, CronJob, Pod or replicated workload says about its pod template."""
    if kind in ("Job", "CronJob"):
        return _job(obj, kind, pod_spec)
    if kind == "Pod":
        return _pod(obj, pod_spec)
    if kind in REPLICATED:
        replicas = count(_mapping(obj.get("spec")).get("replicas"), 1)
        return Around(replicas, labels_of(obj), None, (PodSet(kind, pod_spec, replicas),))
    return Around(1, labels_of(obj), None, (PodSet(kind, pod_spec, 1),))


@dataclass(frozen=True)
class ReplicatedJob:
    """One replicated job of a JobSet: its name, pod spec (None: missing) and pods at once."""

    name: str
    pod_spec: object
    pods: int
    replicas: int


def replicated_jobs(jobset: Mapping[str, Any]) -> list[ReplicatedJob]:
    """A JobSet's replicated jobs, in order."""
    listed = _mapping(jobset.get("spec")).get("replicatedJobs")
    jobs = []
    for index, entry in enumerate(listed if isinstance(listed, list) else [], start=1):
        entry = _mapping(entry)
        job_spec = _mapping(_mapping(entry.get("template")).get("spec"))
        replicas = count(entry.get("replicas"), 1)
        pod_spec = _mapping(job_spec.get("template")).get("spec")
        name = str(entry.get("name") or f"#{index}")
        jobs.append(ReplicatedJob(name, pod_spec, replicas * job_pods(job_spec), replicas))
    return jobs


def jobset_around(
    jobset: Mapping[str, Any], jobs: list[ReplicatedJob], job: ReplicatedJob
) -> Around:
    """What a JobSet says about one replicated job's pod template: its pods, and that all the
    JobSet's pods run together."""
    sets = tuple(
        PodSet(j.name, j.pod_spec, j.pods) for j in jobs if isinstance(j.pod_spec, Mapping)
    )
    total = sum(s.count for s in sets)
    name = _mapping(jobset.get("metadata")).get("name") or "JobSet"
    together = None
    if total > 1:
        parts = ", ".join(f"{s.name} {s.count}" for s in sets)
        together = f"JobSet {name} runs all its replicated jobs at once ({parts}: {total} pods)"
    return Around(job.pods, labels_of(jobset), together, sets)


def mpi_replicas(mpijob: Mapping[str, Any]) -> list[ReplicatedJob]:
    """An MPIJob's Launcher and Worker (those it lists), as replicated jobs of one pod each."""
    specs = _mapping(_mapping(mpijob.get("spec")).get("mpiReplicaSpecs"))
    replicas = []
    for role, default in MPI_REPLICA_DEFAULTS.items():
        if role in specs:
            entry = _mapping(specs[role])
            pods = count(entry.get("replicas"), default)
            pod_spec = _mapping(entry.get("template")).get("spec")
            replicas.append(ReplicatedJob(role, pod_spec, pods, pods))
    return replicas


def mpijob_around(
    mpijob: Mapping[str, Any], roles: list[ReplicatedJob], role: ReplicatedJob
) -> Around:
    """What an MPIJob says about one replica type's template: the workers are a gang, the
    launcher one pod; Kueue admits both pod sets as one workload."""
    sets = tuple(
        PodSet(r.name, r.pod_spec, r.pods) for r in roles if isinstance(r.pod_spec, Mapping)
    )
    name = _mapping(mpijob.get("metadata")).get("name") or "MPIJob"
    together = None
    if role.name == "Worker" and role.pods > 1:
        together = f"MPIJob {name} runs its {role.pods} workers (MPI ranks) at once"
    return Around(role.pods, labels_of(mpijob), together, sets)


@dataclass(frozen=True)
class Member:
    """One pod template of a JobSet (a replicated job) or an MPIJob (a replica type)."""

    label: str
    pod_spec: object
    # Where the template's pod spec sits in the entry, for the message when it is missing.
    path: str
    around: Around


def members(obj: Mapping[str, Any]) -> tuple[list[Member], str]:
    """A JobSet's or MPIJob's pod templates, and the field that lists them (for when none do)."""
    if obj.get("kind") == "MPIJob":
        roles = mpi_replicas(obj)
        listed = [
            Member(r.name, r.pod_spec, "template.spec", mpijob_around(obj, roles, r)) for r in roles
        ]
        return listed, "spec.mpiReplicaSpecs (Launcher, Worker)"
    jobs = replicated_jobs(obj)
    listed = [
        Member(f"replicatedJob {j.name}", j.pod_spec, "template.spec.template.spec", around)
        for j in jobs
        for around in (jobset_around(obj, jobs, j),)
    ]
    return listed, "spec.replicatedJobs"
