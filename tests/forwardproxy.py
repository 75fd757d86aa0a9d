"""Forward proxies for the tests: HTTP CONNECT and SOCKS5 tunnels, counted by target.

What a kubeconfig's ``proxy-url`` points at in a company network (``http://``) or behind a
bastion (``socks5://``, an ``ssh -D``). They only tunnel: TLS stays between the client and the
API server, as through a real proxy.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections import Counter

from tests.loopserver import Listener, LoopServer, handed_over


class _Tunnels(LoopServer):
    """A listener on loopback whose ``_client`` opens tunnels, counted by target."""

    def __init__(self) -> None:
        self.tunnels: Counter[str] = Counter()  # "host:port" → tunnels opened
        self._server: asyncio.Server | None = None
        self._listener: Listener | None = None
        # both ends of every tunnel, for the close
        self._ends: weakref.WeakSet[asyncio.StreamWriter] = weakref.WeakSet()
        self._open_loop()

    async def _start(self) -> None:
        self._listener = Listener()
        self.port = self._listener.port
        self._server = await asyncio.start_server(self._taken, sock=self._listener)

    async def _close(self) -> None:
        """As the fault proxy closes: no connection taken as it stops is left open."""
        await handed_over(self._listener)
        if self._server is not None:
            self._server.close()
        for end in list(self._ends):
            end.transport.abort()

    async def _taken(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._ends.add(writer)
        await self._client(reader, writer)

    async def _upstream(
        self, host: str, port: int
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        up_reader, up_writer = await asyncio.open_connection(host, port)
        self._ends.add(up_writer)
        return up_reader, up_writer

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError


class ForwardProxy(_Tunnels):
    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
            if method != "CONNECT":
                writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                return
            host, port = target.rsplit(":", 1)
            self.tunnels[target] += 1
            up_reader, up_writer = await self._upstream(host, int(port))
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


class Socks5Proxy(_Tunnels):
    """RFC 1928, no authentication, CONNECT only: ``tunnels`` counts targets as the client
    named them (a host name when the client left the resolving to the proxy)."""

    @property
    def url(self) -> str:
        return f"socks5://127.0.0.1:{self.port}"

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            version, count = await reader.readexactly(2)
            methods = await reader.readexactly(count)
            if version != 5 or 0 not in methods:
                writer.write(b"\x05\xff")
                return
            writer.write(b"\x05\x00")
            _v, command, _r, kind = await reader.readexactly(4)
            if kind == 1:
                host = ".".join(str(b) for b in await reader.readexactly(4))
            elif kind == 3:
                host = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
            else:
                writer.write(b"\x05\x08\x00\x01" + bytes(6))  # address type not supported
                return
            port = int.from_bytes(await reader.readexactly(2), "big")
            if command != 1:
                writer.write(b"\x05\x07\x00\x01" + bytes(6))  # command not supported
                return
            self.tunnels[f"{host}:{port}"] += 1
            up_reader, up_writer = await self._upstream(host, port)
            writer.write(b"\x05\x00\x00\x01" + bytes(6))
            await writer.drain()
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except (OSError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                writer.close()
