"""A TLS port that answers a plain-HTTP request the way kube-apiserver's does.

kube-apiserver is a Go ``net/http`` TLS server. When the first five bytes a client sends look
like an HTTP request rather than a TLS record (``GET /``, ``HEAD ``, ``POST ``, ``PUT /``,
``OPTIO``), Go writes ``400 Bad Request`` with "Client sent an HTTP request to an HTTPS server."
and closes. ``kubectl --server host:port`` picks ``http://`` and then shows that answer. asyncio's
TLS server drops such a connection instead, so kubectl said only ``EOF``.

Each accepted socket is first peeked at (``MSG_PEEK``: the bytes stay for the TLS handshake to
read from its start), and only then handed to asyncio with the server's TLS context.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import Callable

HTTP_STARTS = (
    b"GET /",
    b"HEAD ",
    b"POST ",
    b"PUT /",
    b"OPTIO",
)  # Go's tlsRecordHeaderLooksLikeHTTP
ANSWER = b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
HEADER_BYTES = 5  # a TLS record header
READ_AHEAD = 65536
FIRST_BYTES_TIMEOUT = 10.0  # a client that connects and says nothing is closed after it
HANDSHAKE_GRACE = 1.0  # at shutdown, for handshakes under way


class SniffingListener:
    """Accepts on ``sock`` and serves TLS connections with ``protocol_factory`` (aiohttp's)."""

    def __init__(
        self,
        sock: socket.socket,
        protocol_factory: Callable[[], asyncio.BaseProtocol],
        context: ssl.SSLContext,
    ) -> None:
        self.sock = sock
        self._factory = protocol_factory
        self._context = context
        self._accepting: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        self.sock.setblocking(False)
        self._accepting = asyncio.get_running_loop().create_task(self._accept())

    async def close(self) -> None:
        """Stop accepting; connections already handed to aiohttp are its to close.

        A handshake under way is given a moment to end first: cancelled mid-handshake, asyncio
        starts a TLS shutdown that the stopping loop never finishes, and the socket under it is
        left for the garbage collector (a ResourceWarning in whichever test it lands).
        """
        if self._accepting is not None:
            self._accepting.cancel()
        if self._pending:
            await asyncio.wait(list(self._pending), timeout=HANDSHAKE_GRACE)
        tasks = [t for t in (self._accepting, *self._pending) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.sock.close()

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, _ = await loop.sock_accept(self.sock)
            except OSError:  # EMFILE, ECONNABORTED: as asyncio's own server, keep accepting
                await asyncio.sleep(0.05)
                continue
            task = loop.create_task(self._serve(conn))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)

    async def _serve(self, conn: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        conn.setblocking(False)
        try:
            head = await _peek(loop, conn, HEADER_BYTES, FIRST_BYTES_TIMEOUT)
            if head.startswith(HTTP_STARTS):
                # Go's first read takes what has arrived, the request with it; a socket closed
                # with unread bytes sends a reset, and the client loses the answer.
                with contextlib.suppress(BlockingIOError):
                    conn.recv(READ_AHEAD)
                await loop.sock_sendall(conn, ANSWER)
                conn.close()
                return
            await loop.connect_accepted_socket(self._factory, conn, ssl=self._context)
        except (OSError, TimeoutError, ssl.SSLError):
            conn.close()  # a failed handshake: asyncio has logged nothing; the client sees a close
        except asyncio.CancelledError:
            conn.close()
            raise


async def _peek(
    loop: asyncio.AbstractEventLoop, conn: socket.socket, size: int, timeout: float
) -> bytes:
    """The first ``size`` bytes the client sent (fewer if it closed first), left unread."""
    deadline = loop.time() + timeout
    while True:
        try:
            head = conn.recv(size, socket.MSG_PEEK)
        except BlockingIOError:
            head = None
        if head is not None and (len(head) >= size or not head):
            return head
        if loop.time() >= deadline:
            raise TimeoutError
        if head is None:
            await _readable(loop, conn, deadline - loop.time())
        else:
            await asyncio.sleep(0.005)  # part of a header: readable stays true until the rest


async def _readable(loop: asyncio.AbstractEventLoop, conn: socket.socket, timeout: float) -> None:
    ready = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(conn.fileno(), wake)
    try:
        await asyncio.wait_for(ready, max(timeout, 0.0))
    finally:
        with contextlib.suppress(ValueError, OSError):
            loop.remove_reader(conn.fileno())
