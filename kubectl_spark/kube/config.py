"""kubeconfig loading with kubectl's rules, not the Python client's.

kubectl merges ``KUBECONFIG``'s colon-separated files with the *first* file that sets a value
winning (the Python client lets the last ``current-context`` win), then applies ``--context``,
``--cluster``, ``--user``, ``--namespace``, ``--server``, ``--token`` and
``--insecure-skip-tls-verify``. We merge ourselves and hand the client one dict. With
``--server`` a kubeconfig is not needed at all, as with kubectl.
Relative file paths in a kubeconfig are resolved against the file that names them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from kubectl_spark.errors import ConfigError

PATH_KEYS = {"certificate-authority", "client-certificate", "client-key", "tokenFile"}


@dataclass(frozen=True)
class Selection:
    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    server: str | None = None
    token: str | None = None
    insecure_skip_tls_verify: bool = False
    in_cluster: bool = False  # the pod's service account, whatever kubeconfig there is


@dataclass(frozen=True)
class Resolved:
    config: dict[str, Any]
    context: str
    cluster: str
    namespace: str
    files: tuple[str, ...]

    @property
    def proxy_url(self) -> str:
        """The cluster's ``proxy-url`` (checked by ``load``), "" for none."""
        clusters = self.config.get("clusters") or [{}]
        cluster = clusters[0].get("cluster")
        value = cluster.get("proxy-url") if isinstance(cluster, dict) else None
        return value if isinstance(value, str) else ""

    @property
    def user_entry(self) -> dict[str, Any]:
        """The chosen kubeconfig user's fields (token, certificates, ``as``…)."""
        users = self.config.get("users") or [{}]
        entry = users[0].get("user")
        return entry if isinstance(entry, dict) else {}


def _files(selection: Selection) -> list[Path]:
    if selection.kubeconfig:
        return [Path(selection.kubeconfig).expanduser()]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    return [Path.home() / ".kube" / "config"]


def _absolutize(entry: dict[str, Any], base: Path) -> dict[str, Any]:
    out = dict(entry)
    for key in PATH_KEYS:
        value = out.get(key)
        if isinstance(value, str) and value and not Path(value).is_absolute():
            out[key] = str(base / value)
    return out


def load(selection: Selection) -> Resolved:
    if selection.in_cluster:
        if not in_cluster_possible():
            raise ConfigError(
                "not in a pod: no KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, or no "
                f"service account token in {service_account_dir()}"
            )
        return _in_cluster(selection)
    files = _files(selection)
    merged, current, read = _merge(files, selection)
    if not read and selection.server and not selection.context:
        return _from_flags(selection)
    if not read and not selection.kubeconfig and in_cluster_possible():
        # As kubectl does in a pod with no kubeconfig (client-go tools/clientcmd,
        # merged_client_builder.go: an empty config and InClusterConfig possible).
        return _in_cluster(selection)
    if not read:
        raise ConfigError(
            "no kubeconfig found (looked at " + ", ".join(str(f) for f in files) + ")",
            hint="pass --kubeconfig, set KUBECONFIG, or run `kubectl spark demo --serve`",
        )
    context_name, context = _context(merged, selection.context or current, selection)
    cluster_name = str(context.get("cluster") or "")
    if cluster_name not in merged["clusters"]:
        raise ConfigError(f'cluster "{cluster_name}" does not exist in the kubeconfig')
    user_name = str(context.get("user") or "")
    if user_name and user_name not in merged["users"]:
        raise ConfigError(f'user "{user_name}" does not exist in the kubeconfig')
    namespace = selection.namespace or str(context.get("namespace") or "default")
    cluster = _cluster(merged["clusters"][cluster_name], selection)
    where = (
        "--server" if selection.server else f'the kubeconfig\'s cluster "{cluster_name}": server'
    )
    _check_server(cluster.get("server"), where)
    _check_proxy(cluster.get("proxy-url"), cluster_name)
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": context_name,
        "clusters": [{"name": cluster_name, "cluster": cluster}],
        "users": [
            {"name": user_name, "user": _user(merged["users"].get(user_name, {}), selection)}
        ],
        "contexts": [{"name": context_name, "context": context}],
    }
    return Resolved(config, context_name, cluster_name, namespace, tuple(read))


