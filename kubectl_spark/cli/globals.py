"""kubectl's global flags, parsed by the plugin itself, before or after the subcommand.

kubectl passes none of its own flags to a plugin, and users type them anywhere
(``kubectl spark --context x ls`` and ``kubectl spark ls --context x``), so they are taken out of
the argument list here, before typer sees it.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from dataclasses import dataclass, replace

from kubectl_spark.errors import UsageError
from kubectl_spark.knowledge.names import LABEL_MAX, is_namespace_name, shown

VALUE_FLAGS = {
    "--kubeconfig": "kubeconfig",
    "--context": "context",
    "--cluster": "cluster",
    "--user": "user",
    "-n": "namespace",
    "--namespace": "namespace",
    "-s": "server",
    "--server": "server",
    "--token": "token",
    "--as": "impersonate",
    "--as-uid": "impersonate_uid",
    "--request-timeout": "request_timeout",
    "-v": "verbosity",
    "--v": "verbosity",
    "--history-db": "history_db",
    "--history-server": "history_server",
    "--recorder": "recorder",
    "--color": "color",
}
SHORT_VALUE_FLAGS = ("-n", "-s", "-v")  # also written -nNAME, -sURL and -v6
GROUP_FLAG = "--as-group"  # repeatable: one group each
BOOL_FLAGS = {
    "-A": "all_namespaces",
    "--all-namespaces": "all_namespaces",
    "--all-contexts": "all_contexts",
    "--no-history": "no_history",
    "--insecure-skip-tls-verify": "insecure_skip_tls_verify",
}


@dataclass(frozen=True)
class Globals:
    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    all_namespaces: bool = False
    request_timeout: float | None = None
    server: str | None = None
    token: str | None = None
    insecure_skip_tls_verify: bool = False
    impersonate: str | None = None  # --as
    impersonate_groups: tuple[str, ...] = ()  # --as-group, repeated
    impersonate_uid: str | None = None  # --as-uid
    verbosity: int = 0  # -v: 6 prints every request (kube/trace.py)
    history_db: str | None = None  # the local history store (default: under XDG_STATE_HOME)
    # A Spark History Server (else $KUBECTL_SPARK_HISTORY_SERVER, else auto): a URL, NS/NAME of
    # its Service, auto (found by its label), none; gone drivers' executors (kube/historyserver.py)
    history_server: str | None = None
    # An in-cluster recorder to merge: auto (found by label), none, or NAMESPACE/NAME of its
    # Service (else $KUBECTL_SPARK_RECORDER; kube/recorder_api.py)
    recorder: str | None = None
    no_history: bool = False
    color: str = "auto"  # --color: auto, always or never (cli/colour.py)
    # --all-contexts: every context of the kubeconfig, each read as --context NAME would be
    # (``ls`` and ``tui``; cli/clusters.py). ``--context a,b`` names several the same way.
    all_contexts: bool = False
    # Not a flag: the client process a warm worker answers for (cli.main.run; -v says so).
    served_for: int | None = None

    def contexts(self) -> tuple[str, ...]:
        """The contexts ``--context a,b`` names; () for one context (or --all-contexts)."""
        if self.context is None or "," not in self.context:
            return ()
        return tuple(name.strip() for name in self.context.split(","))


_DEFAULT = Globals()  # frozen: safe to share as the ContextVar default
_current: ContextVar[Globals] = ContextVar("kubectl_spark_globals", default=_DEFAULT)


def current() -> Globals:
    return _current.get()


def use(globals_: Globals) -> None:
    _current.set(globals_)


def parse_timeout(text: str) -> float | None:
    """Kubectl's --request-timeout: '0' means none; a plain number is seconds; or 1h2m3s/500ms."""
    text = text.strip()
    if text in ("0", ""):
        return None
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    total = 0.0
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise UsageError(
            f'invalid --request-timeout "{text}": use a number of seconds or a duration like 30s, 1m'
        )
    for number, unit in parts:
        total += float(number) * units[unit]
    return total or None


