"""Shell completion in cobra's ``__complete`` protocol, which kubectl uses for plugins.

kubectl runs ``kubectl_complete-spark <args…> <word>`` (an empty last argument for an empty
word); the answer is one candidate per line, optionally ``value<TAB>description``, then a last
line ``:<directive>`` (4: no file completion). Cluster lookups (namespaces, applications,
attempts, executors) use a short timeout and print nothing on any error.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from kubectl_spark.cli.command_flags import FLAGS  # written ahead from the tree: no typer
from kubectl_spark.command_table import HELP

NO_FILE = 4
VALUE_FLAGS = {
    "-n",
    "--namespace",
    "--context",
    "--cluster",
    "--user",
    "--kubeconfig",
    "--request-timeout",
    "-s",
    "--server",
    "--token",
    "--as",
    "--as-group",
    "--as-uid",
    "-v",
    "--v",
    "-o",
    "--output",
    "-l",
    "--selector",
    "--group-by",
    "--sort-by",
    "--field-selector",
    "-L",
    "--label-columns",
    "--scenario",
    "--speed",
    "--port",
    "--tail",
    "--since",
    "-c",
    "--container",
    "--allow",
    "--dry-run",
    "--history-db",
    "--color",
}
GLOBAL_FLAGS = (
    "--kubeconfig",
    "--context",
    "--cluster",
    "--user",
    "-n",
    "--namespace",
    "-A",
    "--all-namespaces",
    "--all-contexts",
    "--request-timeout",
    "--server",
    "--token",
    "--insecure-skip-tls-verify",
    "--as",
    "--as-group",
    "--as-uid",
    "--v",
    "--history-db",
    "--no-history",
    "--color",
)
APP_COMMANDS = {"describe", "history", "events", "resubmit"}
ATTEMPT_COMMANDS = {"fence", "unfence", "force-kill"}
OUTPUTS = {
    "ls": ("wide", "json", "yaml", "name"),
    "describe": ("json", "yaml"),
    "history": ("json", "yaml"),
    "events": ("json", "yaml"),
    "version": ("json", "yaml"),
}
TIMEOUT = 2.0


def _cluster_apps(preceding: list[str]) -> Any:
    import dataclasses

    from kubectl_spark.app.session import connect
    from kubectl_spark.app.view import applications
    from kubectl_spark.cli import globals as cli_globals
    from kubectl_spark.cli.common import connection

    options, _ = cli_globals.split(preceding)
    cli_globals.use(options)
    conn = dataclasses.replace(connection(), request_timeout=TIMEOUT)
    with connect(conn) as api:
        return applications(api, None if options.all_namespaces else api.namespace)


def _namespaces(preceding: list[str]) -> list[str]:
    import dataclasses

    from kubectl_spark.app.session import namespace_names
    from kubectl_spark.cli import globals as cli_globals
    from kubectl_spark.cli.common import connection

    options, _ = cli_globals.split([w for w in preceding if w not in ("-n", "--namespace")])
    cli_globals.use(options)
    return namespace_names(dataclasses.replace(connection(), request_timeout=TIMEOUT))


def _contexts(kind: str, preceding: list[str]) -> list[str]:
    import os
    from pathlib import Path

    import yaml

    paths: list[Path] = []
    for i, word in enumerate(preceding):
        if word == "--kubeconfig" and i + 1 < len(preceding):
            paths = [Path(preceding[i + 1])]
        elif word.startswith("--kubeconfig="):
            paths = [Path(word.split("=", 1)[1])]
    if not paths:
        env = os.environ.get("KUBECONFIG")
        paths = (
            [Path(p) for p in env.split(os.pathsep) if p]
            if env
            else [Path.home() / ".kube" / "config"]
        )
    names: list[str] = []
    for path in paths:
        try:
            doc = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError):
            continue
        names += [
            str(item.get("name"))
            for item in doc.get(kind) or []
            if isinstance(item, dict) and item.get("name")
        ]
    return sorted(dict.fromkeys(names))


def candidates(words: list[str]) -> tuple[list[str], int]:
    """The completions for ``words`` (the last one is being completed)."""
    *preceding, current = words or [""]
    previous = preceding[-1] if preceding else ""
    subcommand, positional = _parsed(preceding)
    if previous in VALUE_FLAGS:
        return _flag_values(previous, subcommand, preceding)
    if current.startswith("-"):
        flags = FLAGS.get(subcommand, []) if subcommand else []
        return [*flags, *GLOBAL_FLAGS, "--help"], NO_FILE
    if not subcommand:
        return [f"{name}\t{help_}" for name, help_ in HELP.items()], NO_FILE
    if positional:
        return [], NO_FILE
    return _arguments(subcommand, current, preceding), NO_FILE


def _parsed(preceding: list[str]) -> tuple[str, list[str]]:
    """The subcommand and its arguments so far (flags' values left out)."""
    subcommand = ""
    positional: list[str] = []
    skip = False
    for word in preceding:
        if skip:
            skip = False
            continue
        if word in VALUE_FLAGS:
            skip = True
        elif not word.startswith("-") and not subcommand:
            subcommand = word
        elif not word.startswith("-"):
            positional.append(word)
    return subcommand, positional


def _flag_values(flag: str, subcommand: str, preceding: list[str]) -> tuple[list[str], int]:
    """The values a flag takes (a file for --kubeconfig: the shell completes it)."""
    if flag in ("-n", "--namespace"):
        return _namespaces(preceding), NO_FILE
    if flag in ("--context", "--cluster", "--user"):
        section = {"--context": "contexts", "--cluster": "clusters", "--user": "users"}[flag]
        return _contexts(section, preceding), NO_FILE
    if flag in ("-o", "--output"):
        return list(OUTPUTS.get(subcommand, ())), NO_FILE
    if flag == "--scenario":
        from kubectl_spark.sim.scenario import available

        return ["empty", *available()], NO_FILE
    if flag == "--kubeconfig":
        return [], 0  # file completion
    return [], NO_FILE


def _arguments(subcommand: str, current: str, preceding: list[str]) -> list[str]:
    """An application, attempt or executor reference, from the cluster."""
    if subcommand in APP_COMMANDS:
        return sorted({app.name for app in _cluster_apps(preceding)})
    if subcommand in ATTEMPT_COMMANDS:  # an action names its attempt: no "latest"
        return _attempt_refs(_cluster_apps(preceding), latest=False)
    if subcommand != "logs":
        return []
    apps = _cluster_apps(preceding)
    parts = current.split("/")
    if len(parts) >= 3:
        return [
            f"{app.name}/{attempt.number}/exec-{e.id}"
            for app in apps
            if app.name == parts[0]
            for attempt in app.attempts
            if str(attempt.number) == parts[1]
            or (parts[1] == "latest" and attempt is app.attempts[-1])
            for e in attempt.executors
        ]
    if len(parts) == 2:
        return _attempt_refs(a for a in apps if a.name == parts[0])
    return sorted({app.name for app in apps})


def _attempt_refs(apps: Iterable[Any], *, latest: bool = True) -> list[str]:
    out = []
    for app in apps:
        for attempt in app.attempts:
            out.append(
                f"{app.name}/{attempt.number}\t{attempt.state}"
                + (f" on {attempt.node}" if attempt.node else "")
            )
        if app.attempts and latest:
            out.append(f"{app.name}/latest\tattempt {app.attempts[-1].number}")
    return out


def run(words: list[str]) -> int:
    """Print the candidates that start with the word being completed, then the directive."""
    current = words[-1] if words else ""
    try:
        found, directive = candidates(words)
    except Exception:  # noqa: BLE001 - completion never fails loudly (no cluster, no permission, …)
        found, directive = [], NO_FILE
    lines = [c for c in found if c.split("\t", 1)[0].startswith(current)]
    sys.stdout.write("".join(f"{line}\n" for line in lines) + f":{directive}\n")
    return 0
