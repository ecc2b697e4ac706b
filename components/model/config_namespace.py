"""Config keys whose namespace looks like gpufleet's but is not: a typo that would drop them.

Pulumi hands a program every key of its stack file. A key under `gpuflet:` or `GPUfleet:` is not
gpufleet's, so without this check `gpuflet:gpuPools` plans a cluster with no GPU pools, silently.
Keys of other namespaces (`gcp:project`, `aws:region`, ...) are left alone, whatever their values.
"""

from __future__ import annotations

from collections.abc import Iterable

from components.model.problems import Problem

NAMESPACE = "gpufleet"
# Namespaces this close to ours are typos, not other programs' keys.
MAX_EDITS = 2


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance (insertions, deletions, substitutions, swaps)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, char_b in enumerate(b, start=1):
            cost = 0 if char_a == char_b else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and char_a == b[j - 2] and a[i - 2] == char_b:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def looks_like_ours(namespace: str) -> bool:
    """`gpuflet`, `GPUfleet`, `gpufleet-dev`: a near miss of ours, never ours itself."""
    if namespace == NAMESPACE:
        return False
    lowered = namespace.lower()
    return lowered.startswith(NAMESPACE) or edit_distance(lowered, NAMESPACE) <= MAX_EDITS


def namespace_problems(keys: Iterable[object]) -> list[Problem]:
    """A problem for every `namespace:key` whose namespace is a near miss of `gpufleet`."""
    problems = []
    for full_key in keys:
        if not isinstance(full_key, str) or ":" not in full_key:
            continue
        namespace, _, key = full_key.partition(":")
        if looks_like_ours(namespace):
            problems.append(
                Problem(
                    full_key,
                    f"unknown namespace {namespace!r}; did you mean {NAMESPACE}:{key}?",
                    has_value=False,
                )
            )
    return problems


def unnamespaced_problems(keys: Iterable[object], our_keys: Iterable[str]) -> list[Problem]:
    """A problem for every stack file key without a `namespace:` (Pulumi refuses those)."""
    ours = set(our_keys)
    problems = []
    for key in keys:
        if not isinstance(key, str) or ":" in key:
            continue
        hint = f"did you mean {NAMESPACE}:{key}?" if key in ours else "e.g. gcp:project"
        problems.append(
            Problem(
                key,
                f"a stack file's config keys are `namespace:key`; {hint}",
                has_value=False,
            )
        )
    return problems


def stack_key_problems(keys: Iterable[object], our_keys: Iterable[str]) -> list[Problem]:
    """Every key of a stack file that is meant for gpufleet but would not reach it."""
    keys = list(keys)
    return [*namespace_problems(keys), *unnamespaced_problems(keys, our_keys)]
