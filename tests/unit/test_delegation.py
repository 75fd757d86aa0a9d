"""Reading the front proxy's trust and the user it passes on, as k8s.io/apiserver reads them."""

from __future__ import annotations

import json
from email.message import Message

from kubectl_spark.kube.delegation import Caller, FrontProxyTrust

PUBLISHED = {  # kube-system/extension-apiserver-authentication, as kube-apiserver writes it
    "requestheader-client-ca-file": "-----BEGIN CERTIFICATE-----\n...",
    "requestheader-allowed-names": json.dumps(["front-proxy-client"]),
    "requestheader-username-headers": json.dumps(["X-Remote-User"]),
    "requestheader-group-headers": json.dumps(["X-Remote-Group"]),
    "requestheader-extra-headers-prefix": json.dumps(["X-Remote-Extra-"]),
}


def _headers(*pairs: tuple[str, str]) -> Message:
    message = Message()
    for key, value in pairs:
        message[key] = value
    return message


def test_the_published_trust_is_read_as_written() -> None:
    trust = FrontProxyTrust.of(PUBLISHED)
    assert trust.client_ca.startswith("-----BEGIN")
    assert trust.admits("front-proxy-client") and not trust.admits("someone-else")
    assert FrontProxyTrust.of({}).client_ca == ""  # no front proxy configured: nobody passes
    assert FrontProxyTrust.of({}).admits("anyone")  # no names listed: any CN (apiserver's rule)
    broken = FrontProxyTrust.of({**PUBLISHED, "requestheader-group-headers": "not json"})
    assert broken.group_headers == ()


def test_the_user_groups_and_extras_passed_on() -> None:
    trust = FrontProxyTrust.of(PUBLISHED)
    headers = _headers(
        ("X-Remote-User", "alice"),
        ("X-Remote-Group", "team-a"),
        ("X-Remote-Group", "system:authenticated"),
        ("X-Remote-Extra-Authentication.kubernetes.io%2fpod-name", "p-1"),
        ("X-Remote-Extra-Scopes", "a"),
        ("X-Remote-Extra-Scopes", "b"),
    )
    assert trust.caller(headers) == Caller(
        "alice",
        ("team-a", "system:authenticated"),
        "",
        (("authentication.kubernetes.io/pod-name", ("p-1",)), ("scopes", ("a", "b"))),
    )
    assert trust.caller(_headers(("X-Remote-Group", "team-a"))) is None  # no user: nobody
    spec = Caller("alice", ("g",), "u-1", (("scopes", ("a",)),)).review_spec()
    assert spec == {"user": "alice", "groups": ["g"], "uid": "u-1", "extra": {"scopes": ["a"]}}
