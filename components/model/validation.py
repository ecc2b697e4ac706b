"""Section values -> typed models, with every pydantic error turned into a `Problem`.

`validate_section` also salvages what it can: when a section has errors, the keys at fault are
left out (required ones get a placeholder) and the rest is validated again, so the cross-field
checks still run on everything the user got right. Problems those checks would raise about the
left-out keys are not trustworthy, so the caller drops them (`Salvaged.covers`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from components.model.problems import Problem


@dataclass(frozen=True)
class Salvaged:
    """A section's model (None: nothing usable) and the key paths it could not take as given."""

    model: Any
    unreadable: tuple[str, ...] = ()

    def covers(self, problem: Problem) -> bool:
        """Whether `problem` is about a key that was left out or replaced by a placeholder."""
        return any(
            problem.path == path
            or problem.path.startswith((f"{path}.", f"{path}["))
            or re.search(rf"{re.escape(path)}\b", problem.message) is not None
            for path in self.unreadable
        )


def validate_section(model: Any, value: Any, path: str, problems: list[Problem]) -> Salvaged:
    """`model` from `value`; every error becomes a problem, and what is valid is kept."""
    try:
        return Salvaged(model.model_validate(value))
    except ValidationError as error:
        details = error.errors()
        problems.extend(_problem(model, path, detail) for detail in details)
    if not isinstance(value, Mapping):
        return Salvaged(None)
    bad = {str(detail["loc"][0]) for detail in details if detail["loc"]}
    kept = {key: item for key, item in value.items() if key not in bad}
    placeholders = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        if field.is_required() and key not in kept:
            kept[key] = ""
            placeholders.append(key)
    try:
        salvaged = model.model_validate(kept)
    except ValidationError:
        return Salvaged(None)
    return Salvaged(salvaged, tuple(f"{path}.{key}" for key in sorted({*bad, *placeholders})))


def _problem(model: Any, path: str, detail: Any) -> Problem:
    loc = render_loc(path, detail["loc"])
    if detail["type"] == "extra_forbidden":
        key = str(detail["loc"][-1])
        allowed = allowed_keys(model, detail["loc"][:-1])
        hint = _did_you_mean(key, allowed)
        return Problem(
            loc, f"unknown key; allowed here: {', '.join(allowed)}{hint}", has_value=False
        )
    if detail["type"] == "missing":
        return Problem(loc, "is required", has_value=False)
    value = detail.get("input")
    key_type_error = detail["type"] == "invalid_key" or (
        detail["type"] == "string_type" and detail["loc"] and detail["loc"][-1] == "[key]"
    )
    if key_type_error:
        # A mapping key YAML read as a number, date or boolean.
        trim = 1 if detail["type"] == "invalid_key" else 2
        key_path = render_loc(path, detail["loc"][:-trim])
        return Problem(
            key_path,
            f"keys must be strings: quote {value!r} if it is meant as text",
            has_value=False,
        )
    if (
        detail["type"] == "string_type"
        and isinstance(value, int | float)
        and not isinstance(value, bool)
    ):
        # YAML reads 1.30 as the number 1.3: say so, rather than "valid string (got 1.3)".
        return Problem(
            loc,
            f"must be a string: quote it (YAML reads an unquoted {value!r} as a number)",
            value,
        )
    return Problem(loc, detail["msg"], value)


def _did_you_mean(key: str, allowed: Sequence[str]) -> str:
    """`; did you mean minNodes?` for min_nodes, MinNodes or a near miss (else "")."""
    camel = to_camel(key) if "_" in key or "-" in key else key
    for candidate in allowed:
        if candidate in (camel, camel[:1].lower() + camel[1:]) or candidate.lower() == key.lower():
            return f"; did you mean {candidate}?"
    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.8)
    return f"; did you mean {close[0]}?" if close else ""


def render_loc(path: str, loc: Iterable[int | str]) -> str:
    rendered = path
    for part in loc:
        rendered += f"[{part}]" if isinstance(part, int) else f".{part}"
    return rendered


def allowed_keys(model: Any, loc: Sequence[int | str]) -> list[str]:
    """The camelCase keys a model accepts at `loc` (for 'unknown key' messages)."""
    current = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = next(
            (f for n, f in current.model_fields.items() if (f.alias or n) == part or n == part),
            None,
        )
        if field is None:
            return []
        annotation = field.annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        nested = [c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)]
        if not nested:
            # list[Model] / Model | None
            for candidate in candidates:
                for arg in getattr(candidate, "__args__", ()):
                    if isinstance(arg, type) and issubclass(arg, BaseModel):
                        nested.append(arg)
        if not nested:
            return []
        current = nested[0]
    return sorted(f.alias or n for n, f in current.model_fields.items())
