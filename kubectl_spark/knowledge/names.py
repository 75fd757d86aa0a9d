"""What Kubernetes accepts as a name, checked before a name becomes part of a request path."""

from __future__ import annotations

import re

_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
LABEL_MAX = 63  # apimachinery validation.DNS1123LabelMaxLength


def is_namespace_name(text: str) -> bool:
    """A namespace name is an RFC 1123 label (apimachinery ``IsDNS1123Label``)."""
    return len(text) <= LABEL_MAX and _LABEL.fullmatch(text) is not None


def shown(text: str, limit: int = 80) -> str:
    """A name someone typed, cut for an error line (a 100,000-character one stays one line)."""
    return text if len(text) <= limit else text[:limit] + "…"
