"""Trees read from the judge's cache files (``sandbox.shared.wire.dumps_tree`` frames), kept decoded.

A grading reads every case's expected output (and, where the problem has them, its gradient and its
magnitudes) from the disk cache (``judge.core.expected``) before its sandbox work starts: reading and
decoding those frames again for each grading cost 2-5 ms of the judge's CPU per Submit on the seed
problems, all of it on the grading's clock. The files are named by a digest of what they hold (the
reference, the case, the versions), so a decoded tree never goes stale while its file is unchanged; each
read still checks the file (its size, modification time and inode), so the disk stays the record and a
file replaced or removed is read again.

The trees are shared by every grading that reads them: their arrays are made read-only, so a caller that
tried to change one would fail loudly instead of changing what later gradings compare with. Entries are
dropped least recently used first once their arrays exceed ``MAX_BYTES``.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from sandbox.shared.wire import loads_tree

#: The most array bytes kept decoded (an entry larger than this is decoded for its caller and not kept).
MAX_BYTES = 256 * 1024 * 1024

_Stamp = tuple[int, int, int]


class DecodedTrees:
    """An LRU of decoded trees by file path, validated by the file's stamp on every read. Thread-safe."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Path, tuple[_Stamp, Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def read(self, path: Path) -> Any:
        """The tree in ``path``: from memory while the file is unchanged, else read and decoded. Raises
        what reading (OSError) or decoding (``ProtocolError``) raises."""
        stat = os.stat(path)
        stamp = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
        with self._lock:
            entry = self._entries.get(path)
            if entry is not None and entry[0] == stamp:
                self._entries.move_to_end(path)
                return entry[1]
        tree = loads_tree(path.read_bytes())
        size = _freeze(tree)
        with self._lock:
            old = self._entries.pop(path, None)
            if old is not None:
                self._bytes -= old[2]
            if size <= self.max_bytes:
                self._entries[path] = (stamp, tree, size)
                self._bytes += size
                while self._bytes > self.max_bytes:
                    _, (_, _, dropped) = self._entries.popitem(last=False)
                    self._bytes -= dropped
        return tree

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


def _freeze(tree: Any) -> int:
    """Make every array of ``tree`` (in dicts, lists and tuples, and in the attributes of other nodes)
    read-only; their total bytes."""
    total = 0
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, np.ndarray):
            node.flags.writeable = False
            total += node.nbytes
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
        elif hasattr(node, "__dict__"):
            stack.extend(vars(node).values())
    return total


#: The judge process's one memory of decoded cache files.
TREES = DecodedTrees()