def context_names(selection: Selection) -> list[str]:
    """Every context the kubeconfig files name, sorted as ``kubectl config get-contexts`` lists them.

    ``--all-contexts`` reads each; a kubeconfig with none is an error, as a missing one is.
    """
    files = _files(selection)
    merged, _, read = _merge(files, selection)
    if not read:
        raise ConfigError(
            "no kubeconfig found (looked at " + ", ".join(str(f) for f in files) + ")",
            hint="pass --kubeconfig or set KUBECONFIG",
        )
    if not merged["contexts"]:
        raise ConfigError("--all-contexts: the kubeconfig names no context")
    return sorted(merged["contexts"])


IN_CLUSTER = "in-cluster"  # the context (and cluster) name of a pod's own configuration
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def service_account_dir() -> Path:
    """Where the pod's token, CA and namespace are mounted (a test may point elsewhere)."""
    return Path(os.environ.get("KUBECTL_SPARK_SERVICEACCOUNT_DIR") or SERVICE_ACCOUNT_DIR)


def in_cluster_possible() -> bool:
    """client-go's rule (rest.InClusterConfig): both variables set and a token to read."""
    return bool(
        os.environ.get("KUBERNETES_SERVICE_HOST")
        and os.environ.get("KUBERNETES_SERVICE_PORT")
        and (service_account_dir() / "token").is_file()
    )


def _in_cluster(selection: Selection) -> Resolved:
    """The pod's service account as a kubeconfig: the token is a file, read at each connect.

    Bound tokens are rotated by the kubelet; a file, not its contents, keeps up with them.
    """
    host = os.environ["KUBERNETES_SERVICE_HOST"]
    port = os.environ["KUBERNETES_SERVICE_PORT"]
    folder = service_account_dir()
    where = f"[{host}]" if ":" in host else host  # net.JoinHostPort
    cluster: dict[str, Any] = {"server": f"https://{where}:{port}"}
    if (folder / "ca.crt").is_file():
        cluster["certificate-authority"] = str(folder / "ca.crt")
    try:
        own = (folder / "namespace").read_text().strip()
    except OSError:
        own = ""
    namespace = selection.namespace or own or "default"
    context = {"cluster": IN_CLUSTER, "user": IN_CLUSTER, "namespace": namespace}
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": IN_CLUSTER,
        "clusters": [{"name": IN_CLUSTER, "cluster": _cluster(cluster, selection)}],
        "users": [
            {"name": IN_CLUSTER, "user": _user({"tokenFile": str(folder / "token")}, selection)}
        ],
        "contexts": [{"name": IN_CLUSTER, "context": context}],
    }
    return Resolved(config, IN_CLUSTER, IN_CLUSTER, namespace, ())


Merged = dict[str, dict[str, Any]]


def _merge(files: list[Path], selection: Selection) -> tuple[Merged, str, list[str]]:
    """Kubectl's merge: the first file to name a cluster, user or context wins."""
    merged: Merged = {"clusters": {}, "users": {}, "contexts": {}}
    current = ""
    read: list[str] = []
    for path in files:
        doc = _read(path, named=bool(selection.kubeconfig))
        if doc is None:
            continue
        read.append(str(path))
        for section, inner in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
            for item in doc.get(section) or []:
                if not isinstance(item, dict) or not item.get("name"):
                    continue
                if item["name"] not in merged[section]:
                    body = item.get(inner) or {}
                    merged[section][item["name"]] = (
                        _absolutize(body, path.parent) if isinstance(body, dict) else {}
                    )
        if not current and doc.get("current-context"):
            current = str(doc["current-context"])
    return merged, current, read


MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024  # far beyond any real kubeconfig; /dev/zero is not one


def _read(path: Path, *, named: bool) -> dict[str, Any] | None:
    """One kubeconfig file (None: missing, and not named by --kubeconfig).

    An error names the file and the line, never the content: a kubeconfig holds tokens and
    keys, and a YAML error's usual quote of the offending line would print one (kubectl
    prints the line number only).
    """
    if not path.exists():
        if named:
            raise ConfigError(f"kubeconfig {path} does not exist")
        return None
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_KUBECONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read kubeconfig {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_KUBECONFIG_BYTES:
        raise ConfigError(f"kubeconfig {path} is larger than 16 MiB: it is not a kubeconfig")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"kubeconfig {path} is not UTF-8 text (byte {exc.start + 1} of {len(data)})"
        ) from None
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        raise ConfigError(
            f"kubeconfig {path} is not valid YAML at {where}: {_problem(exc.problem)}"
        ) from None
    except yaml.YAMLError:
        raise ConfigError(f"kubeconfig {path} is not valid YAML") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"kubeconfig {path} is not a mapping")
    return doc


