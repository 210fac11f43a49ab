"""Cost figures (a name to a number per program and case) cached in this process and on disk as JSON.

Used by ``judge.feedback.reference_cost`` (the reference's figures) and ``judge.feedback.known_costs`` (the
known mistakes'): one JSON file per key under ``<expected cache>/../<folder>/<slug>/``, written atomically,
and the last ``entries`` keys in memory. A measurement runs under ``judge.core.expected``'s lock (one JAX
compile at a time in the judge's process).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable

from judge.core import expected as _expected
from judge.core.memo import MISSING, BoundedMemo

Figures = dict[str, float]


class FigureCache:
    """``get(slug, key, measure)``: the figures of ``key``, read or measured (``measure()``) and kept.
    ``keep_failures``: a measurement that gives None is kept too (as JSON null), so it is not retried."""

    def __init__(self, folder: str, *, keep_failures: bool, entries: int = 4096) -> None:
        self.folder = folder
        self.keep_failures = keep_failures
        self._memory: BoundedMemo[str, Figures | None] = BoundedMemo(entries)

    def get(self, slug: str, key: str, measure: Callable[[], Figures | None]) -> Figures | None:
        remembered = self._memory.get(key, MISSING)
        if remembered is not MISSING:
            return remembered
        file = _expected.cache_dir().parent / self.folder / slug / f"{key}.json"
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(file.read_text())
            if data is None and self.keep_failures:
                return self._memory.put(key, None)
            if isinstance(data, dict) and all(isinstance(v, int | float) for v in data.values()):
                return self._memory.put(key, {str(k): float(v) for k, v in data.items()})
        with _expected.JAX_LOCK:
            figures = measure()
        if figures is None and not self.keep_failures:
            return None
        with contextlib.suppress(OSError):
            file.parent.mkdir(parents=True, exist_ok=True)
            tmp = file.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps(figures))
            tmp.replace(file)
        return self._memory.put(key, figures)
