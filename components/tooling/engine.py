"""The offline engine: run the real `__main__.py` under Pulumi's mock runtime and record the graph.

No Pulumi CLI, no credentials. Every resource registration is captured with its parent,
provider, dependencies, inputs (secrets masked) and options, so the result is what `pulumi up`
would be asked to create. The provider SDKs validate argument names and types as they do for
real, so a wrong argument fails here too.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import runpy
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import yaml
from google.protobuf import json_format
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.config import set_all_config
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from components.mock_world import NotFound, World
from components.model import cold_start, cold_start_estimate, existing_cluster
from components.model import config as model_config
from components.model.config_hints import SECRET_ONLY_KEYS
from components.model.cost import stack_cost
from components.model.registry import CLOUDS
from components.model.schema import ClusterConfig, StackConfig
from components.tooling import mockcloud
from components.tooling.commands import BadInput
from components.tooling.stacks import PROGRAM, PROJECT, PROJECT_DIR, StackFile

SECRET = "[secret]"
UNKNOWN = "[unknown]"
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
_RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
_SIG_KEY = "4dabf18193072939515e22adb298388d"
_UNKNOWN_VALUE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


@dataclass(frozen=True)
class RecordedResource:
    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    provider: str | None
    dependencies: tuple[str, ...]
    inputs: Mapping[str, Any]
    protect: bool
    ignore_changes: tuple[str, ...]
    delete_before_replace: bool
    depends_on: tuple[str, ...]
    replace_on_changes: tuple[str, ...] = ()
    # Left in the cloud (or cluster) when Pulumi deletes it from the stack.
    retain_on_delete: bool = False
    # A Kubernetes provider's kubeconfig is a secret, masked in `inputs`; what pulumi-kubernetes
    # compares of it (the active cluster) is kept visible here, fingerprinted (see
    # `kubeconfig_active_cluster`), so `diff` can tell whether the provider is replaced.
    kubeconfig_active_cluster: Mapping[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        extra = (
            {"kubeconfigActiveCluster": dict(self.kubeconfig_active_cluster)}
            if self.kubeconfig_active_cluster is not None
            else {}
        )
        return {
            **extra,
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "custom": self.custom,
            "provider": self.provider,
            "dependencies": sorted(self.dependencies),
            "inputs": self.inputs,
            "options": {
                "protect": self.protect,
                "ignoreChanges": sorted(self.ignore_changes),
                "deleteBeforeReplace": self.delete_before_replace,
                "replaceOnChanges": sorted(self.replace_on_changes),
                "dependsOn": sorted(self.depends_on),
                # Only when set, so the recorded graphs of everything else stay as they were.
                **({"retainOnDelete": True} if self.retain_on_delete else {}),
            },
        }


@dataclass
class Plan:
    """What `pulumi up` would create for one stack."""

    project: str
    stack: str
    resources: list[RecordedResource]
    outputs: dict[str, Any]
    # What the program logged with pulumi.log.warn, in the order it did: its config's warnings,
    # its placeholders and its own (an adopted cluster's, the samples', ...).
    warnings: list[str] = field(default_factory=list)
    # URNs of the resources that called register_outputs (every component must, last).
    outputs_registered: frozenset[str] = frozenset()
    # URNs of components a provider implements (remote=True, such as pulumi-kubernetes'
    # yaml/v2 ConfigFile): the provider registers their outputs, which Pulumi's mocks never do.
    remote_components: frozenset[str] = frozenset()
    # What the stack costs idle and at full scale (`components.model.cost`), as JSON.
    cost: dict[str, Any] | None = None
    # How many of a resource type the cloud holds at once (Cloud.concurrent_limits), for
    # `diff`'s check of what an `up` holds before it deletes.
    limits: dict[str, Any] = field(default_factory=dict)
    # Each GPU pool's first-pod wait from zero (`components.model.cold_start`), as JSON.
    cold_start: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        document = {
            "project": self.project,
            "stack": self.stack,
            "resources": [r.to_json() for r in sorted(self.resources, key=lambda r: r.urn)],
            "outputs": _sorted(self.outputs),
            "warnings": self.distinct_warnings(),
        }
        if self.cost is not None:
            document["cost"] = self.cost
        if self.limits:
            document["limits"] = self.limits
        if self.cold_start is not None:
            document["coldStart"] = self.cold_start
        return document

    def distinct_warnings(self) -> list[str]:
        """Every warning the program logged (its config's, its placeholders' and its own, as
        `pulumi preview` prints them), each once, sorted: some are logged from callbacks that
        run in no fixed order, and the document must be stable."""
        return sorted(set(self.warnings))

    def of_type(self, type_: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.type == type_]

    def by_urn(self) -> dict[str, RecordedResource]:
        return {r.urn: r for r in self.resources}

    def children(self, urn: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.parent == urn]


class _Mocks(pulumi.runtime.Mocks):
    def __init__(self, world: World) -> None:
        self.world = world

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict]:
        return mockcloud.resource_state(args.typ, args.name, args.inputs, self.world)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list[tuple[str, str]]]:
        # Pulumi iterates the failures list: None crashes every invoke (e.g. an SSM look-up).
        try:
            return mockcloud.call_result(args.token, args.args, self.world), []
        except NotFound as missing:
            return {}, [("", str(missing))]


class _RecordingMonitor(pulumi_mocks.MockMonitor):
    """A mock monitor that also keeps each registration request (parent, deps, options)."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.recorded: list[RecordedResource] = []
        self.outputs_registered: set[str] = set()
        self.remote_components: set[str] = set()
        self._lock = threading.Lock()

    def RegisterResourceOutputs(self, request: Any) -> Any:
        with self._lock:
            self.outputs_registered.add(request.urn)
        return super().RegisterResourceOutputs(request)

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type == "pulumi:pulumi:Stack":
            return response
        property_deps: set[str] = set()
        for deps in request.propertyDependencies.values():
            property_deps.update(deps.urns)
        dependencies = tuple(request.dependencies)
        raw_inputs = json_format.MessageToDict(request.object, preserving_proto_field_name=True)
        record = RecordedResource(
            urn=response.urn,
            type=request.type,
            name=request.name,
            parent=request.parent or None,
            custom=bool(request.custom),
            provider=request.provider or None,
            dependencies=dependencies,
            inputs=_clean(raw_inputs),
            protect=bool(request.protect),
            ignore_changes=tuple(request.ignoreChanges),
            delete_before_replace=bool(request.deleteBeforeReplace),
            depends_on=tuple(d for d in dependencies if d not in property_deps),
            replace_on_changes=tuple(request.replaceOnChanges),
            retain_on_delete=bool(request.retainOnDelete),
            kubeconfig_active_cluster=(
                kubeconfig_active_cluster(raw_inputs)
                if request.type == "pulumi:providers:kubernetes"
                else None
            ),
        )
        with self._lock:
            self.recorded.append(record)
            if request.remote:
                self.remote_components.add(response.urn)
        return response


