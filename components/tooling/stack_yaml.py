"""Reading a stack file's YAML the way Pulumi does, and refusing what Pulumi would not read.

PyYAML differs from Pulumi's reader (Go's yaml.v3) in two ways that matter here: it keeps the
last of two equal keys silently (a second `gpufleet:gpuPools:` block drops the first), and it turns
`2026-12-01` into a `datetime.date`. Pulumi refuses the first and keeps the second as text, so
this loader does the same. Everything else that makes a file unreadable (not UTF-8, binary, not a
mapping of string keys) is reported as `UnreadableStack` with the path and what to do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

# Byte order marks of the encodings editors (notably on Windows) save files in.
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class StackFileError(Exception):
    """A stack that cannot be used: missing, unreadable, or not a stack file (exit status 2)."""


class UnreadableStack(StackFileError):
    """A stack file that cannot be read as Pulumi stack YAML."""


class _DuplicateKeys(yaml.YAMLError):
    def __init__(self, duplicates: list[str]) -> None:
        super().__init__("; ".join(duplicates))
        self.duplicates = duplicates


class _StackLoader(yaml.SafeLoader):
    """SafeLoader that keeps dates as text and records every duplicate key with both lines."""

    duplicates: list[str]

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                continue  # SafeLoader reports unhashable keys itself, with their position
            line = key_node.start_mark.line + 1
            if key in first_line:
                self.duplicates.append(
                    f"key {key!r} appears twice in one mapping (lines {first_line[key]} and "
                    f"{line}); YAML keeps only the last, so remove or merge one"
                )
            else:
                first_line[key] = line
        return super().construct_mapping(node, deep=deep)


# Dates stay strings, as in Pulumi's config: remove the implicit timestamp resolver.
_StackLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _looks_like_utf16(data: bytes) -> bool:
    """UTF-16 without a byte order mark: ASCII text with a NUL after (or before) each byte."""
    sample = data[:400]
    return len(sample) >= 4 and (
        sample[1::2].count(0) > len(sample) * 0.4 or sample[0::2].count(0) > len(sample) * 0.4
    )


def _text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UnreadableStack(f"cannot read {path}: {error.strerror or error}") from None
    if data.startswith(_UTF16_BOMS) or _looks_like_utf16(data):
        raise UnreadableStack(
            f"cannot read {path}: it is saved as UTF-16 text; Pulumi reads stack files as UTF-8, "
            "so save it as UTF-8"
        )
    if b"\x00" in data:
        raise UnreadableStack(
            f"cannot read {path}: it holds NUL bytes, so it is binary data, not a YAML stack file"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UnreadableStack(
            f"cannot read {path}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset "
            f"{error.start}); save it as UTF-8"
        ) from None


def yaml_problem(error: yaml.YAMLError) -> str:
    """What is wrong and where, as an editor counts lines (PyYAML counts from 0)."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None)
    context = getattr(error, "context", None)
    if mark is None or problem is None:
        return f"not valid YAML: {error}"
    what = f"{problem} ({context})" if context else problem
    return f"not valid YAML at line {mark.line + 1}, column {mark.column + 1}: {what}"


def read_stack_yaml(path: Path) -> dict[str, Any]:
    """The file's `config:` mapping (`{}` when the file is empty); every key a string."""
    loader = _StackLoader(_text(path))
    loader.name = str(path)  # marks name the file, not "<unicode string>"
    loader.duplicates = []
    try:
        document = loader.get_single_data()
    except yaml.YAMLError as error:
        raise UnreadableStack(f"cannot read {path}: {yaml_problem(error)}") from None
    finally:
        loader.dispose()
    if loader.duplicates:
        lines = "\n".join(f"  - {duplicate}" for duplicate in loader.duplicates)
        raise UnreadableStack(f"cannot read {path}: duplicate keys:\n{lines}")
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise UnreadableStack(
            f"cannot read {path}: a stack file is a YAML mapping with a `config:` mapping, "
            f"got a {type(document).__name__}"
        )
    if "config" not in document:
        raise UnreadableStack(
            f"{path} has no `config:` mapping; a Pulumi stack file holds its settings under it:\n"
            "  config:\n    gpufleet:cloud: gcp\n    gpufleet:cluster:\n      name: ..."
        )
    config = document["config"] or {}
    if not isinstance(config, dict):
        raise UnreadableStack(
            f"cannot read {path}: `config:` must be a mapping of `namespace:key` settings, "
            f"got {config!r}"
        )
    bad_keys = [key for key in config if not isinstance(key, str)]
    if bad_keys:
        raise UnreadableStack(
            f"cannot read {path}: config keys must be `namespace:key` strings (got "
            f"{', '.join(repr(key) for key in bad_keys)}); quote them if they are meant as text"
        )
    return config
