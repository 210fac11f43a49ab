"""The problems a node serves: the problems folder shipped with it (the base set) plus the versions
operators pushed at runtime that are live in the store (``judge.store.problem_versions``).

``refresh`` reads the store's catalog revision (one integer); only when it changed does it read the live
versions, unpack the new ones (their archive, checked again as it unpacks, into ``cache_dir``), load them,
hand them to ``prepare`` (the API's catalog renders their details and warms their expected outputs) and
only then swap them in, so a version is never served before it is prepared. Retired versions drop out
at the same swap.

Per slug, the version served to new submissions is the newest live pushed version, else the base set's;
every loaded version of a slug (the served one first, older live ones, the base set's) can still grade
the submissions accepted for it (``versions``).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from judge.authoring.problem_archive import unpack
from judge.core.errors import JudgeError, ProblemNotFound
from judge.core.problems import Problem, ProblemSet, load_problem
from judge.store.problem_versions import ProblemVersions, VersionRecord, VersionState

log = logging.getLogger(__name__)

#: Marks a fully unpacked version folder in the cache.
_COMPLETE = ".complete"


@dataclass(frozen=True)
class _Index:
    """One consistent view: slug -> versions (the served one first) and slug -> tenant scope."""

    versions: dict[str, tuple[Problem, ...]]
    scopes: dict[str, frozenset[str] | None] = field(default_factory=dict)


class LiveProblems:
    """Thread-safe: readers see one ``_Index`` or the next, never a mix."""

    def __init__(self, base: ProblemSet, cache_dir: Path) -> None:
        self.base = base
        self.directory = base.directory
        self.cache_dir = cache_dir
        self.generation = 0
        self._index = _Index({p.slug: (p,) for p in base})
        self._loaded: dict[str, Problem] = {}  # content hash -> the pushed version loaded
        self._seen: int | None = None
        self._lock = threading.Lock()  # one refresh at a time

    def __iter__(self) -> Iterator[Problem]:
        return iter([versions[0] for versions in self._index.versions.values()])

    def __len__(self) -> int:
        return len(self._index.versions)

    def get(self, slug: str) -> Problem:
        versions = self._index.versions.get(slug)
        if not versions:
            known = ", ".join(self._index.versions) or "none"
            raise ProblemNotFound(slug, f"no such problem (known: {known})")
        return versions[0]

    def versions(self, slug: str) -> tuple[Problem, ...]:
        return self._index.versions.get(slug, ())

    def scope(self, slug: str) -> frozenset[str] | None:
        return self._index.scopes.get(slug)

    def refresh(self, store: ProblemVersions, prepare: Callable[[list[Problem]], None] | None = None) -> bool:
        """Load what changed in the store since the last refresh; True when the problems served changed.
        Raises the store's errors (the caller polls again later)."""
        with self._lock:
            revision = store.revision()
            if revision == self._seen:
                return False
            live = store.versions(state=VersionState.LIVE)
            loaded: dict[str, Problem] = {}
            fresh: list[Problem] = []
            for version in live:
                problem = self._loaded.get(version.hash)
                if problem is None:
                    problem = self._load(store, version)
                    if problem is None:
                        continue
                    fresh.append(problem)
                loaded[version.hash] = problem
            if fresh and prepare is not None:
                try:
                    prepare(fresh)  # before they are served
                except Exception:  # a reference failing on an example: served all the same, as at start
                    log.exception("preparing problem versions %s failed", [p.slug for p in fresh])
            by_slug: dict[str, list[Problem]] = {}
            scopes: dict[str, frozenset[str] | None] = {}
            newest_first = sorted(
                (v for v in live if v.hash in loaded), key=lambda v: v.live_at or v.updated_at, reverse=True
            )
            for version in newest_first:
                if version.slug not in by_slug:
                    scopes[version.slug] = None if version.tenants is None else frozenset(version.tenants)
                by_slug.setdefault(version.slug, []).append(loaded[version.hash])
            for problem in self.base:
                by_slug.setdefault(problem.slug, []).append(problem)
            self._index = _Index({slug: tuple(ps) for slug, ps in sorted(by_slug.items())}, scopes)
            self._loaded = loaded
            self._seen = revision
            self.generation += 1
            return True

    def _load(self, store: ProblemVersions, version: VersionRecord) -> Problem | None:
        """The version unpacked into the cache (once) and loaded; None (logged) when it cannot be."""
        folder = self.cache_dir / f"{version.slug}-{version.hash[:16]}"
        try:
            if not (folder / _COMPLETE).is_file():
                archive = store.archive(version.slug, version.hash)
                if archive is None:
                    return None
                self.cache_dir.mkdir(parents=True, exist_ok=True)
                scratch = Path(tempfile.mkdtemp(prefix=".unpack-", dir=self.cache_dir))
                try:
                    package = unpack(archive, scratch, version.slug)
                    if package.content_hash != version.hash:
                        raise JudgeError(
                            f"its files hash to {package.content_hash[:12]}, not {version.short_hash}"
                        )
                    (scratch / _COMPLETE).write_text(version.hash)
                    shutil.rmtree(folder, ignore_errors=True)
                    scratch.rename(folder)
                finally:
                    shutil.rmtree(scratch, ignore_errors=True)
            return load_problem(folder / "problems" / version.slug)
        except Exception as exc:  # a version that passed its check but does not load here: skip it, say so
            log.error("problem %s version %s cannot be loaded: %s", version.slug, version.short_hash, exc)
            return None
