"""A shell in a running container (k9s's ``s``): ``kubectl exec -it``, where RBAC allows it.

The terminal is handed to kubectl, which speaks the API server's exec protocol (SPDY or
WebSocket, with the TTY's resizes) as every operator's other tools do, and the TUI comes back
when the shell ends. The same connection flags the TUI was started with are passed on, so the
shell opens on the very cluster, as the very user, the view shows. The right to exec
(``create pods/exec``) is asked first, so a refusal is one line in the TUI, not a kubectl
error after the screen was given up. The shell is k9s's choice: bash, else sh.
"""

from __future__ import annotations

import shlex
from typing import Any

SHELL = "command -v bash >/dev/null 2>&1 && exec bash || exec sh"
# Connection fields and the kubectl flag each is; booleans are flags without a value.
FLAGS = (
    ("kubeconfig", "--kubeconfig"),
    ("context", "--context"),
    ("cluster", "--cluster"),
    ("user", "--user"),
    ("server", "--server"),
    ("token", "--token"),
    ("impersonate", "--as"),
    ("impersonate_uid", "--as-uid"),
)


def exec_args(connection: Any, namespace: str, pod: str, container: str) -> list[str]:
    """Kubectl's arguments (after the binary) for a shell in ``container`` of ``pod``."""
    args: list[str] = []
    for field, flag in FLAGS:
        value = getattr(connection, field, None)
        if value:
            args += [flag, str(value)]
    for group in getattr(connection, "impersonate_groups", ()) or ():
        args += ["--as-group", group]
    if getattr(connection, "insecure_skip_tls_verify", False):
        args.append("--insecure-skip-tls-verify")
    return [*args, "exec", "-it", "-n", namespace, pod, "-c", container, "--", "sh", "-c", SHELL]


def shown(args: list[str]) -> str:
    """The command as one can paste it, the token (a credential) left out, and said so."""
    safe = list(args)
    if "--token" in safe:
        at = safe.index("--token")
        del safe[at : at + 2]
        return "kubectl " + shlex.join(safe) + " (with your --token)"
    return "kubectl " + shlex.join(safe)
