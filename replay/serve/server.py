"""The shell around the app: uvicorn on a socket bound before it starts, so the address
(including a port picked by the system for `--port 0`) is known and printed first."""

from __future__ import annotations

import socket
from collections.abc import Callable
from datetime import datetime
from types import FrameType

from replay.serve.app import Server
from replay.serve.reading import Replay


def bind(host: str, port: int) -> socket.socket:
    """A listening socket; OSError (address in use, no such address) is the caller's to word."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def run(replay: Replay, sock: socket.socket, speed: float, at: datetime | None = None, on_start: Callable[[], None] | None = None) -> None:
    """Serve until interrupted (Ctrl-C ends open watches within a second)."""
    import uvicorn

    api = Server(replay, speed, at=at)

    class _Uvicorn(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            api.stop()  # open watches end now, so shutting down waits for none of them
            super().handle_exit(sig, frame)

    config = uvicorn.Config(
        api.app(),
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=1,
        access_log=False,
    )
    server = _Uvicorn(config)
    if on_start is not None:
        on_start()
    server.run(sockets=[sock])
