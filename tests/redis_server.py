"""A throw-away Redis server from Debian's ``redis-server`` package, for the scale-out tests.

It listens on a private loopback port with persistence off (``--save ""``, no append-only file), in its own
temporary directory; ``stop`` shuts it down and deletes the directory. ``restart`` stops it and starts a
fresh, empty one on the same port: what a broker restart without persistence does to queued messages.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REDIS_SERVER = "redis-server"


def why_unavailable() -> str | None:
    if shutil.which(REDIS_SERVER) is None:
        return "redis-server is not installed (scripts/setup --test installs Debian's redis-server)"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="judge-redis-"))
        self.port = _free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self._process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.base), "--logfile", str(self.base / "redis.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self._process.returncode}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 0.2) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer within 20 s")

    def kill(self) -> None:
        """Stop the server at once (its data, never saved, is gone)."""
        if self._process is not None:
            self._process.kill()
            self._process.wait(timeout=10)
            self._process = None

    def restart(self) -> None:
        self.kill()
        self.start()

    def stop(self) -> None:
        self.kill()
        shutil.rmtree(self.base, ignore_errors=True)


def started() -> Iterator[RedisServer]:
    """A fixture's body: a redis-server of the test's own, stopped afterwards; the test skips where none can
    run (``why_unavailable``)."""
    import pytest

    reason = why_unavailable()
    if reason is not None:
        pytest.skip(reason)
    server = RedisServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()
