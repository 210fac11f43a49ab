"""A bounded, thread-safe memo: what the judge remembers in its process across gradings.

Every memo of the trusted side (the known mistakes' outputs, candidates and answers in
``judge.feedback.mistakes``, a program text's marks in ``judge.feedback.program_view``, cost figures in
``judge.feedback.figure_cache``, decoded cache files in ``judge.core.decoded_trees``) keeps at most
``entries`` items and drops the oldest first (insertion order); a value may be None (a failure remembered),
so ``get`` takes the default that means "not remembered" (``MISSING``), and ``get_or_make`` tells the two
apart itself. ``make`` runs outside the lock: two threads may make the same value once each.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")


class Missing(enum.Enum):
    """``get``'s default that means "not remembered" where None is a value (narrowed by ``is``)."""

    MISSING = enum.auto()


MISSING = Missing.MISSING


class BoundedMemo(Generic[K, V]):
    """At most ``entries`` keys, the oldest dropped first; safe to use from several grading threads."""

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self._items: dict[K, V] = {}
        self._lock = threading.Lock()

    def get(self, key: K, default: D) -> V | D:
        with self._lock:
            return self._items.get(key, default)

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The value remembered for ``key``, or ``make()``'s, remembered."""
        with self._lock:
            value = self._items.get(key, MISSING)
        return self.put(key, make()) if value is MISSING else value

    def put(self, key: K, value: V) -> V:
        """Remember ``value`` for ``key``; returns ``value``."""
        with self._lock:
            if key not in self._items and len(self._items) >= self.entries:
                self._items.pop(next(iter(self._items)))
            self._items[key] = value
        return value

    def __len__(self) -> int:
        return len(self._items)
