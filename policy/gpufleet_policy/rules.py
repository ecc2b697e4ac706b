"""Turn a pure check into a CrossGuard validate function, one way for every policy."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pulumi_policy import (
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    StackValidationArgs,
)

ResourceCheck = Callable[[str, Mapping[str, Any]], list[str]]
StackCheck = Callable[[Sequence[PolicyResource]], list[tuple[str, str | None]]]


def resource_rule(
    check: ResourceCheck,
) -> Callable[[ResourceValidationArgs, ReportViolation], None]:
    """Each message of `check(type, props)` is a violation of the resource."""

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        for message in check(args.resource_type, args.props):
            report_violation(message, None)

    validate.__doc__ = check.__doc__
    return validate


def stack_rule(check: StackCheck) -> Callable[[StackValidationArgs, ReportViolation], None]:
    """Each (message, urn) of `check(resources)` is a violation (of the stack when urn is None)."""

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        for message, urn in check(args.resources):
            report_violation(message, urn)

    validate.__doc__ = check.__doc__
    return validate
