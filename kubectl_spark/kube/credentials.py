"""The kubeconfig user's credentials, checked here before a request is made.

The Kubernetes client finds out late and says it badly: a missing credential plugin becomes a
"401 Unauthorized" from the server (it logs the error and goes on without credentials); a bad
client key becomes "[SSL] PEM lib" at the first connection, which a read would retry. On a
terminal it lets a plugin write to it, which a full-screen TUI cannot have. Each is said here
once, as what it is, naming the kubeconfig field and never its content.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kubectl_spark import errors


def check_plugin(user: dict[str, Any], user_name: str) -> None:
    """A credential plugin that is not installed, said as kubectl says it.

    client-go resolves a bare command on PATH (``exec.go``: "executable … not found") and
    prints the kubeconfig's ``installHint`` after it.
    """
    plugin = user.get("exec")
    if not isinstance(plugin, dict):
        return
    command = plugin.get("command")
    if not isinstance(command, str) or not command:
        raise errors.ConfigError(f'the kubeconfig user "{user_name}": exec has no command')
    if "/" in command and not Path(command).is_absolute():
        return  # relative to the kubeconfig's folder: the client resolves it there
    found = shutil.which(command) if "/" not in command else command
    if found is None or not Path(found).is_file():
        hint = plugin.get("installHint")
        raise errors.ConfigError(
            f'the kubeconfig user "{user_name}": its credential plugin "{command}" was not '
            "found (it looks like a client-go credential plugin that is not installed)",
            hint=hint.strip() if isinstance(hint, str) and hint.strip() else None,
        )


@contextlib.contextmanager
def plugin_quiet(user: dict[str, Any], *, interactive: bool) -> Iterator[None]:
    """Keep a credential plugin off the terminal unless it may talk to the user.

    The Kubernetes client hands a plugin the terminal when stdout is one (its
    ``ExecProvider.run``); its stderr is then written over whatever is on screen. Seen as not
    a terminal, the plugin's stderr is captured and comes back in the error. kubectl's
    ``interactiveMode: Never`` says the same.
    """
    plugin = user.get("exec")
    never = isinstance(plugin, dict) and plugin.get("interactiveMode") == "Never"
    if interactive and not never:
        yield
        return
    with contextlib.redirect_stdout(io.StringIO()):
        yield


def check_tls_material(configuration: Any, user: dict[str, Any], user_name: str) -> None:
    """A client certificate or key, or a CA, that cannot be loaded: named, before connecting."""
    cert, key = configuration.cert_file, configuration.key_file
    who = f'the kubeconfig user "{user_name}"'
    if cert:
        _load(
            lambda c: c.load_verify_locations(cafile=cert),
            f"{who}: {_field(user, 'client-certificate')} is not a PEM certificate",
        )
    if cert and key:
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_cert_chain(cert, key)
        except ssl.SSLError as exc:
            if "KEY_VALUES_MISMATCH" in str(exc):
                raise errors.ConfigError(
                    f"{who}: {_field(user, 'client-certificate')} and "
                    f"{_field(user, 'client-key')} do not belong together"
                ) from None
            raise errors.ConfigError(
                f"{who}: {_field(user, 'client-key')} is not a PEM private key (or it is encrypted)"
            ) from None
        except OSError as exc:
            raise errors.ConfigError(f"{who}: cannot read its client key: {exc.strerror}") from None
    ca = configuration.ssl_ca_cert
    if ca and configuration.verify_ssl:
        _load(
            lambda c: c.load_verify_locations(cafile=ca),
            "the kubeconfig cluster's certificate-authority is not a PEM certificate",
        )


def _load(load: Any, said: str) -> None:
    try:
        load(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
    except (ssl.SSLError, ValueError):
        raise errors.ConfigError(said) from None
    except OSError as exc:
        raise errors.ConfigError(
            f"{said.split(' is not ', maxsplit=1)[0]}: {exc.strerror}"
        ) from None


def _field(user: dict[str, Any], name: str) -> str:
    """The kubeconfig field the material came from: ``name-data`` or ``name`` (a file)."""
    return f"{name}-data" if user.get(f"{name}-data") else name
