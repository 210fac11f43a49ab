"""``judge serve``: build the services (failing closed before binding), then run uvicorn.

One process: the in-process dispatcher and the warm pool live in it. SIGTERM or Ctrl-C stop it cleanly
(running gradings get ``shutdown_grace_s`` to finish; the rest are graded after the next start).

The server bounds slow and hostile clients itself (``judge.service.protocol``, ``bodytimeout``,
``logflood``): header and body timeouts, an idle keep-alive limit, a connection limit kept below the
open-files limit, and logs that a flood of connections cannot flood.
"""

from __future__ import annotations

import logging
import resource
import signal
import socket
import sys

from judge.core.errors import JudgeError, ProblemError, SandboxRefused
from judge.core.settings import Settings

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
#: Largest request line plus headers while they arrive (h11 answers 400 past it); a head that arrives
#: whole is held to the same size by judge.service.bodylimit (431).
#: (judge.service.bodylimit.MAX_HEADER_BYTES, the same number: this module imports no web framework.)
H11_MAX_HEADER_BYTES = 16 * 1024
#: File descriptors kept free beside the connections: the sandbox pool's pipes, the database, logs.
FD_RESERVE = 256
#: The sandbox pool's host side waits on some of its pipes with select(), which cannot watch a
#: descriptor numbered FD_SETSIZE or above (measured: with 1,100 descriptors open, no worker starts).
#: Every connection is a descriptor and takes the lowest free number, so connections must leave the
#: numbers below FD_SETSIZE to the pool: at most FD_SETSIZE - FD_RESERVE of them.
FD_SETSIZE = 1024


def _say(message: str) -> None:
    print(f"judge: {message}", file=sys.stderr, flush=True)


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def connection_limit(wanted: int) -> int:
    """``wanted``, lowered to fit the open-files limit (raised to its hard limit first) and FD_SETSIZE,
    minus FD_RESERVE."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    fits = max(16, min(soft, FD_SETSIZE) - FD_RESERVE)
    if wanted > fits:
        why = f"the open-files limit is {soft}" if soft < FD_SETSIZE else "the sandbox pool needs the rest"
        _say(f"max_connections {wanted} lowered to {fits}: {why}")
    return min(wanted, fits)


def proxies(forwarded_allow_ips: str | None) -> frozenset[str] | None:
    """Addresses exempt from the per-address connection limit: the trusted reverse proxies, through
    which every client connects (None: every address is exempt, ``*``)."""
    if forwarded_allow_ips is None:
        return frozenset()
    names = frozenset(part.strip() for part in forwarded_allow_ips.split(",") if part.strip())
    return None if "*" in names else names


def serve(settings: Settings) -> int:
    import uvicorn
    from sqlalchemy.exc import SQLAlchemyError

    from judge.dispatch.status_server import url_of
    from judge.service import logflood
    from judge.service.apikeys import KeyFileError
    from judge.service.app import create_app
    from judge.service.protocol import GuardedH11Protocol
    from judge.service.state import Services

    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logflood.install()
    try:
        services = Services.build(settings)
    except SandboxRefused as exc:
        _say(f"refusing to start: {exc}")
        return EXIT_USAGE
    except (ProblemError, KeyFileError) as exc:
        _say(f"refusing to start: {exc}")
        return EXIT_USAGE
    except SQLAlchemyError as exc:
        _say(f"cannot open the database: {type(exc).__name__}: {exc}")
        return EXIT_FAILED
    except JudgeError as exc:
        _say(f"refusing to start: {exc}")
        return EXIT_FAILED
    try:
        sock = bind(settings.host, settings.port)
    except OSError as exc:
        services.engine.close()
        services.store.close()
        _say(f"cannot listen on {settings.host}:{settings.port}: {exc.strerror}")
        return EXIT_FAILED
    app = create_app(services=services, manage=True)
    protocol = GuardedH11Protocol.configured(
        max_connections=connection_limit(settings.max_connections),
        max_per_address=settings.max_connections_per_address,
        exempt=proxies(settings.forwarded_allow_ips),
        header_timeout_s=settings.header_timeout_s,
    )
    config = uvicorn.Config(
        app,
        http=protocol,
        timeout_keep_alive=max(1, round(settings.keep_alive_s)),
        h11_max_incomplete_event_size=H11_MAX_HEADER_BYTES,
        log_level=settings.log_level,
        proxy_headers=settings.forwarded_allow_ips is not None,
        forwarded_allow_ips=settings.forwarded_allow_ips,
        timeout_graceful_shutdown=int(settings.shutdown_grace_s) + 5,
    )
    url = url_of(sock)
    _say(f"serving on {url}  (API docs {url}/docs, readiness {url}/readyz; database {_safe_db(settings)})")
    # uvicorn shuts down gracefully on SIGTERM/SIGINT and then re-raises the signal; a requested stop that
    # went cleanly is a success, so exit 0 then instead of dying by the signal.
    for stop in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop, _exit_ok)
    uvicorn.Server(config).run(sockets=[sock])
    return EXIT_OK


def _exit_ok(_signum: int, _frame: object) -> None:
    raise SystemExit(EXIT_OK)


def _safe_db(settings: Settings) -> str:
    """The database URL without its password."""
    from sqlalchemy.engine import make_url

    from judge.store import database_url

    url = make_url(database_url(settings.database_url, settings.data_dir))
    return url.render_as_string(hide_password=True)
