"""Credentials: tokens and keys from the kubeconfig never appear in any output or error; exec
credential plugins work, and their failure is reported, not swallowed."""

from __future__ import annotations

import base64
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer
from tests.command_line import run

SECRET = "kst-RECOGNISABLE-secret-token-0123456789"
KEY = "-----BEGIN PRIVATE KEY-----\nkst-RECOGNISABLE-key-material\n-----END PRIVATE KEY-----\n"
COMMANDS = [
    ["ls"],
    ["ls", "-A", "-o", "json"],
    ["describe", "nothing-here"],
    ["history", "nothing-here"],
    ["events", "nothing-here"],
    ["logs", "nothing-here"],
    ["fence", "nothing-here/1", "--dry-run"],
    ["version"],
]


def rewrite(kubeconfig: Path, tmp_path: Path, **user: Any) -> Path:
    doc = yaml.safe_load(kubeconfig.read_text())
    doc["users"][0]["user"] = user
    path = tmp_path / "edited-kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_a_rejected_token_never_shows(
    kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = rewrite(kubeconfig, tmp_path, token=SECRET)
    for args in COMMANDS:
        code, out, err = run(capsys, bad, *args)
        text = out + err
        assert SECRET not in text and "RECOGNISABLE" not in text, args
        if args != ["version"]:
            assert code != 0 and "401" in text, (args, text)


def test_client_key_material_never_shows(
    kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = rewrite(
        kubeconfig,
        tmp_path,
        **{
            "client-certificate-data": base64.b64encode(b"not a certificate").decode(),
            "client-key-data": base64.b64encode(KEY.encode()).decode(),
        },
    )
    for args in COMMANDS[:3]:
        code, out, err = run(capsys, bad, *args)
        text = out + err
        assert code != 0 and "RECOGNISABLE" not in text and "PRIVATE KEY" not in text, text
        assert "Traceback" not in text


def _plugin(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "credential-plugin"
    script.write_text(f"#!{sys.executable}\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def with_plugin(kubeconfig: Path, tmp_path: Path, plugin: Path) -> Path:
    """The kubeconfig, its user authenticating through an exec credential plugin."""
    return rewrite(
        kubeconfig,
        tmp_path,
        exec={
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(plugin),
            "interactiveMode": "Never",
        },
    )


def test_an_exec_credential_plugin_is_used(
    emulator: EmbeddedApiServer,
    kubeconfig: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    plugin = _plugin(
        tmp_path,
        "import json\nprint(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', "
        f"'kind': 'ExecCredential', 'status': {{'token': {emulator.token!r}}}}}))",
    )
    code, out, err = run(capsys, with_plugin(kubeconfig, tmp_path, plugin), "ls", "-o", "json")
    text = out + err
    assert code == 0, text
    assert emulator.token not in text


def test_a_failing_exec_plugin_is_reported(
    kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plugin = _plugin(
        tmp_path,
        "import sys\nsys.stderr.write('sso: please log in again\\n')\nsys.exit(3)",
    )
    code, out, err = run(capsys, with_plugin(kubeconfig, tmp_path, plugin), "ls")
    text = out + err
    assert code != 0
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines[0].startswith("error: ") and "Traceback" not in text
    assert "exec credential plugin failed" in lines[0] and "please log in again" in lines[0], text
