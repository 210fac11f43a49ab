"""The judge's memory of decoded cache files (``judge.core.decoded_trees``): served while the file is
unchanged, read again when it changes or goes, read-only, bounded."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from judge.core.decoded_trees import DecodedTrees
from sandbox.shared.wire import ProtocolError, dumps_tree


def _write(path: Path, tree: object) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(dumps_tree(tree))
    tmp.replace(path)


def test_an_unchanged_file_is_decoded_once_and_its_arrays_are_read_only(tmp_path: Path) -> None:
    trees = DecodedTrees()
    file = tmp_path / "a.frame"
    _write(file, {"w": np.arange(4, dtype=np.float32), "b": [np.ones(2, np.int32), (np.zeros(1),)]})
    first = trees.read(file)
    assert trees.read(file) is first
    np.testing.assert_array_equal(first["w"], [0, 1, 2, 3])
    for leaf in (first["w"], first["b"][0], first["b"][1][0]):
        with pytest.raises(ValueError, match="read-only"):
            leaf[0] = 7


def test_a_replaced_file_is_read_again_and_a_removed_one_raises(tmp_path: Path) -> None:
    trees = DecodedTrees()
    file = tmp_path / "a.frame"
    _write(file, np.arange(3, dtype=np.float32))
    trees.read(file)
    _write(file, np.arange(5, dtype=np.float32))  # a new inode, whatever the clock's resolution
    np.testing.assert_array_equal(trees.read(file), [0, 1, 2, 3, 4])
    file.unlink()
    with pytest.raises(OSError):
        trees.read(file)


def test_a_damaged_file_raises_protocol_error_and_is_not_kept(tmp_path: Path) -> None:
    trees = DecodedTrees()
    file = tmp_path / "a.frame"
    file.write_bytes(b"\x00\x00\x00\x05junk!")
    with pytest.raises(ProtocolError):
        trees.read(file)
    _write(file, np.ones(2, np.float32))
    np.testing.assert_array_equal(trees.read(file), [1, 1])


def test_at_most_the_bound_is_kept_the_oldest_dropped_first(tmp_path: Path) -> None:
    trees = DecodedTrees(entries=3)
    files = [tmp_path / f"{i}.frame" for i in range(4)]
    for i, file in enumerate(files):
        _write(file, np.full(100, i, np.float32))
    kept = [trees.read(file) for file in files[:3]]
    trees.read(files[3])  # drops files[0], the oldest
    assert trees.read(files[1]) is kept[1] and trees.read(files[2]) is kept[2]
    again = trees.read(files[0])
    assert again is not kept[0]
    np.testing.assert_array_equal(again, kept[0])
    os.utime(files[2], ns=(1, 1))  # a changed stamp: read again
    assert trees.read(files[2]) is not kept[2]
