"""The emulator's access policies the permission tests grant: a tenant held to its namespace,
an on-call user denied some verbs."""

from __future__ import annotations

from typing import Any

WRITES = ["create", "update", "patch", "delete", "deletecollection"]


def tenant(user: str, namespace: str = "default") -> dict[str, Any]:
    """A policy for a tenant: everything in its namespace, nothing else (no nodes, no volumes)."""
    return {
        "rules": [
            REVIEWS,
            {"effect": "allow", "users": [user], "namespaces": [namespace]},
            {"effect": "deny", "users": [user]},
        ]
    }


def deny(verbs: list[str], resources: list[str]) -> dict[str, Any]:
    return {
        "rules": [
            REVIEWS,
            {"effect": "deny", "users": ["oncall"], "verbs": verbs, "resources": resources},
        ]
    }


# Everyone may ask what they may do (RBAC's system:basic-user); first matching rule wins.
REVIEWS = {"effect": "allow", "verbs": ["create"], "resources": ["selfsubjectaccessreviews"]}
