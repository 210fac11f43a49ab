"""A throw-away PostgreSQL server from Debian's packages, for the storage tests.

PostgreSQL refuses to run as root, so ``initdb`` and ``pg_ctl`` run as the ``postgres`` user
(``runuser``) on a private directory, listening only on a private Unix socket in that directory (no TCP).
``stop`` shuts it down and deletes the directory: nothing is left behind.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

PG_ROOT = Path("/usr/lib/postgresql")


def pg_bin() -> Path | None:
    versions = sorted(
        (p for p in PG_ROOT.glob("*/bin") if (p / "pg_ctl").exists()), key=lambda p: p.parent.name
    )
    return versions[-1] if versions else None


def why_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "the PostgreSQL tests start a server as the postgres user and need root"
    if pg_bin() is None:
        return "PostgreSQL is not installed (scripts/setup --test installs Debian's postgresql)"
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return "there is no postgres user (Debian's postgresql package creates it)"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    def __init__(self) -> None:
        bindir = pg_bin()
        if bindir is None:
            raise RuntimeError("PostgreSQL is not installed")
        self.bin = bindir
        self.base = Path(tempfile.mkdtemp(prefix="judge-pg-"))
        self.data = self.base / "data"
        self.port = _free_port()  # names the socket file; nothing listens on TCP
        self._names = itertools.count()
        user = pwd.getpwnam("postgres")
        os.chown(self.base, user.pw_uid, user.pw_gid)
        os.chmod(self.base, 0o755)

    def _as_postgres(self, *argv: str) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *argv],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.base,
        )

    def start(self) -> None:
        self._as_postgres(
            str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
            "--no-sync",
        )  # fmt: skip
        self.resume()

    def resume(self) -> None:
        """Start the server on its existing data (after ``halt``)."""
        options = f"-p {self.port} -k {self.base} -c listen_addresses='' -c fsync=off -c max_connections=200"
        log = str(self.base / "server.log")
        pg_ctl = str(self.bin / "pg_ctl")
        self._as_postgres(pg_ctl, "-D", str(self.data), "-l", log, "-w", "-t", "60", "-o", options, "start")

    def halt(self) -> None:
        """Stop the server, keeping its data (a database outage; ``resume`` ends it)."""
        self._as_postgres(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@/{database}?host={self.base}&port={self.port}"

    def new_database(self) -> str:
        """A fresh empty database; its SQLAlchemy URL."""
        import psycopg

        name = f"judge_test_{next(self._names)}"
        with psycopg.connect(host=str(self.base), port=self.port, user="postgres", dbname="postgres") as conn:
            conn.autocommit = True
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            self._as_postgres(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.base, ignore_errors=True)
