"""The TUI's shell (tui/shell.py): kubectl exec with the TUI's own connection, token hidden."""

from __future__ import annotations

from kubectl_spark.kube.client import Connection
from kubectl_spark.tui.shell import SHELL, exec_args, shown


def test_the_connection_flags_are_passed_on_and_the_token_is_never_shown() -> None:
    conn = Connection(
        kubeconfig="/k/config",
        context="prod",
        token="s3cret",
        impersonate="alice",
        impersonate_groups=("sre", "oncall"),
        insecure_skip_tls_verify=True,
    )
    args = exec_args(conn, "spark", "etl-exec-3", "spark-kubernetes-executor")
    assert args[:4] == ["--kubeconfig", "/k/config", "--context", "prod"]
    assert args[args.index("--as") : args.index("--as") + 2] == ["--as", "alice"]
    assert args.count("--as-group") == 2 and "--insecure-skip-tls-verify" in args
    tail = ["exec", "-it", "-n", "spark", "etl-exec-3", "-c", "spark-kubernetes-executor"]
    assert args[-11:] == [*tail, "--", "sh", "-c", SHELL]
    said = shown(args)
    assert "s3cret" not in said and said.endswith(" (with your --token)")
    assert "--token" not in said.removesuffix(" (with your --token)")
    assert said.startswith("kubectl --kubeconfig /k/config --context prod")


def test_no_connection_known_is_kubectls_own_defaults() -> None:
    assert exec_args(None, "ns", "p", "c")[:3] == ["exec", "-it", "-n"]
