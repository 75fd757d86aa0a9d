"""Kubeconfigs that are broken, binary, endless or point through a proxy: each error names the
file and the line, never the content; a missing or failing credential plugin is said as such,
its output escaped and kept off the terminal; a local key or certificate that cannot be used is
named and not retried; ``proxy-url`` is honoured."""

from __future__ import annotations

import base64
import io
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_spark import errors
from kubectl_spark.cli.main import main
from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer
from kubectl_spark.kube.client import Connection, connect
from tests.command_line import run
from tests.forwardproxy import ForwardProxy, Socks5Proxy

SECRET = "kst-RECOGNISABLE-secret-token-0123456789"


def one_line_error(code: int, err: str) -> str:
    assert code != 0 and err.startswith("error: ") and "Traceback" not in err, err
    assert len([line for line in err.splitlines() if line.strip()]) <= 2, err  # error + hint
    return err


def edited(kubeconfig: Path, tmp_path: Path, *, user: Any = None, cluster: Any = None) -> Path:
    doc = yaml.safe_load(kubeconfig.read_text())
    if user is not None:
        doc["users"][0]["user"] = user
    if cluster is not None:
        doc["clusters"][0]["cluster"].update(cluster)
    path = tmp_path / "edited-kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_a_malformed_kubeconfig_names_the_line_never_the_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config"
    path.write_text(
        f"apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: {SECRET}: and more\n"
    )
    code, _, err = run(capsys, path, "ls")
    err = one_line_error(code, err)
    assert f"kubeconfig {path} is not valid YAML at line 6" in err, err
    assert "RECOGNISABLE" not in err and "kst-" not in err


def test_a_binary_kubeconfig_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config"
    path.write_bytes(b"apiVersion: v1\n\xff\xfe\x00binary")
    code, _, err = run(capsys, path, "ls")
    assert f"kubeconfig {path} is not UTF-8 text (byte 16" in one_line_error(code, err)


def _plugin(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "credential-plugin"
    script.write_text(f"#!{sys.executable}\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def exec_user(command: str, **more: Any) -> dict[str, Any]:
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": command, **more}}


def test_a_missing_credential_plugin_is_named_as_missing(
    kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = edited(
        kubeconfig,
        tmp_path,
        user=exec_user("kubelogin-not-installed", installHint="install it from the wiki"),
    )
    code, _, err = run(capsys, bad, "ls")
    err = one_line_error(code, err)
    assert 'credential plugin "kubelogin-not-installed" was not found' in err, err
    assert "install it from the wiki" in err and "401" not in err


def test_a_failing_plugins_output_is_escaped_and_kept_off_the_terminal(
    kubeconfig: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plugin = _plugin(
        tmp_path, "import sys\nsys.stderr.write('\\x1b[2Jsso: log in again\\n')\nsys.exit(3)"
    )
    bad = edited(kubeconfig, tmp_path, user=exec_user(str(plugin)))

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    # On a terminal the Kubernetes client lets a plugin write to it: a full-screen TUI must not.
    monkeypatch.setattr(sys, "stdout", Terminal())
    with pytest.raises(errors.ConfigError) as caught:
        connect(Connection(kubeconfig=str(bad), interactive=False))
    assert "sso: log in again" in caught.value.message
    assert "log in again" not in capfd.readouterr().err  # nothing reached the terminal raw
    # Said once, escaped, where errors are said (the TUI's status bar escapes it alike).
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    code = main(["--kubeconfig", str(bad), "ls"])
    err = capfd.readouterr().err
    assert code != 0 and err.count("log in again") == 1, err
    assert "\\x1b[2Jsso: log in again" in err and "\x1b" not in err


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("client-key-data", b"not a key", "client-key-data is not a PEM private key"),
        (
            "client-certificate-data",
            b"not a certificate",
            "client-certificate-data is not a PEM certificate",
        ),
    ],
)
def test_a_local_key_or_certificate_that_cannot_be_used_is_named_and_not_retried(
    emulator: EmbeddedApiServer,
    kubeconfig: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    field: str,
    value: bytes,
    said: str,
) -> None:
    import trustme

    ca = trustme.CA()
    cert = ca.issue_cert("someone")
    user = {
        "client-certificate-data": base64.b64encode(cert.cert_chain_pems[0].bytes()).decode(),
        "client-key-data": base64.b64encode(cert.private_key_pem.bytes()).decode(),
    }
    user[field] = base64.b64encode(value).decode()
    start = time.monotonic()
    code, _, err = run(capsys, edited(kubeconfig, tmp_path, user=user), "ls")
    err = one_line_error(code, err)
    assert said in err and "gave up after" not in err and "PEM lib" not in err, err
    assert time.monotonic() - start < 5


def test_proxy_url_is_honoured(
    emulator: EmbeddedApiServer,
    kubeconfig: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # proxy-url wins, as in client-go
    with ForwardProxy() as proxy:
        through = edited(kubeconfig, tmp_path, cluster={"proxy-url": proxy.url})
        code, out, err = run(capsys, through, "ls", "-o", "json")
        assert code == 0 and out.startswith("{"), err
        target = emulator.url.removeprefix("https://")
        assert proxy.tunnels[target] >= 1, proxy.tunnels


def test_a_socks5_proxy_url_is_honoured_and_resolves_the_host_there(
    emulator: EmbeddedApiServer,
    kubeconfig: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """kubectl's ``socks5://`` (an ``ssh -D`` to a bastion): the API server's host name goes to
    the proxy unresolved, as golang.org/x/net/proxy sends it (issue 49, point 5)."""
    with Socks5Proxy() as proxy:
        port = emulator.url.rsplit(":", 1)[1]
        through = edited(
            kubeconfig,
            tmp_path,
            cluster={"proxy-url": proxy.url, "server": f"https://localhost:{port}"},
        )
        code, out, err = run(capsys, through, "ls", "-o", "json")
        assert code == 0 and out.startswith("{"), err
        assert proxy.tunnels[f"localhost:{port}"] >= 1, proxy.tunnels


def test_another_proxy_scheme_is_refused_in_one_line(
    kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    through = edited(kubeconfig, tmp_path, cluster={"proxy-url": "socks4://127.0.0.1:1080"})
    code, _, err = run(capsys, through, "ls")
    assert 'unsupported proxy scheme "socks4"' in one_line_error(code, err)
