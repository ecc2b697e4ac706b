"""Graph snapshots: the committed, reviewable text of each shipped stack's plan.

A snapshot is exactly what `python -m components plan STACK --json` prints: resources sorted by
URN, keys sorted, secrets masked as "[secret]". One resource's block stays together, so a change
to the program shows in a pull request as a line diff of the resources and properties it
touches. `tests/test_snapshots.py` compares them; `pytest tests/test_snapshots.py
--snapshot-update` rewrites them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from components.tooling.engine import SECRET, Plan

# Property names that hold credentials whenever they hold a string (kubeconfigs, passwords,
# tokens, keys). `httpTokens` or `automountServiceAccountToken` do not end in these words.
SENSITIVE_KEY = re.compile(
    r"(?i)(kubeconfig|password|secret|privatekey|accesskey|secretkey|token|connectionstring)$"
)


def snapshot_text(plan: Plan) -> str:
    """The plan as stable JSON text, byte for byte what `plan STACK --json` prints (plus newline)."""
    return json.dumps(plan.to_json(), indent=2, sort_keys=True) + "\n"


def unmasked_secrets(document: Any, path: str = "$") -> list[str]:
    """JSON paths of string values under credential-like keys that are not masked."""
    found: list[str] = []
    if isinstance(document, Mapping):
        for key, value in document.items():
            child = f"{path}.{key}"
            if isinstance(value, str) and SENSITIVE_KEY.search(str(key)) and value != SECRET:
                found.append(child)
            found.extend(unmasked_secrets(value, child))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found.extend(unmasked_secrets(value, f"{path}[{index}]"))
    return found
