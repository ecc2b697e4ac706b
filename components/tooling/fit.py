"""`python -m components fit STACK MANIFEST`: will these pods schedule on STACK's pools?

For every pod template in MANIFEST and every pool (GPU pools, then the CPU system pool) it says
fits / does not fit and every reason, as kube-scheduler and, for pools at zero nodes, the
cluster autoscaler would decide. A template that fits no pool also gets the machine types of
the pools' GPUs (from the cloud's catalog, sold in the stack's region where the offerings table
knows) whose allocatable would take it, or is told none would (components/tooling/machine_fit.py). Exit status: 0 every template fits some pool, 1 one does not,
2 bad input: unreadable YAML, an object without a usable pod spec, a kind fit does not know
(unless `--skip-other-kinds`), or resources the API server would reject (a GPU count that is not
a whole number, a GPU request without an equal limit, an unparsable cpu or memory quantity...),
every problem listed at once on stderr.

Objects of kinds that run no pods (Namespace, Service, ConfigMap, RBAC, PriorityClass, ...) are
skipped, so `python -m components samples STACK | python -m components fit STACK -` works; the
skipped objects are named on stderr, which keeps the report (and `--json`) unchanged.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.model.cold_start_estimate import pool_cold_starts
from components.model.config import clock_today
from components.model.pools import PoolSpec
from components.model.registry import CLOUDS
from components.model.schema import StackConfig
from components.tooling.capacity_fit import Workload, admitted_pod, capacity_verdict
from components.tooling.cold_start_view import add_image_gb_option, with_waits
from components.tooling.commands import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, load_validated
from components.tooling.fabric_fit import fabric_reasons
from components.tooling.gang_fit import ZONE_KEYS, one_zone
from components.tooling.machine_fit import MachineHint, machine_hints, render_hints
from components.tooling.pool_views import PoolCheck, stack_pool_checks
from components.tooling.queue_fit import Routing, by_quota, route
from components.tooling.scheduling import (
    PodTemplate,
    WorkloadError,
    fit_pool,
    quantity,
)
from components.tooling.scheduling.resources import pod_requests
from components.tooling.scheduling.workload_objects import PodSet
from components.tooling.scheduling.workloads import Manifest, read_workloads


@dataclass(frozen=True)
class PoolVerdict:
    pool: str
    kind: str
    fits: bool
    via: str
    reasons: tuple[str, ...]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "pool": self.pool,
            "kind": self.kind,
            "fits": self.fits,
            "via": self.via,
            "reasons": list(self.reasons),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class TemplateVerdict:
    source: str
    pools: tuple[PoolVerdict, ...]
    # For a template no pool takes: the machine types of the pools' GPUs that would.
    machine_hints: tuple[MachineHint, ...] = ()
    # What holds for every pool: how Kueue treats the workload (its queue, its namespace).
    notes: tuple[str, ...] = ()
    # The pods it runs at once, and why they must run together (None: each on its own).
    pods: int = 1
    together: str | None = None

    @property
    def fits(self) -> bool:
        return any(pool.fits for pool in self.pools)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "fits": self.fits,
            "pools": [pool.to_json() for pool in self.pools],
            "machine_hints": [hint.to_json() for hint in self.machine_hints],
            "pods": self.pods,
            "together": self.together,
            "notes": list(self.notes),
        }


def time_sharing_reasons(pod_spec: Mapping[str, Any], spec: PoolSpec) -> list[str]:
    """GKE time-sharing, MPS on a multi-GPU GKE node, and gpufleet's own NVIDIA device plugin
    on a shared pool (failRequestsGreaterThanOne: components/model/pool_spec.py) give each
    container at most one shared GPU: the node's device plugin fails larger requests after
    scheduling (UnexpectedAdmissionError), which kube-scheduler does not foresee
    (cloud.google.com/kubernetes-engine/docs/concepts/timesharing-gpus; container-engine-
    accelerators gpusharing.go ValidateRequest). On a single-GPU MPS node a container may ask
    for several shares: GKE gives it that many shares of the GPU's threads and memory."""
    if not spec.one_shared_gpu_per_container:
        return []
    reasons: list[str] = []
    for field in ("initContainers", "containers"):
        listed = pod_spec.get(field)
        for index, container in enumerate(listed if isinstance(listed, list) else [], start=1):
            resources = container.get("resources") if isinstance(container, Mapping) else None
            if not isinstance(resources, Mapping):
                continue
            for section in ("limits", "requests"):
                amounts = resources.get(section)
                value = amounts.get(spec.gpu_resource) if isinstance(amounts, Mapping) else None
                try:
                    count = quantity.count(value) if value is not None else 0
                except ValueError:
                    continue  # the simulator already reports the bad quantity
                if count > 1:
                    name = container.get("name") or f"#{index}"
                    if spec.sharing_via == "nvidia":
                        where = (
                            f"{spec.sharing_strategy} pool, whose NVIDIA device plugin gpufleet "
                            "configures with failRequestsGreaterThanOne,"
                        )
                    elif spec.sharing_strategy == "mps":
                        where = "GKE mps pool with several GPUs per node"
                    else:
                        where = f"GKE {spec.sharing_strategy} pool"
                    reasons.append(
                        f"container {name}: {section} {spec.gpu_resource}={value}, but on a "
                        f"{where} each container gets at most 1 shared GPU "
                        "(the node rejects the pod with UnexpectedAdmissionError, so it never "
                        "runs)"
                    )
                    break
    return reasons


