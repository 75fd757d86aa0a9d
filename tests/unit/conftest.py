"""The fast tier: pure tests, run first (scripts/dev test), in well under a minute.

Pure means no server and no subprocess: a test here that opens a socket or starts a process
fails at once, saying which, so the tier stays fast and cannot come to wait on anything. A test
that needs either belongs in tests/functional.
"""

from __future__ import annotations

import socket
import subprocess
from typing import Any, NoReturn

import pytest


class NotPure(AssertionError):
    """A fast-tier test reached outside its process."""


def _refuse(what: str) -> Any:
    def refused(*args: object, **kwargs: object) -> NoReturn:
        del args, kwargs
        raise NotPure(f"the fast tier is pure: this test {what} (move it to tests/functional)")

    return refused


@pytest.fixture(autouse=True)
def pure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _refuse("connects a socket"))
    monkeypatch.setattr(socket.socket, "connect_ex", _refuse("connects a socket"))
    monkeypatch.setattr(socket.socket, "bind", _refuse("serves on a socket"))
    monkeypatch.setattr(socket, "create_connection", _refuse("connects a socket"))
    monkeypatch.setattr(subprocess.Popen, "__init__", _refuse("starts a process"))
