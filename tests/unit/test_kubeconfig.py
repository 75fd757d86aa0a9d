"""kubeconfig merging by kubectl's rules (not the Python client's)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubectl_spark.errors import ConfigError
from kubectl_spark.kube.config import Selection, load


def write(path: Path, current: str | None, contexts: dict[str, str], ca: str = "ca.crt") -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": f"cluster-{c}",
                "cluster": {"server": f"https://{c}:6443", "certificate-authority": ca},
            }
            for c in contexts
        ],
        "users": [{"name": f"user-{c}", "user": {"token": f"t-{c}"}} for c in contexts],
        "contexts": [
            {
                "name": c,
                "context": {
                    "cluster": f"cluster-{c}",
                    "user": f"user-{c}",
                    **({"namespace": ns} if ns else {}),
                },
            }
            for c, ns in contexts.items()
        ],
    }
    if current:
        doc["current-context"] = current
    path.write_text(yaml.safe_dump(doc))
    return path


def test_first_current_context_wins_like_kubectl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = write(tmp_path / "a", "alpha", {"alpha": "team-a"})
    b = write(tmp_path / "b", "beta", {"beta": "", "alpha": "other"})
    monkeypatch.setenv("KUBECONFIG", f"{a}:{b}")
    resolved = load(Selection())
    assert (resolved.context, resolved.namespace) == (
        "alpha",
        "team-a",
    )  # the Python client would pick beta
    assert resolved.config["clusters"][0]["cluster"]["certificate-authority"] == str(
        tmp_path / "ca.crt"
    )
    beta = load(Selection(context="beta"))
    assert (beta.context, beta.namespace) == ("beta", "default")
    assert (
        load(Selection(context="beta", namespace="x", cluster="cluster-alpha")).cluster
        == "cluster-alpha"
    )


def test_unknown_context_cluster_or_missing_file(tmp_path: Path) -> None:
    a = write(tmp_path / "a", "alpha", {"alpha": ""})
    with pytest.raises(ConfigError, match='context "nope" does not exist'):
        load(Selection(kubeconfig=str(a), context="nope"))
    with pytest.raises(ConfigError, match='cluster "nope" does not exist'):
        load(Selection(kubeconfig=str(a), cluster="nope"))
    with pytest.raises(ConfigError, match="does not exist"):
        load(Selection(kubeconfig=str(tmp_path / "missing")))
    empty = write(tmp_path / "e", None, {"alpha": ""})
    with pytest.raises(ConfigError, match="no current-context"):
        load(Selection(kubeconfig=str(empty)))


def test_global_flags_anywhere() -> None:
    from kubectl_spark.cli.globals import split

    g, rest = split(
        [
            "--context",
            "x",
            "ls",
            "-n",
            "spark",
            "--kubeconfig=/k",
            "-A",
            "-o",
            "json",
            "--request-timeout",
            "1m30s",
        ]
    )
    assert (g.context, g.namespace, g.kubeconfig, g.all_namespaces, g.request_timeout) == (
        "x",
        "spark",
        "/k",
        True,
        90.0,
    )
    assert rest == ["ls", "-o", "json"]
    g, rest = split(["ls", "-nspark", "--", "-n", "kept"])
    assert g.namespace == "spark" and rest == ["ls", "--", "-n", "kept"]


def test_a_server_the_client_cannot_use_is_bad_input(tmp_path: Path) -> None:
    a = write(tmp_path / "a", "alpha", {"alpha": ""})
    doc = yaml.safe_load(a.read_text())
    doc["clusters"][0]["cluster"]["server"] = "ftp://alpha"
    a.write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError, match="cluster \"cluster-alpha\": server 'ftp://alpha'"):
        load(Selection(kubeconfig=str(a)))
    fixed = load(Selection(kubeconfig=str(a), server="alpha:6443")).config["clusters"][0]
    assert fixed["cluster"]["server"] == "https://alpha:6443"  # host:port alone: https, as kubectl


def _service_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "sa"
    folder.mkdir()
    (folder / "token").write_text("bound-token\n")
    (folder / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    (folder / "namespace").write_text("spark-recorder\n")
    monkeypatch.setenv("KUBECTL_SPARK_SERVICEACCOUNT_DIR", str(folder))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    return folder


def test_in_a_pod_without_a_kubeconfig_the_service_account_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As kubectl in a pod (client-go's in-cluster fallback): server from the environment, the
    token as a file (re-read at each connect: bound tokens rotate), the pod's namespace."""
    from kubectl_spark.kube.config import IN_CLUSTER, Selection, load

    folder = _service_account(tmp_path, monkeypatch)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    resolved = load(Selection())
    assert (resolved.context, resolved.namespace) == (IN_CLUSTER, "spark-recorder")
    cluster = resolved.config["clusters"][0]["cluster"]
    assert cluster == {
        "server": "https://10.96.0.1:443",
        "certificate-authority": str(folder / "ca.crt"),
    }
    assert resolved.user_entry == {"tokenFile": str(folder / "token")}
    assert load(Selection(namespace="other")).namespace == "other"
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    assert load(Selection()).config["clusters"][0]["cluster"]["server"] == "https://[fd00::1]:443"


def test_in_cluster_forced_wins_over_a_kubeconfig_and_says_why_it_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kubectl_spark.errors import ConfigError
    from kubectl_spark.kube.config import IN_CLUSTER, Selection, load

    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: k, cluster: "
        "{server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
    )
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match="not in a pod"):
        load(Selection(kubeconfig=str(kubeconfig), in_cluster=True))
    _service_account(tmp_path, monkeypatch)
    assert load(Selection(kubeconfig=str(kubeconfig))).context == "c"  # a kubeconfig: used
    assert load(Selection(kubeconfig=str(kubeconfig), in_cluster=True)).context == IN_CLUSTER


def test_the_client_keeps_a_connection_for_every_read_a_command_makes_at_once(
    tmp_path: Path,
) -> None:
    """The next page, the optional lists and eight drivers' Spark UIs at once: a pool smaller
    than that closes the connections over it, and the next requests open them again."""
    from kubectl_spark.kube.client import Connection, connect
    from kubectl_spark.kube.snapshot import READERS
    from kubectl_spark.kube.sparkapi import MAX_PARALLEL

    path = write(tmp_path / "kc", "alpha", {"alpha": ""})
    doc = yaml.safe_load(path.read_text())
    doc["clusters"][0]["cluster"] = {
        "server": "https://alpha:6443",
        "insecure-skip-tls-verify": True,
    }
    path.write_text(yaml.safe_dump(doc))
    with connect(Connection(kubeconfig=str(path))) as api:
        kept = api.client.rest_client.pool_manager.connection_pool_kw["maxsize"]
    assert kept >= 1 + READERS + MAX_PARALLEL
