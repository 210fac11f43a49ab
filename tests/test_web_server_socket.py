"""The listening socket judge serve hands to uvicorn must let asyncio turn Nagle's algorithm off.

asyncio sets TCP_NODELAY on accepted connections only when the socket's protocol is IPPROTO_TCP. A socket
made as socket(AF_INET, SOCK_STREAM) reports protocol 0, so responses written in two parts (head, then
body) waited for the client's delayed ACK: every request after the first on a kept-alive connection, as a
browser loading the page makes them, took 40 ms or more.
"""

from __future__ import annotations

import asyncio
import socket

from judge.service.server import bind


def test_accepted_connections_have_nodelay() -> None:
    async def scenario() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        listener = bind("127.0.0.1", 0)
        port = listener.getsockname()[1]
        server = await asyncio.start_server(handle, sock=listener)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            value = await asyncio.wait_for(seen, 10)
            writer.close()
        return value

    assert asyncio.run(scenario()) != 0
