"""Trees read from the judge's cache files (``sandbox.shared.wire.dumps_tree`` frames), kept decoded.

A grading reads every case's expected output (and, where the problem has them, its gradient and its
magnitudes) from the disk cache (``judge.core.expected``) before its sandbox work starts: reading and
decoding those frames again for each grading cost 2-5 ms of the judge's CPU per Submit on the seed
problems, all of it on the grading's clock. The files are named by a digest of what they hold (the
reference, the case, the versions), so a decoded tree never goes stale while its file is unchanged; each
read still checks the file (its size, modification time and inode), so the disk stays the record and a
file replaced or removed is read again.

The trees are shared by every grading that reads them: their arrays are made read-only, so a caller that
tried to change one would fail loudly instead of changing what later gradings compare with. At most
``ENTRIES`` are kept (``judge.core.memo``, the oldest dropped first): the whole catalog's cache held 1,652
frames (8.5 MB) when this was written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from judge.core.memo import BoundedMemo
from sandbox.shared.tree import KeyArray, OtherNode
from sandbox.shared.wire import loads_tree

#: The most trees kept decoded.
ENTRIES = 4096


class DecodedTrees:
    """Decoded trees by file path and the file's stamp (size, modification time, inode). Thread-safe."""

    def __init__(self, entries: int = ENTRIES) -> None:
        self._memo: BoundedMemo[tuple[Path, int, int, int], Any] = BoundedMemo(entries)

    def read(self, path: Path) -> Any:
        """The tree in ``path``: from memory while the file is unchanged, else read and decoded. Raises
        what reading (OSError) or decoding (``ProtocolError``) raises."""
        stat = os.stat(path)
        key = (path, stat.st_size, stat.st_mtime_ns, stat.st_ino)
        return self._memo.get_or_make(key, lambda: _frozen(loads_tree(path.read_bytes())))


def _frozen(tree: Any) -> Any:
    """``tree`` with every array made read-only: the leaves of its dicts, lists, tuples and other nodes
    (``OtherNode``) and the data of its key arrays (``KeyArray``)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, np.ndarray):
            node.flags.writeable = False
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
        elif isinstance(node, OtherNode):
            stack.extend(node.children)
        elif isinstance(node, KeyArray):
            stack.append(node.data)
    return tree


#: The judge process's one memory of decoded cache files.
TREES = DecodedTrees()