def _problem(text: str | None) -> str:
    """PyYAML's description of a problem with what it quotes from the file taken out."""
    plain = re.sub(r"'[^']*'|\"[^\"]*\"", "…", text or "a syntax error")
    return " ".join(plain.split())[:120]


def _context(merged: Merged, name: str, selection: Selection) -> tuple[str, dict[str, Any]]:
    """The context chosen, with --cluster and --user applied."""
    if not name:
        raise ConfigError("the kubeconfig has no current-context; pass --context")
    if name not in merged["contexts"]:
        raise ConfigError(
            f'context "{name}" does not exist in the kubeconfig',
            hint="known contexts: " + (", ".join(sorted(merged["contexts"])) or "none"),
        )
    context = dict(merged["contexts"][name])
    if selection.cluster:
        context["cluster"] = selection.cluster
    if selection.user:
        context["user"] = selection.user
    return name, context


def _check_server(server: Any, where: str) -> None:
    """A server address the client cannot use is bad input: said once, never retried.

    The HTTP library would take ``ftp://x`` or ``http://[::1`` for a failed connection and retry it.
    """
    if server is None or server == "":
        return  # the client's own default, as kubectl's
    problem = ""
    try:
        parts = urlsplit(str(server))
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError as exc:
        problem = f"not a URL ({exc})"
    else:
        if parts.scheme not in ("http", "https"):
            problem = f'unsupported protocol scheme "{parts.scheme}" (http or https)'
        elif not parts.hostname:
            problem = "no host"
    if problem:
        raise ConfigError(f"{where} {str(server)!r}: {problem}")


PROXY_SCHEMES = ("http", "https", "socks5")


def _check_proxy(proxy: Any, cluster: str) -> None:
    """A ``proxy-url`` the client can send through: http, https or socks5, as kubectl's.

    client-go (``net/http``'s proxy support, ``golang.org/x/net/proxy`` for SOCKS) takes
    those three schemes; anything else (socks4, a typo) is refused before a request is sent.
    """
    if proxy is None or proxy == "":
        return
    where = f'the kubeconfig\'s cluster "{cluster}": proxy-url'
    try:
        parts = urlsplit(str(proxy))
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise ConfigError(f"{where} is not a URL") from None
    if parts.scheme not in PROXY_SCHEMES:
        raise ConfigError(
            f'{where}: unsupported proxy scheme "{parts.scheme}" (kubectl spark sends through '
            "http, https and socks5 proxies, as kubectl does)"
        )
    if not parts.hostname:
        raise ConfigError(f"{where} has no host")


def _cluster(entry: dict[str, Any], selection: Selection) -> dict[str, Any]:
    """The cluster entry with --server and --insecure-skip-tls-verify applied.

    Skipping verification drops the kubeconfig's CA, as kubectl does when the flag comes
    without a CA of its own (client-go refuses a CA together with the insecure flag).
    """
    out = dict(entry)
    if selection.server:
        # host:port alone means https, as kubectl takes it
        scheme = "" if "://" in selection.server else "https://"
        out["server"] = scheme + selection.server
    if selection.insecure_skip_tls_verify:
        out["insecure-skip-tls-verify"] = True
        out.pop("certificate-authority", None)
        out.pop("certificate-authority-data", None)
    return out


def _user(entry: dict[str, Any], selection: Selection) -> dict[str, Any]:
    """The user entry with --token applied: the token then wins over the kubeconfig's plugins."""
    if not selection.token:
        return entry
    out = {k: v for k, v in entry.items() if k not in ("tokenFile", "exec", "auth-provider")}
    out["token"] = selection.token
    return out


def _from_flags(selection: Selection) -> Resolved:
    """No kubeconfig, but --server (and maybe --token): kubectl connects with the flags alone."""
    name = "flags"
    cluster = _cluster({}, selection)
    _check_server(cluster.get("server"), "--server")
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": name,
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": _user({}, selection)}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
    }
    return Resolved(config, name, name, selection.namespace or "default", ())
