"""A slowloris spread over many client addresses, against ``judge serve``'s HTTP protocol at its
production limits, this checkout's and an older one's side by side in one run (loopback only).

For each count of slow addresses (127.0.5.x), each address holds ``--per-address`` connections (the
per-address cap, 64 by default) that send a request line and then one header line every 0.5 s, never
the blank line that ends the headers, reopened as soon as the server closes them. Meanwhile a probe
from an address of its own (127.0.6.x) asks for ``/`` every 0.25 s with a 5 s timeout. The server is
uvicorn with ``judge.service.protocol.GuardedH11Protocol`` configured as ``judge serve`` configures it
(``max_connections`` 768 after the open-files check, 64 per address, a 10 s header timeout), in a
process of its own, serving a minimal ASGI app (the protocol is what is measured, not the routes).

Printed per address count: probes answered / sent for each checkout, and the slow connections the
attackers held at the end (as they see them). The issue's trial: 14 or more addresses made main's
service refuse everyone.

    .venv/bin/python bench/bench_slowloris.py [--old /path/to/old/checkout] [--addresses 4,8,14,24,40]
        [--per-address 64] [--seconds 20]

Without ``--old`` only this checkout is measured. Make the old checkout with
``git worktree add /tmp/judge-old 4dc4d76`` (and remove it afterwards).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import multiprocessing
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MAX_CONNECTIONS, PER_ADDRESS, HEADER_TIMEOUT_S = 768, 64, 10.0


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _protocol_class(checkout: Path) -> Any:
    spec = importlib.util.spec_from_file_location(
        f"protocol_{abs(hash(str(checkout)))}", checkout / "judge" / "service" / "protocol.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.GuardedH11Protocol


def _serve(checkout: str, sock: socket.socket) -> None:
    import logging

    import uvicorn

    logging.disable(logging.WARNING)  # a refusal per connection (judge serve rate-limits its log)

    protocol = _protocol_class(Path(checkout)).configured(
        max_connections=MAX_CONNECTIONS, max_per_address=PER_ADDRESS, header_timeout_s=HEADER_TIMEOUT_S
    )
    config = uvicorn.Config(app, http=protocol, log_level="critical", timeout_keep_alive=5)
    uvicorn.Server(config).run(sockets=[sock])


def _hold(address: str, port: int, count: int, stop: threading.Event, held: list[int]) -> None:
    socks: list[socket.socket] = []
    try:
        while not stop.is_set():
            while len(socks) < count and not stop.is_set():
                sock = socket.socket()
                sock.settimeout(2)
                try:
                    sock.bind((address, 0))
                    sock.connect(("127.0.0.1", port))
                    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
                except OSError:
                    sock.close()
                    stop.wait(0.05)
                    break
                socks.append(sock)
            for sock in list(socks):
                try:
                    sock.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    socks.remove(sock)
                    sock.close()
            held.append(len(socks))
            stop.wait(0.5)
    finally:
        for sock in socks:
            sock.close()


def measure(checkout: Path, addresses: int, per_address: int, seconds: float) -> tuple[int, int, int]:
    """(probes answered, probes sent, slow connections the attackers believe open at the end: the
    server may have closed some they have not written to since)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    port = sock.getsockname()[1]
    server = multiprocessing.get_context("spawn").Process(target=_serve, args=(str(checkout), sock))
    server.start()
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/", timeout=2).status_code == 200:
                    break
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        stop = threading.Event()
        counts: list[list[int]] = [[] for _ in range(addresses)]
        threads = [
            threading.Thread(
                target=_hold, args=(f"127.0.5.{n + 1}", port, per_address, stop, counts[n]), daemon=True
            )
            for n in range(addresses)
        ]
        for thread in threads:
            thread.start()
        time.sleep(3)  # the slow connections open and start trickling
        answered = sent = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            sent += 1
            transport = httpx.HTTPTransport(local_address=f"127.0.6.{sent % 250 + 1}")
            with httpx.Client(transport=transport, timeout=5) as client, contextlib.suppress(httpx.HTTPError):
                answered += client.get(f"http://127.0.0.1:{port}/").status_code == 200
            time.sleep(0.25)
        held = sum(c[-1] if c else 0 for c in counts)
        stop.set()
        for thread in threads:
            thread.join(10)
        return answered, sent, held
    finally:
        server.terminate()
        server.join(10)
        sock.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--old", type=Path, default=None, help="an older checkout to measure beside this one")
    parser.add_argument("--addresses", default="4,8,14,24,40")
    parser.add_argument("--per-address", type=int, default=PER_ADDRESS)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    checkouts = [("this", ROOT)] + ([("old", args.old)] if args.old is not None else [])
    print(f"limits: {MAX_CONNECTIONS} connections, {PER_ADDRESS} per address, {HEADER_TIMEOUT_S:g} s headers")
    print(
        f"{'addresses':>9} {'slow conns':>10}  "
        + "  ".join(f"{name + ' answered':>16} {'held':>5}" for name, _ in checkouts)
    )
    for count in (int(part) for part in args.addresses.split(",")):
        row = f"{count:>9} {count * args.per_address:>10}  "
        for _name, checkout in checkouts:
            answered, sent, held = measure(checkout, count, args.per_address, args.seconds)
            row += f"{answered:>7}/{sent:<4} {answered / max(sent, 1):>4.0%} {held:>5}  "
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