class _WarningCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def plan_stack(
    stack: StackFile,
    config_overrides: Mapping[str, Any] | None = None,
    world: World | None = None,
    image_gb: float = cold_start.DEFAULT_IMAGE_GB,
) -> Plan:
    """Run the Pulumi program for `stack` under mocks and return the recorded graph.

    `config_overrides` replaces whole config keys (e.g. {"gpufleet:gpuPools": [...]}), which the
    tests and the benchmark use to vary a shipped stack; an override of a key gpufleet takes
    only encrypted (`gpufleet:kubeconfig`) is set as `pulumi config set --secret` would. `world`
    is what the mock cloud answers about a cluster the stack adopts; by default, the cluster is
    as the stack describes it. `image_gb` is the image size the cold-start estimate pulls.
    """
    overrides = config_overrides or {}
    config = {**stack.config, **overrides}
    secret_overrides = {f"{PROJECT}:{key}" for key in SECRET_ONLY_KEYS} & set(overrides)
    flat = {
        key: value if isinstance(value, str) else json.dumps(value)
        for key, value in config.items()
        if key not in stack.secret_keys
    }
    if str(PROJECT_DIR) not in sys.path:
        sys.path.insert(0, str(PROJECT_DIR))

    pulumi_settings.reset_options(project=PROJECT, stack=stack.name)
    set_all_config(flat, secret_keys=sorted(secret_overrides))
    described = described_world(config)
    if world is not None and world.region is None:
        world = dataclasses.replace(world, region=described.region)
    mocks = _Mocks(world or described)
    monitor = _RecordingMonitor(mocks)
    logger = logging.getLogger(f"gpufleet.plan.{stack.name}")
    logger.propagate = False
    collector = _WarningCollector()
    logger.handlers = [collector]
    pulumi.runtime.set_mocks(
        mocks, project=PROJECT, stack=stack.name, preview=False, monitor=monitor, logger=logger
    )

    def program() -> None:
        runpy.run_path(str(PROGRAM), run_name="__main__")

    try:
        _sync_await(run_pulumi_func(program))
    except pulumi.RunError as error:
        # What `pulumi up` would print and stop on, before creating anything: the program's
        # refusal (a looked-up cluster that cannot take the pools) is the stack's bad input.
        raise BadInput(f"{stack.path}: {error}") from None
    root = pulumi_settings.get_root_resource()
    outputs = _sync_await(_resolve_outputs(getattr(root, "outputs", {})))
    ran_with = _ran_with(config, stack.secret_keys | secret_overrides)
    return Plan(
        project=PROJECT,
        stack=stack.name,
        resources=sorted(monitor.recorded, key=lambda r: r.urn),
        outputs=outputs,
        warnings=collector.messages,
        outputs_registered=frozenset(monitor.outputs_registered),
        remote_components=frozenset(monitor.remote_components),
        cost=stack_cost(ran_with, model_config.clock_today()).to_json(),
        limits=_limits(ran_with),
        cold_start=cold_start_estimate.to_json(
            cold_start_estimate.pool_cold_starts(ran_with, image_gb, model_config.clock_today()),
            image_gb,
        ),
    )


