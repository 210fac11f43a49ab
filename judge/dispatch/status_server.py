"""A grading node's status server on ``host:port``: ``/healthz`` (alive), ``/readyz`` (taking work, or
why not) and ``/metrics`` (Prometheus), for its orchestrator; plain ``http.server`` on daemon threads."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from judge.dispatch.metrics import Metrics
from judge.store import NodeState


class NodeStatus(Protocol):
    """What the status server reads of a node, at each request."""

    name: str
    concurrency: int
    metrics: Metrics
    state: NodeState
    detail: str | None

    @property
    def busy(self) -> int: ...


def url_of(sock: socket.socket) -> str:
    """The http URL a listening socket answers on (an IPv6 host in brackets)."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def serve_status(node: NodeStatus, host: str, port: int) -> ThreadingHTTPServer:
    """Start answering on ``host:port`` (a thread of its own); the server, to shut down."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, node.metrics.render(), "text/plain; version=0.0.4; charset=utf-8")
            elif path == "/healthz":
                self._json(200, {"status": "ok"})
            elif path == "/readyz":
                ready = node.state is NodeState.READY
                body = {"ready": ready, "reason": None if ready else node.detail or node.state.value,
                        "node": node.name, "state": node.state.value, "slots": node.concurrency,
                        "busy": node.busy}  # fmt: skip
                self._json(200 if ready else 503, body)
            else:
                self._json(404, {"error": {"code": "not_found", "message": f"no route {path[:100]}"}})

        def _json(self, status: int, body: dict[str, Any]) -> None:
            self._send(status, json.dumps(body).encode(), "application/json")

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="status-http", daemon=True).start()
    return server
