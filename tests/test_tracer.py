"""Units of the tracer that need no sandbox: loading code, the mutation check, the output skeleton."""

from __future__ import annotations

import os
from collections import OrderedDict, defaultdict
from typing import Any, NamedTuple

import numpy as np
import pytest

from sandbox.inside.tracer import CaseFailure, find_mutation, load_function, skeleton_node, snapshot
from sandbox.shared.tree import BadLeaf, OtherNode, TreeTooDeep, to_host


def test_a_byte_order_mark_is_read_like_python_reads_a_file() -> None:
    fn = load_function("\ufeffdef f(x):\n    return x\n", "f")
    assert fn(3) == 3


def test_a_nul_byte_gives_its_line() -> None:
    with pytest.raises(CaseFailure) as info:
        load_function("def f(x):\n    return x\n# \x00\n", "f")
    assert info.value.verdict == "compile_error" and "line 3" in info.value.message


def test_a_syntax_error_names_its_line() -> None:
    with pytest.raises(CaseFailure) as info:
        load_function("def f(x):\n    return x +\n", "f")
    assert info.value.verdict == "compile_error" and "line 2" in info.value.message


def test_key_order_alone_is_not_a_mutation() -> None:
    params = {"a": object(), "b": object(), "c": [object(), object()]}
    snap = snapshot(params)
    items = list(params.items())
    params.clear()
    params.update(reversed(items))
    assert find_mutation("params", snap) is None


def test_values_moved_between_keys_are_reported_not_a_crash() -> None:
    # The input of issue 7.10: keys re-inserted in a new order so the values line up by position.
    params = {"a": object(), "b": object()}
    snap = snapshot(params)
    keys = list(params)
    values = [params[k] for k in keys]
    params.clear()
    params.update(zip(reversed(keys), values, strict=True))
    assert find_mutation("params", snap) == 'params["a"] was replaced inside the input dict'


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda t: t.__setitem__("new", 1), "key 'new' was added"),
        (lambda t: t.pop("a"), "key 'a' was removed"),
        (lambda t: t["l"].append(1), "changed length from 2 to 3"),
        (lambda t: t["l"].__setitem__(1, object()), 'params["l"][1] was replaced'),
    ],
)
def test_mutations_are_named(change: Any, words: str) -> None:
    params = {"a": object(), "l": [object(), object()]}
    snap = snapshot(params)
    change(params)
    found = find_mutation("params", snap)
    assert found is not None and words in found


class GradingProcesses(NamedTuple):
    first: Any
    second: Any


def _host(tree: Any) -> Any:
    return to_host(tree, lambda x: isinstance(x, np.ndarray), lambda x: None)


def test_container_subclasses_read_as_their_base() -> None:
    a = np.zeros(1)
    host = _host(GradingProcesses(OrderedDict(x=a), defaultdict(list, y=[a])))
    assert type(host) is tuple and type(host[0]) is dict and type(host[1]) is dict
    assert type(host[1]["y"]) is list


def test_other_leaves_are_named_and_the_depth_is_bounded() -> None:
    assert _host({"a": "text"}) == {"a": BadLeaf("str")}
    node: Any = np.zeros(1)
    for _ in range(100):
        node = {"k": node}
    with pytest.raises(TreeTooDeep):
        _host(node)


def test_skeletons_place_each_output_once() -> None:
    from sandbox.inside.tracer import _Out

    host = {"a": _Out(0), 3: [_Out(1), None], "n": OtherNode("N", (_Out(2),)), "s": BadLeaf("str")}
    node = skeleton_node(host)
    assert node == {
        "dict": [
            ["a", {"out": 0}],
            [{"int": "3"}, {"list": [{"out": 1}, {"none": True}]}],
            ["n", {"node": {"type": "N", "children": [{"out": 2}]}}],
            ["s", {"bad": "str"}],
        ]
    }


def test_mounts_under_tmp_are_kept_when_a_private_tmp_covers_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout under /tmp has its venv and sandbox package bound under /tmp by bwrap: a forked tracer's
    private /tmp must bind them again (without it, every lazy import failed: ModuleNotFoundError)."""
    from sandbox.inside import confine

    points = ["/", "/tmp", "/tmp/ci/.venv", "/tmp/ci/.venv/lib/x", "/tmp/ci/sandbox", "/tmpfoo", "/usr"]
    monkeypatch.setattr(confine, "_mount_points", lambda: points)
    opened: list[str] = []

    def counted_open(path: str, flags: int) -> int:
        opened.append(path)
        return len(opened)

    monkeypatch.setattr(os, "open", counted_open)
    kept = confine._open_mounts_under("/tmp")
    assert [path for path, _ in kept] == ["/tmp/ci/.venv", "/tmp/ci/sandbox"] == opened
