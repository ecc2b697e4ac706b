"""Every cloud gpufleet knows, in one place.

Adding a cloud: its folder `components/<name>/` (a `Cloud` in `model/cloud.py` whose
`resource_knowledge` (`model/resources.py`) says what its resource types mean to `diff`, `plan`,
the Mermaid chart and `fit`, and names its `mock.py`; its `stack.py`) and one line here. Not
yet reached through here: `new`'s per-cloud flags (`components/tooling/new_stack.py`), and the
policy pack's own copy of the type tokens (`policy/gpufleet_policy/resources.py`), which runs
without gpufleet's program.
"""

from __future__ import annotations

from collections.abc import Mapping

from components.aws.model.cloud import AWS
from components.azure.model.cloud import AZURE
from components.existing.model.cloud import EXISTING
from components.gcp.model.cloud import GCP
from components.model.catalog.gpus import MachineType
from components.model.cloud import Cloud
from components.model.schema import StackConfig

CLOUDS: Mapping[str, Cloud] = {cloud.name: cloud for cloud in (GCP, AWS, AZURE, EXISTING)}


def cloud_named(name: str) -> Cloud:
    """The cloud of a validated config's `cloud` key."""
    return CLOUDS[name]


def cloud_of(config: StackConfig) -> Cloud:
    return CLOUDS[config.cloud]


def software_platform(config: StackConfig) -> Cloud:
    """The cloud whose Kubernetes distribution the stack's GPU software is configured for: the
    stack's own cloud, or on an existing cluster the one its `distribution` names (a generic
    cluster gets no distribution presets)."""
    distribution = cloud_of(config).software_distribution(config)
    by_distribution = {cloud.distribution: cloud for cloud in CLOUDS.values()}
    return by_distribution.get(distribution, cloud_of(config))


def all_machine_types() -> list[MachineType]:
    """Every GPU machine type of every cloud's catalog (for machine names on existing clusters)."""
    return [machine for cloud in CLOUDS.values() for machine in cloud.catalog.rows]
