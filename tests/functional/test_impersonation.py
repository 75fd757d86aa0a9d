"""kubectl's --as, --as-group and --as-uid (and a kubeconfig user's ``as``): the request acts as
that user, the server decides whether the caller may impersonate, and groups arrive one header
each. Also --server, --token and --insecure-skip-tls-verify, with or without a kubeconfig."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_spark.cluster.apiserver.embedded import ADMIN_USER
from tests.command_line import run

REVIEWS = {"effect": "allow", "verbs": ["create"], "resources": ["selfsubjectaccessreviews"]}
WRITES = ["create", "update", "patch", "delete", "deletecollection"]
# On call may act on pods only within group spark-admins; nobody but the admin may impersonate.
POLICY = {
    "rules": [
        REVIEWS,
        {"effect": "allow", "users": [ADMIN_USER], "verbs": ["impersonate"]},
        {"effect": "deny", "verbs": ["impersonate"]},
        {"effect": "allow", "users": ["oncall"], "groups": ["spark-admins"]},
        {"effect": "deny", "users": ["oncall"], "verbs": WRITES},
    ]
}
FORCE_KILL = ["force-kill", "networkwordcount/1", "--node-down", "--yes", "--dry-run=server"]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from tests.conftest import ScenarioCluster

    c = ScenarioCluster("s2-partition", tmp_path_factory.mktemp("s2"))
    c.player.play()
    c.oncall_token = c.server.add_user("oncall")  # type: ignore[attr-defined]
    c.oncall = c.server.write_kubeconfig(  # type: ignore[attr-defined]
        tmp_path_factory.mktemp("kc") / "oncall",
        user="oncall",
        token=c.oncall_token,  # type: ignore[attr-defined]
    )
    c.server.set_policy(POLICY)
    yield c
    c.close()


def pod_requests(played: Any) -> list[dict[str, Any]]:
    return [e for e in played.server.audit_entries() if e["resource"] == "pods"]


def test_as_a_user_acts_as_that_user_and_its_policy_applies(
    played: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    played.server.clear_audit()
    code, _, err = run(
        capsys, None, "--kubeconfig", str(played.kubeconfig), *FORCE_KILL, "--as", "oncall"
    )
    assert code != 0
    assert "needs permissions you do not have, so nothing was changed: missing patch pods" in err
    assert played.server.audit_writes() == []
    assert {(e["user"], e["impersonatedBy"]) for e in pod_requests(played)} == {
        ("oncall", ADMIN_USER)
    }


def test_each_as_group_is_one_group_of_the_impersonated_user(
    played: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    played.server.clear_audit()
    code, out, err = run(
        capsys,
        None,
        "--as=oncall",
        "--as-group",
        "spark-admins",
        "--as-group=other",
        *FORCE_KILL,
        "--kubeconfig",
        str(played.kubeconfig),
    )
    assert code == 0, err
    assert "delete pods" in out
    deletes = [e for e in pod_requests(played) if e["verb"] == "delete"]
    assert deletes and all(e["user"] == "oncall" and e["dryRun"] for e in deletes)


def test_a_caller_not_allowed_to_impersonate_is_refused_by_the_server(
    played: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    played.server.clear_audit()
    code, _, err = run(capsys, None, "--kubeconfig", str(played.oncall), "ls", "--as", ADMIN_USER)
    assert code != 0
    assert (
        f'users "{ADMIN_USER}" is forbidden: User "oncall" cannot impersonate resource "users"'
        in err
    ), err
    assert len(err.strip().splitlines()) <= 2


def test_groups_or_a_uid_without_a_user_is_a_usage_error(
    played: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    for flags in (["--as-group", "spark-admins"], ["--as-uid", "1234"]):
        code, out, err = run(capsys, None, "--kubeconfig", str(played.kubeconfig), "ls", *flags)
        assert code != 0 and out == ""
        assert err.startswith("error: --as-group and --as-uid need a user to impersonate"), err


def test_a_kubeconfig_users_as_fields_impersonate_and_a_flag_wins(
    played: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = yaml.safe_load(Path(played.kubeconfig).read_text())
    doc["users"][0]["user"]["as"] = "oncall"
    doc["users"][0]["user"]["as-groups"] = ["spark-admins"]
    path = tmp_path / "as-oncall"
    path.write_text(yaml.safe_dump(doc))
    played.server.clear_audit()
    code, _, err = run(capsys, None, "--kubeconfig", str(path), *FORCE_KILL)
    assert code == 0, err
    assert {e["user"] for e in pod_requests(played)} == {"oncall"}
    code, _, err = run(capsys, None, "--kubeconfig", str(path), *FORCE_KILL, "--as-group", "nobody")
    assert code != 0 and "missing patch pods" in err, err
    # What an action changes records who acted, and as whom.
    code, out, err = run(
        capsys,
        None,
        "--kubeconfig",
        str(path),
        "force-kill",
        "networkwordcount/1",
        "--node-down",
        "--dry-run",
        "-o",
        "json",
    )
    assert code == 0, err
    assert f'"kubectl-spark.io/actor": "{ADMIN_USER} as oncall"' in out


def test_server_and_token_flags_connect_without_a_kubeconfig(
    played: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    url = played.server.url
    code, out, err = run(
        capsys,
        None,
        "-s",
        url,
        "--token",
        played.oncall_token,
        "--insecure-skip-tls-verify",
        "ls",
        "-A",
    )
    assert code == 0, err
    assert "networkwordcount" in out
    code, _, err = run(
        capsys, None, f"-s{url}", "--token", "wrong", "--insecure-skip-tls-verify", "ls"
    )
    assert code != 0 and "Unauthorized" in err, err
    # Without the CA and without --insecure-skip-tls-verify, the server's certificate is refused,
    # at once (not retried: it will not change).
    code, _, err = run(capsys, None, "--server", url, "--token", played.oncall_token, "ls")
    assert code != 0 and "certificate is not trusted" in err and "gave up" not in err, err
    # host:port alone means https, as in kubectl.
    bare = url.removeprefix("https://")
    code, out, err = run(
        capsys, None, "-s", bare, "--token", played.oncall_token, "--insecure-skip-tls-verify", "ls"
    )
    assert code == 0 and "networkwordcount" in out, err
    code, _, err = run(capsys, None, "-s", "no-such-host.invalid:443", "--request-timeout=2", "ls")
    assert code != 0 and "no such host no-such-host.invalid" in err, err


def test_server_overrides_the_kubeconfigs_and_keeps_its_ca(
    played: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = yaml.safe_load(Path(played.kubeconfig).read_text())
    doc["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"
    path = tmp_path / "moved"
    path.write_text(yaml.safe_dump(doc))
    code, _, err = run(capsys, None, "--kubeconfig", str(path), "ls")
    assert code != 0
    code, out, err = run(
        capsys, None, "--kubeconfig", str(path), "--server", played.server.url, "ls"
    )
    assert code == 0 and "networkwordcount" in out, err


def test_insecure_skip_tls_verify_takes_only_true_or_false(
    played: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys,
        None,
        "--kubeconfig",
        str(played.kubeconfig),
        "--insecure-skip-tls-verify=maybe",
        "ls",
    )
    assert code != 0 and out == ""
    assert 'invalid argument "maybe" for "--insecure-skip-tls-verify"' in err