def zone_notes(pod_spec: Mapping[str, Any], pods: int, spec: PoolSpec) -> list[str]:
    """A workload of several GPU pods that needs more nodes than one zone of the pool holds,
    and does not keep to one zone: the autoscaler limits each zone's group, so its pods span
    zones (no EFA between zones, inter-zone traffic) or, kept to one zone, the rest never start
    (review eks-2.md N8; a workload that does keep to one zone is judged by `gang_fit`)."""
    requested, _ = pod_requests(pod_spec)
    per_pod = requested[spec.gpu_resource].total if spec.gpu_resource in requested else 0
    per_node = spec.gpus_allocatable
    if pods < 2 or per_pod <= 0 or per_node < per_pod or spec.zone_max_nodes is None:
        return []
    nodes = -(-pods // (per_node // per_pod))
    if nodes < 2 or len(spec.zones) < 2 or one_zone(pod_spec):
        # A workload kept to one zone is judged whole by gang_fit.
        return []
    if nodes > spec.zone_max_nodes:
        return [
            f"its {pods} pods need {nodes} nodes of this pool, but one zone holds at most "
            f"{spec.zone_max_nodes} (maxNodes {spec.max_nodes} split over {len(spec.zones)} "
            "zones): a job that must run in one zone (NCCL, EFA) never gets all its nodes; set "
            "gpuPools[].aws.maxNodesPerZone or give the pool a single zone"
        ]
    # The autoscaler scales each zone's group on its own, and balances one scale-up over the
    # zone groups of a pool without maxNodesPerZone (review eks-3.md R3-4).
    return [
        f"its {pods} pods need {nodes} nodes, and nothing keeps them in one zone: the "
        "autoscaler scales each zone's group on its own (and splits one scale-up over the "
        "zones of a pool without aws.maxNodesPerZone); for a job that must run in one zone "
        f"(NCCL, EFA), give its pods the nodeSelector {ZONE_KEYS[0]}: <one of "
        f"{', '.join(spec.zones)}> or a required podAffinity to each other with topologyKey "
        f"{ZONE_KEYS[0]}"
    ]


def _siblings(
    pod_spec: Mapping[str, Any], check: PoolCheck, workload: Workload, routing: Routing
) -> tuple[PodSet, ...]:
    """The workload's other pod sets (a JobSet's other replicated jobs) this pool takes too."""
    others = [p for p in workload.pod_sets if p.spec is not pod_spec and p.count > 0]
    view = check.views[0][1]
    return tuple(
        p for p in others if fit_pool(admitted_pod(p.spec, check.spec, routing), view).fits
    )


def fit_check(
    pod_spec: Mapping[str, Any],
    check: PoolCheck,
    workload: Workload | None = None,
    routing: Routing | None = None,
    pool_index: int | None = None,
) -> PoolVerdict:
    """One pod spec against one pool. A pool with several autoscaler templates (EKS ASGs whose
    tags differ) takes the pod if any of them does. `workload` (the object around the pod:
    how many pods at once, its labels) lets a queued, reservation-capped or zone-split pool
    say how the pods get nodes; `routing` is where Kueue sends it among all the stack's pools
    (by default, judged from this pool alone)."""
    workload = workload or Workload()
    if routing is None:
        routing = route(workload.labels, workload.namespace, [check.spec])
    written = pod_spec
    pod_spec = admitted_pod(pod_spec, check.spec, routing)
    extra = time_sharing_reasons(pod_spec, check.spec)
    extra += fabric_reasons(pod_spec, check.spec, pool_index)
    siblings = _siblings(written, check, workload, routing) if workload.together else ()
    capacity = capacity_verdict(
        check.spec, pod_spec, check.views[0][1].node, workload, routing, siblings
    )
    extra += capacity.reasons
    notes = (*check.notes, *capacity.notes)
    results = [(label, fit_pool(pod_spec, view)) for label, view in check.views]
    fitting = [result for _, result in results if result.fits]
    if routing.elsewhere is not None and not routing.admits_to(check.name):
        # Kueue never lets its pods reach this pool: the scheduler's view does not matter.
        return PoolVerdict(check.name, check.kind, False, results[0][1].via, (routing.elsewhere,))
    if fitting or len(results) == 1:
        chosen = fitting[0] if fitting else results[0][1]
        reasons = (*chosen.reasons, *extra)
        if not reasons:  # the pool takes the pod: does it take all the workload's at once?
            reasons = capacity.gang_reasons
            notes = (*notes, *capacity.gang_notes)
        if not reasons:
            notes = (*notes, *zone_notes(pod_spec, workload.pods, check.spec))
        return PoolVerdict(check.name, check.kind, not reasons, chosen.via, reasons, notes)
    reasons = tuple(
        f"{label}: {reason}" if label else reason
        for label, result in results
        for reason in result.reasons
    )
    return PoolVerdict(check.name, check.kind, False, results[0][1].via, (*reasons, *extra), notes)


def workload_of(template: PodTemplate) -> Workload:
    return Workload(
        template.pods,
        template.labels,
        template.namespace,
        template.together,
        template.pod_sets,
    )


def fit_templates(
    templates: Sequence[PodTemplate],
    checks: Sequence[PoolCheck],
    config: StackConfig | None = None,
) -> list[TemplateVerdict]:
    """Every template against every pool; with the stack's config, a template no pool takes
    also gets the machine types of the pools' GPUs that would take it."""
    verdicts = []
    specs = [check.spec for check in checks]
    # Each GPU pool's place in gpuPools, for the messages that name its keys.
    indexes = {c.name: i for i, c in enumerate(c for c in checks if c.spec.kind == "gpu")}
    for template in templates:
        workload = workload_of(template)
        routing = by_quota(route(workload.labels, workload.namespace, specs), specs, template)
        verdict = TemplateVerdict(
            template.source,
            tuple(
                fit_check(template.spec, check, workload, routing, indexes.get(check.name))
                for check in checks
            ),
            notes=routing.notes,
            pods=template.pods,
            together=template.together,
        )
        if config is not None and not verdict.fits:
            hints = tuple(machine_hints(config, template.spec))
            verdict = dataclasses.replace(verdict, machine_hints=hints)
        verdicts.append(verdict)
    return verdicts


# --------------------------------------------------------------------------- rendering


def to_json(stack: str, cloud: str, verdicts: Sequence[TemplateVerdict]) -> dict[str, Any]:
    """The stable `--json` document."""
    return {
        "stack": stack,
        "cloud": cloud,
        "templates": [verdict.to_json() for verdict in verdicts],
        "ok": all(verdict.fits for verdict in verdicts),
    }


def upper_bound_notes(cloud: str) -> list[str]:
    """What a GPU pool's cpu and memory leave out: the cloud's agents without a known request."""
    known = CLOUDS.get(cloud)
    agents = known.uncounted_daemonsets if known is not None else ()
    if not agents:
        return []
    return [
        f"note: on {cloud}, a GPU node's cpu and memory are an upper bound: the requests of the "
        f"cloud's own DaemonSets {', '.join(agents)} are not counted (no source gives them); "
        "leave them some room",
        "",
    ]


def render_text(stack: str, cloud: str, verdicts: Sequence[TemplateVerdict]) -> str:
    lines: list[str] = []
    for verdict in verdicts:
        lines.append(verdict.source)
        lines.extend(f"  note: {note}" for note in verdict.notes)
        width = max(len(pool.pool) for pool in verdict.pools)
        for pool in verdict.pools:
            mark, word = ("✓", "fits") if pool.fits else ("✗", "does not fit")
            lines.append(f"  {mark} {pool.pool:<{width}}  {word} ({pool.kind} pool, {pool.via})")
            lines.extend(f"      - {reason}" for reason in pool.reasons)
            lines.extend(f"      note: {note}" for note in pool.notes)
        fitting = [pool.pool for pool in verdict.pools if pool.fits]
        lines.append(f"  => schedules on: {', '.join(fitting)}" if fitting else "  => fits no pool")
        lines.extend(render_hints(verdict.machine_hints))
        lines.append("")
    lines += upper_bound_notes(cloud)
    failing = [verdict.source for verdict in verdicts if not verdict.fits]
    pools = len(verdicts[0].pools) if verdicts else 0
    if failing:
        lines.append(
            f"✗ {len(failing)} of {len(verdicts)} pod template(s) fit no pool of stack "
            f"{stack} ({cloud}): {', '.join(failing)}"
        )
    else:
        lines.append(
            f"✓ every pod template ({len(verdicts)}) fits at least one of stack {stack}'s "
            f"{pools} pools ({cloud})"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------- command


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m components fit",
        description="Tell, before anything is deployed, whether each pod template in MANIFEST "
        "would schedule on STACK's GPU pools and CPU system pool, and every reason it would not "
        "(node selector, required node affinity, taints, GPU/CPU/memory requests, and the "
        "cluster autoscaler's view of pools at zero nodes).",
        epilog="Objects of kinds that run no pods (Namespace, Service, ConfigMap, Secret, RBAC, "
        "PriorityClass, ...) are skipped and named on stderr. Exit status: 0 every pod template "
        "fits at least one pool, 1 one does not, 2 bad input (unreadable YAML, a kind fit does not "
        "know, or resources the API server would reject, such as nvidia.com/gpu: 0.5 or a GPU "
        "request without an equal limit; every problem is listed).",
    )
    parser.add_argument(
        "stack", metavar="STACK", help="stack name in stacks/ or path to a stack YAML"
    )
    parser.add_argument(
        "manifest",
        metavar="MANIFEST",
        help="YAML file of Pods, Deployments, StatefulSets, Jobs, CronJobs, DaemonSets or a bare "
        "pod spec; - reads standard input",
    )
    parser.add_argument("--json", action="store_true", help="print one stable JSON document")
    parser.add_argument(
        "--skip-other-kinds",
        action="store_true",
        help="also skip objects of kinds fit does not know (custom resources such as "
        "RayCluster or PyTorchJob), which are otherwise bad input; their pods are not checked",
    )
    add_image_gb_option(parser)
    return parser


def _read_manifest(ref: str) -> str:
    if ref == "-":
        return sys.stdin.read()
    try:
        return Path(ref).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise WorkloadError(f"cannot read manifest {ref}: {error}") from None


def _report_problems(where: str, manifest: Manifest) -> None:
    """Every problem of the manifest on stderr: one line for one, a list for several."""
    problems = manifest.problems
    if len(problems) == 1:
        print(f"error: {where}: {problems[0]}", file=sys.stderr)
    else:
        print(
            f"error: {where}: {len(problems)} problems; no pod template was checked:",
            file=sys.stderr,
        )
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
    if manifest.unknown_kinds:
        print(
            f"hint: --skip-other-kinds skips objects of kinds fit does not know "
            f"({', '.join(manifest.unknown_kinds)}); their pods are then not checked",
            file=sys.stderr,
        )


def _report_skipped(manifest: Manifest) -> None:
    """Name the objects that hold no pod template fit checks (stderr keeps `--json` valid)."""
    no_pods = [str(item) for item in manifest.skipped if item.known]
    unknown = [str(item) for item in manifest.skipped if not item.known]
    if no_pods:
        noun = "object that runs" if len(no_pods) == 1 else "objects that run"
        print(f"note: skipped {len(no_pods)} {noun} no pods: {', '.join(no_pods)}", file=sys.stderr)
    if unknown:
        noun, its = ("object", "its") if len(unknown) == 1 else ("objects", "their")
        print(
            f"note: skipped {len(unknown)} {noun} of a kind fit does not know "
            f"(--skip-other-kinds); {its} pods, if any, were not checked: {', '.join(unknown)}",
            file=sys.stderr,
        )


def main(argv: Sequence[str]) -> int:
    options = _parser().parse_args(list(argv))
    stack, config = load_validated(options.stack)
    where = "standard input" if options.manifest == "-" else options.manifest
    try:
        manifest = read_workloads(
            _read_manifest(options.manifest), skip_unknown_kinds=options.skip_other_kinds
        )
    except WorkloadError as error:
        print(f"error: {where}: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if manifest.problems:
        _report_problems(where, manifest)
        return EXIT_BAD_INPUT
    _report_skipped(manifest)
    templates = list(manifest.templates)

    try:
        checks = stack_pool_checks(stack, config)
    except Exception as error:  # planning runs the whole Pulumi program: report, no traceback
        print(
            f"error: cannot plan stack {stack.name} to read its auto scaling groups' "
            f"node-template tags: {type(error).__name__}: {error}",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    verdicts = fit_templates(templates, checks, config)
    starts = pool_cold_starts(config, options.image_gb, clock_today())
    verdicts = with_waits(verdicts, starts)
    if options.json:
        print(json.dumps(to_json(stack.name, config.cloud, verdicts), indent=2))
    else:
        print(render_text(stack.name, config.cloud, verdicts))
    return EXIT_OK if all(verdict.fits for verdict in verdicts) else EXIT_FAILED
