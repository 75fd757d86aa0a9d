"""JSON nested deeper than orjson reads, and how deep an object goes.

kube-apiserver accepts objects nested up to 10,000 levels (``k8s.io/apimachinery`` json's
``maxDepth``), and a custom resource's free-form field (a SparkApplication's pod template)
lets one tenant store one. orjson stops at 1,024 levels, so a single such object would make a
whole list unreadable. The standard library's parser reads it when the recursion limit allows;
the caller then sets that one object aside, by name, and keeps the rest of the list.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any, Final

API_SERVER_DEPTH: Final = 10_000
NOT_JSON: Final = object()  # what ``loads`` returns for text that is not JSON at any depth
_limit_lock = threading.Lock()


def loads(data: bytes) -> Any:
    """Parse JSON of any depth kube-apiserver would store; NOT_JSON when it is not JSON."""
    with _limit_lock:
        before = sys.getrecursionlimit()
        sys.setrecursionlimit(max(before, API_SERVER_DEPTH + 1_000))
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            return NOT_JSON
        finally:
            sys.setrecursionlimit(before)


def deeper_than(value: Any, levels: int) -> bool:
    """Whether objects and arrays nest more than ``levels`` deep (iteratively: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > levels:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
