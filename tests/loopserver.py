"""A test server on an asyncio loop of its own, in a thread: started on entry, and on exit
stopped with every task it still runs cancelled and its loop closed, so that a socket left open
warns in the test that used it (``gc.collect``), not in a later one."""

from __future__ import annotations

import asyncio
import gc
import socket
import threading
from typing import Any, Self


class LoopServer:
    port = 0

    def _open_loop(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _start(self) -> None:
        """Listen (on the loop), setting ``port``."""
        raise NotImplementedError

    async def _close(self) -> None:
        """Stop listening (on the loop); what still runs is cancelled after."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        async def stop() -> None:
            await self._close()
            pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            await asyncio.sleep(0.1)  # transports told to close finish closing on the loop

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        gc.collect()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()
        self._loop.close()


class Listener(socket.socket):
    """A listening socket on loopback that can stop taking connections before it is closed.

    asyncio (3.11) takes a connection on one turn of its loop and makes its transport on a
    later one; a server closed in between fails that (``Server._attach`` asserts it still
    listens) and leaks the connection's socket and transport. Taking none first, then letting
    those taken reach their handlers (``handed_over``), then closing, leaks none.
    """

    taking = True

    def __init__(self) -> None:
        super().__init__(socket.AF_INET, socket.SOCK_STREAM)
        self.bind(("127.0.0.1", 0))
        self.listen(128)
        self.setblocking(False)

    def accept(self) -> tuple[socket.socket, Any]:
        if not self.taking:
            raise BlockingIOError  # to asyncio's listener: nothing more to take now
        return super().accept()

    @property
    def port(self) -> int:
        port: int = self.getsockname()[1]
        return port


async def handed_over(listener: Listener | None) -> None:
    """Stop taking connections, and let those taken reach their handlers.

    Three turns of the loop while it still listens: a connection taken on the last turn gets its
    transport on the next, its handler on the one after, its handler's task then.
    """
    if listener is not None:
        listener.taking = False
    for _ in range(3):
        await asyncio.sleep(0)
