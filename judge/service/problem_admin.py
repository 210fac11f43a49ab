"""Operators add, update and retire problem versions at runtime (``/api/v1/admin/problems``).

``push`` unpacks the uploaded tar.gz into a scratch folder (``judge.authoring.problem_archive``: hostile
input, refused with ``ArchiveError`` naming what is wrong), computes the version's content hash, stores it as
``checking`` and starts its ``judge check`` in a child process (``judge.service.problem_check``) on a
thread of its own; the check's outcome makes it ``live`` or ``rejected`` with the findings. Every node
loads live versions on its next poll (``judge.dispatch.live_problems``). ``resume`` checks again what an
API node that stopped mid-check left ``checking``.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from judge.authoring.problem_archive import ArchiveLimits, unpack
from judge.core.settings import Settings
from judge.service.problem_check import CheckOutcome, run_check
from judge.store.problem_versions import ProblemVersions, VersionRecord, VersionState

log = logging.getLogger(__name__)

TENANT = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
MAX_TENANTS = 100

#: ``run_check``'s signature: settings, the unpacked problems folder, the slug, and ``track(child)``.
Checker = Callable[[Settings, Path, str, Callable[[subprocess.Popen[bytes] | None], None]], CheckOutcome]


class TenantError(ValueError):
    """A tenant list that cannot be stored (the message says which entry)."""


def parse_tenants(raw: Sequence[str] | None) -> list[str] | None:
    """Tenant names from a query (repeated or comma-separated); None: visible to every caller."""
    if not raw:
        return None
    names = [part.strip() for item in raw for part in item.split(",") if part.strip()]
    if not names:
        return None
    if len(names) > MAX_TENANTS:
        raise TenantError(f"at most {MAX_TENANTS} tenants allowed, got {len(names)}")
    for name in names:
        if not TENANT.match(name):
            raise TenantError(f"{name[:80]!r} is not a tenant name (1-64 letters, digits, '_', '.', '-')")
    return sorted(set(names))


class ProblemAdmin:
    def __init__(self, settings: Settings, versions: ProblemVersions, checker: Checker = run_check) -> None:
        self.settings = settings
        self.versions = versions
        self.checker = checker
        self._threads: list[threading.Thread] = []
        self._children: dict[str, subprocess.Popen[bytes]] = {}
        self._closed = False
        self._lock = threading.Lock()

    def limits(self) -> ArchiveLimits:
        return ArchiveLimits(max_bytes=self.settings.problem_archive_bytes)

    def push(
        self, slug: str, archive: bytes, *, tenants: list[str] | None, pushed_by: str | None
    ) -> tuple[VersionRecord, bool]:
        """Store the version and start its check: (its record, True); the same package again while it is
        checking or live: (that record, False). Raises ArchiveError."""
        scratch = Path(tempfile.mkdtemp(prefix="judge-push-"))
        try:
            package = unpack(archive, scratch, slug, self.limits())
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        record, new = self.versions.push(
            slug, package.content_hash, package.revision, archive, tenants=tenants, pushed_by=pushed_by
        )
        if new:
            self._start(record, archive)
        return record, new

    def resume(self) -> int:
        """Check again the versions left ``checking`` (their API node stopped mid-check); how many."""
        stale = self.versions.versions(state=VersionState.CHECKING)
        for record in stale:
            archive = self.versions.archive(record.slug, record.hash)
            if archive is not None:
                self._start(record, archive)
        return len(stale)

    def retire(self, slug: str, content_hash: str | None) -> list[VersionRecord]:
        return self.versions.retire(slug, content_hash)

    def wait(self, timeout: float) -> None:
        """Wait for the checks under way (tests, shutdown)."""
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)

    def close(self) -> None:
        """Stop: the checks under way are killed (their versions stay ``checking``; the next API node
        to start checks them again)."""
        with self._lock:
            self._closed = True
            children = list(self._children.values())
        for child in children:
            child.kill()

    def _start(self, record: VersionRecord, archive: bytes) -> None:
        thread = threading.Thread(
            target=self._check, args=(record, archive), name=f"check-{record.slug}", daemon=True
        )
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def _check(self, record: VersionRecord, archive: bytes) -> None:
        scratch = Path(tempfile.mkdtemp(prefix="judge-check-"))
        try:
            package = unpack(archive, scratch, record.slug, self.limits())
            key = f"{record.slug}@{record.hash}"

            def track(child: subprocess.Popen[bytes] | None) -> None:
                with self._lock:
                    if child is None:
                        self._children.pop(key, None)
                    elif self._closed:
                        child.kill()
                    else:
                        self._children[key] = child

            outcome = self.checker(self.settings, package.root / "problems", record.slug, track)
        except Exception as exc:  # the judge's own failure: rejected, saying so (the operator pushes again)
            log.exception("checking problem %s version %s failed", record.slug, record.short_hash)
            outcome = CheckOutcome(
                False,
                [
                    {
                        "check": "check",
                        "severity": "error",
                        "where": "",
                        "message": f"the judge failed ({type(exc).__name__})",
                    }
                ],
            )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        if self._closed:  # killed at shutdown: left checking, for the next start
            return
        try:
            settled = self.versions.settle(
                record.slug, record.hash, live=outcome.passed, findings=outcome.findings
            )
        except Exception:
            log.exception("storing the check of problem %s version %s failed", record.slug, record.short_hash)
            return
        if settled:
            log.info(
                "problem %s version %s: %s (%d findings)",
                record.slug,
                record.short_hash,
                "live" if outcome.passed else "rejected",
                len(outcome.findings),
            )