def _is_service(text: str) -> bool:
    """``NAMESPACE/NAME``, both DNS labels."""
    namespace, slash, name = text.partition("/")
    return bool(slash) and is_namespace_name(namespace) and is_namespace_name(name)


def check_history_server(text: str, where: str) -> None:
    """``--history-server``: a URL, auto, none, or the NAMESPACE/NAME of its Service."""
    url = text.startswith(("http://", "https://")) and len(text) > len("https://")
    if not (url or text in ("auto", "none") or _is_service(text)):
        raise UsageError(
            f'invalid {where} "{shown(text)}": use an http(s) URL, auto, none, or '
            "NAMESPACE/NAME of the Spark History Server's Service"
        )


def check_recorder(text: str, where: str) -> None:
    """``--recorder``: auto, none, or the NAMESPACE/NAME of the recorder's Service."""
    if not (text in ("auto", "none") or _is_service(text)):
        raise UsageError(
            f'invalid {where} "{shown(text)}": use auto, none, or NAMESPACE/NAME of the '
            "recorder's Service"
        )


def split(argv: list[str]) -> tuple[Globals, list[str]]:
    values: dict[str, object] = {}
    rest: list[str] = []
    groups: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.extend(argv[i:])
            break
        name, eq, inline = arg.partition("=")
        if (name in VALUE_FLAGS or name == GROUP_FLAG) and (
            eq or name.startswith("--") or name in SHORT_VALUE_FLAGS
        ):
            if eq:
                value = inline
            elif i + 1 < len(argv):
                i += 1
                value = argv[i]
            else:
                raise UsageError(f"flag needs an argument: {name}")
            if name == GROUP_FLAG:
                groups.append(value)
            else:
                values[VALUE_FLAGS[name]] = value
        elif arg[:2] in SHORT_VALUE_FLAGS and len(arg) > 2 and not arg.startswith("--"):
            values[VALUE_FLAGS[arg[:2]]] = arg[2:]
        elif name in BOOL_FLAGS and (not eq or inline in ("true", "false")):
            values[BOOL_FLAGS[name]] = not eq or inline == "true"
        elif name in BOOL_FLAGS:
            raise UsageError(f'invalid argument "{inline}" for "{name}" flag: use true or false')
        elif arg == "--dry-run":
            rest.append("--dry-run=client")  # kubectl: a bare --dry-run means client
        else:
            rest.append(arg)
        i += 1
    timeout = values.pop("request_timeout", None)
    level = values.pop("verbosity", "0")
    if not (isinstance(level, str) and level.isdecimal()):
        raise UsageError(
            f'invalid argument "{level}" for "-v, --v" flag: a whole number (6: requests)'
        )
    values["verbosity"] = int(level)
    if values.get("color", "auto") not in ("auto", "always", "never"):
        raise UsageError(
            f'invalid argument "{shown(str(values["color"]))}" for "--color" flag: '
            "use auto, always or never"
        )
    globals_ = replace(Globals(), impersonate_groups=tuple(groups), **values)  # type: ignore[arg-type]
    if isinstance(timeout, str):
        globals_ = replace(globals_, request_timeout=parse_timeout(timeout))
    _check(globals_)
    return globals_, rest


def _check(globals_: Globals) -> None:
    if globals_.namespace is not None and not is_namespace_name(globals_.namespace):
        raise UsageError(
            f'invalid namespace "{shown(globals_.namespace)}": a namespace is a lowercase '
            f"RFC 1123 label of at most {LABEL_MAX} characters"
        )
    named = globals_.contexts()
    if any(not name for name in named):
        raise UsageError(
            f'invalid --context "{shown(globals_.context or "")}": name contexts, e.g. --context a,b'
        )
    if globals_.all_contexts and globals_.context is not None:
        raise UsageError("--all-contexts and --context: give one of them")
    if globals_.recorder is not None:
        check_recorder(globals_.recorder, "--recorder")
    if globals_.history_server is not None:
        check_history_server(globals_.history_server, "--history-server")
