"""A forward HTTP proxy for the tests: CONNECT tunnels, counted by target.

What a kubeconfig's ``proxy-url`` points at in a company network. It only tunnels: TLS stays
between the client and the API server, as through a real proxy.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter

from tests.loopserver import LoopServer


class ForwardProxy(LoopServer):
    def __init__(self) -> None:
        self.tunnels: Counter[str] = Counter()  # "host:port" → CONNECTs
        self._server: asyncio.Server | None = None
        self._open_loop()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
            if method != "CONNECT":
                writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                return
            host, port = target.rsplit(":", 1)
            self.tunnels[target] += 1
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except (OSError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            writer.close()
