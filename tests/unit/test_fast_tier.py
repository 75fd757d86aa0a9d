"""The fast tier stays pure: what would make it wait on the world is refused (conftest.py)."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from tests.unit.conftest import NotPure


def test_a_socket_or_a_process_in_the_fast_tier_fails_the_test() -> None:
    with pytest.raises(NotPure, match="connects a socket"):
        socket.create_connection(("127.0.0.1", 9))
    with socket.socket() as sock, pytest.raises(NotPure, match="serves on a socket"):
        sock.bind(("127.0.0.1", 0))
    with pytest.raises(NotPure, match="starts a process"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)
