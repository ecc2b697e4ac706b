"""Pure-Python kube-scheduler simulator behind `python -m components fit`."""

from components.tooling.scheduling.evaluate import evaluate, fit_pool
from components.tooling.scheduling.model import FitResult, NodeTemplate, PoolView, Taint
from components.tooling.scheduling.workloads import (
    PodTemplate,
    WorkloadError,
    extract_pod_templates,
)

__all__ = [
    "FitResult",
    "NodeTemplate",
    "PodTemplate",
    "PoolView",
    "Taint",
    "WorkloadError",
    "evaluate",
    "extract_pod_templates",
    "fit_pool",
]