def _ran_with(config: Mapping[str, Any], secret_keys: frozenset[str]) -> StackConfig:
    """The config the program just ran with (valid, or it would have stopped), less secrets."""
    prefix = f"{PROJECT}:"
    keys = {
        key[len(prefix) :]: value
        for key, value in config.items()
        if key.startswith(prefix) and key not in secret_keys
    }
    return model_config.parse_config(keys, model_config.clock_today())


def _limits(config: StackConfig) -> dict[str, Any]:
    """The cloud's limits on what it holds at once (Cloud.concurrent_limits)."""
    return CLOUDS[config.cloud].concurrent_limits(config.cluster)


def described_world(config: Mapping[str, Any]) -> World:
    """The cloud as the stack describes it: its region, and an adopted cluster running (a patch
    of) its minor. A stack that creates its cluster plans its first `up`: the cluster does not
    exist yet."""
    stack = {
        key.split(":", 1)[1]: _parsed(value)
        for key, value in config.items()
        if key.startswith(f"{PROJECT}:")
    }
    cluster = stack.get("cluster")
    minor = cluster.get("kubernetesVersion") if isinstance(cluster, Mapping) else None
    if not isinstance(minor, str):
        minor = ClusterConfig.model_fields["kubernetes_version"].default
    adopts = isinstance(cluster, Mapping) and existing_cluster.SECTION in cluster
    region = cluster.get("region") if isinstance(cluster, Mapping) else None
    return World(
        kubernetes_version=f"{minor}.3",
        exists=adopts,
        region=region if isinstance(region, str) else None,
        stack=stack,
    )


def _parsed(value: Any) -> Any:
    """A config value as the program reads it (Pulumi hands over structured values as JSON)."""
    if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def kubeconfig_active_cluster(raw_inputs: Mapping[str, Any]) -> dict[str, str] | None:
    """What pulumi-kubernetes compares of a provider's kubeconfig, without its secrets.

    Its DiffConfig replaces the provider when the *active cluster* of the kubeconfig changes: the
    `clusters[]` entry of the current context (or of the `context`/`cluster` inputs), compared
    whole (pulumi/pulumi-kubernetes provider/pkg/provider/provider.go DiffConfig,
    provider/pkg/provider/util.go getActiveClusterFromConfig). Kept: the entry's `server` and a
    sha256 of the whole entry (CA data included), so a changed CA shows without the CA itself.
    None without a kubeconfig (the ambient one) or when it is not a readable document.
    """
    raw = raw_inputs.get("kubeconfig")
    if isinstance(raw, Mapping) and raw.get(_SIG_KEY) == _SECRET_SIG:
        raw = raw.get("value")
    if not isinstance(raw, str) or raw == _UNKNOWN_VALUE:
        return None
    try:
        document = yaml.safe_load(raw)
    except yaml.YAMLError:
        return None
    if not isinstance(document, Mapping):
        return None

    def named(section: str, name: Any) -> Mapping[str, Any] | None:
        for entry in document.get(section) or []:
            if isinstance(entry, Mapping) and entry.get("name") == name:
                found = entry.get(section[:-1])
                return found if isinstance(found, Mapping) else None
        return None

    context = named("contexts", raw_inputs.get("context") or document.get("current-context"))
    cluster_name = raw_inputs.get("cluster") or (context or {}).get("cluster")
    cluster = named("clusters", cluster_name)
    if cluster is None:
        return None
    digest = hashlib.sha256(json.dumps(cluster, sort_keys=True).encode()).hexdigest()
    return {"server": str(cluster.get("server", "")), "sha256": digest[:16]}


async def _resolve_outputs(outputs: Mapping[str, Any]) -> dict[str, Any]:
    resolved: dict[str, Any] = {}
    for name, value in outputs.items():
        output = pulumi.Output.from_input(value)
        if await output.is_secret():
            resolved[name] = SECRET
        else:
            resolved[name] = _clean(await output.future())
    await asyncio.sleep(0)
    return resolved


def _clean(value: Any) -> Any:
    """Plain JSON: secrets masked, unknowns marked, resource references as URNs."""
    if isinstance(value, Mapping):
        sig = value.get(_SIG_KEY)
        if sig == _SECRET_SIG:
            return SECRET
        if sig == _RESOURCE_SIG:
            return value.get("urn", UNKNOWN)
        return {str(k): _clean(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if value == _UNKNOWN_VALUE:
        return UNKNOWN
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value
