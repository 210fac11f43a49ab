"""The wire format: unit tests, and fuzz tests (hypothesis) of the frame decoder, the tree decoders and the
result interpreter asserting never an exception but ProtocolError, bounded buffers, and a verdict from the
closed set."""

from __future__ import annotations

import contextlib
import json
import struct
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge.core.grader import build_session, interpret
from judge.core.output_tree import assemble
from judge.core.problems import Problem, ProblemSet
from judge.core.verdicts import Verdict
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.reports import (
    CaseReport,
    ProgramReport,
    RawRun,
    Stop,
    decode_compiled,
    decode_failure,
    decode_load,
    decode_refused,
    decode_run_error,
)
from sandbox.session.reports import duration_ms as _ms
from sandbox.shared.tree import NonStrKey, OtherNode, split_input
from sandbox.shared.wire import (
    Blobs,
    FrameLimits,
    FrameReader,
    ProtocolError,
    decode_frame,
    decode_key,
    decode_leaves,
    decode_tree,
    dumps_tree,
    encode_frame,
    encode_key,
    json_depth,
    loads_tree,
)
from tests.conftest import FIXTURE_SLUG, FIXTURES

SMALL = FrameLimits(max_frame=1 << 16, max_json=1 << 14, max_json_depth=50, max_frames=50, max_total=1 << 20)


# ------------------------------------------------------------------------------------------ units


def test_trees_round_trip_through_one_frame() -> None:
    tree = {
        "a": np.arange(6, dtype=np.float32).reshape(2, 3),
        "b": [np.array(1.5, ml_dtypes.bfloat16), (np.zeros(0, np.int32), None)],
        "c": OtherNode("Thing", (np.ones(2, np.float16),)),
        NonStrKey("3", "int"): np.array([True, False]),
    }
    back = loads_tree(dumps_tree(tree))
    np.testing.assert_array_equal(back["a"], tree["a"])
    assert back["b"][0].dtype == ml_dtypes.bfloat16 and back["b"][1][1] is None
    assert back["b"][1][0].shape == (0,) and isinstance(back["c"], OtherNode)
    assert back[NonStrKey("3", "int")].dtype == np.bool_


def test_split_input_sorts_keys_and_flattens_in_that_order() -> None:
    node, leaves = split_input({"b": np.ones(1), "a": [{"z": np.zeros(2)}, {"y": np.full(3, 2.0)}]})
    assert [k for k, _ in node["dict"]] == ["a", "b"]
    assert [x.shape for x in leaves] == [(2,), (3,), (1,)]


@pytest.mark.parametrize("shape", [[0, 10**30], [2**31], [-1], [True], [1.5], [1] * 9, "3", [0, 2**40]])
def test_leaf_shapes_are_validated_before_any_allocation(shape: Any) -> None:
    blobs = Blobs()
    blobs.add(b"")
    frame = decode_frame(encode_frame({"type": "x"}, blobs.items)[4:], FrameLimits())
    with pytest.raises(ProtocolError):
        decode_leaves([{"leaf": {"dtype": "float32", "shape": shape, "blob": 0}}], frame)


def test_json_depth_skips_strings_and_is_linear() -> None:
    assert json_depth(b'{"a": "[[[[{{{{", "b": [[1]]}') == 3
    assert json_depth(b'["\\"[[[", [2]]') == 2
    deep = b"[" * 100_000 + b"]" * 100_000
    assert json_depth(deep) == 100_000


@pytest.mark.parametrize(
    "text",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"type": "x", "n": NaN}',
        b'{"type": "x", "n": Infinity}',
        b'{"type": "x", "n": 1e999}',
        b'{"type": "x", "n": ' + b"9" * 400 + b"}",
        b'{"type": 3}',
        b"[]",
        b"\xff\xfe",
    ],
)
def test_malformed_frames_are_protocol_errors(text: bytes) -> None:
    body = struct.pack(">I", len(text)) + text
    with pytest.raises(ProtocolError):
        decode_frame(body, FrameLimits())


def test_reader_bounds_frames_and_totals() -> None:
    reader = FrameReader(FrameLimits(max_frame=1000, max_frames=2, max_total=10_000))
    assert len(reader.feed(encode_frame({"type": "a"}) + encode_frame({"type": "b"}))) == 2
    with pytest.raises(ProtocolError, match="frames"):
        reader.feed(encode_frame({"type": "c"}))
    with pytest.raises(ProtocolError, match="cap"):
        FrameReader(FrameLimits(max_frame=1000)).feed(struct.pack(">I", 5000))
    with pytest.raises(ProtocolError, match="bytes"):
        FrameReader(FrameLimits(max_total=100)).feed(b"\x00" * 101)


def test_keys_that_pose_as_ints_cannot_break_sorting() -> None:
    assert decode_key(encode_key(12)) == NonStrKey("12", "int")
    posing = decode_key({"key": {"repr": "<fake>", "type": "int"}})
    assert isinstance(posing, NonStrKey) and posing.type_name == "int?"
    with pytest.raises(ProtocolError):
        decode_key({"int": "twelve"})
    frame = decode_frame(encode_frame({"type": "x"})[4:], FrameLimits())
    with pytest.raises(ProtocolError, match="repeats"):
        decode_tree({"dict": [["a", {"none": True}], ["a", {"none": True}]]}, frame)


@pytest.mark.parametrize(
    ("value", "kept"), [(12.5, 12.5), (-1, None), (1e9, None), (True, None), ("3", None)]
)
def test_timings_must_be_finite_numbers_in_range(value: Any, kept: Any) -> None:
    assert _ms(value) == kept


# ------------------------------------------------------------------------------------------ fuzz


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=300), max_size=20))
def test_fuzz_the_frame_reader_never_raises_anything_else(chunks: list[bytes]) -> None:
    reader = FrameReader(SMALL)
    for chunk in chunks:
        try:
            frames = reader.feed(chunk)
        except ProtocolError:
            return
        for frame in frames:
            assert isinstance(frame.message, dict) and isinstance(frame.type, str)
        assert reader.pending <= SMALL.max_frame + 4


def _wire_nodes() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False),
        st.text(max_size=5),
    )
    leaf = st.fixed_dictionaries(
        {
            "leaf": st.fixed_dictionaries(
                {
                    "dtype": st.sampled_from(["float32", "bfloat16", "int8", "object", "bool", 3]),
                    "shape": st.lists(st.integers(-2, 2**33), max_size=4) | scalars,
                    "blob": st.integers(-1, 3) | scalars,
                }
            )
        }
    )
    keys = st.one_of(
        st.text(max_size=3),
        st.fixed_dictionaries({"int": st.text(max_size=25)}),
        st.fixed_dictionaries(
            {
                "key": st.fixed_dictionaries(
                    {"repr": st.text(max_size=5), "type": st.sampled_from(["int", "x", "int?"])}
                )
            }
        ),
        scalars,
    )
    return st.recursive(
        st.one_of(
            leaf,
            st.fixed_dictionaries({"out": st.integers(-1, 5) | scalars}),
            st.just({"none": True}),
            st.fixed_dictionaries({"bad": st.text(max_size=4)}),
            scalars,
        ),
        lambda children: st.one_of(
            st.fixed_dictionaries({"dict": st.lists(st.tuples(keys, children).map(list), max_size=4)}),
            st.fixed_dictionaries({"list": st.lists(children, max_size=4)}),
            st.fixed_dictionaries({"tuple": st.lists(children, max_size=4)}),
            st.fixed_dictionaries(
                {
                    "node": st.fixed_dictionaries(
                        {"type": st.text(max_size=4), "children": st.lists(children, max_size=3)}
                    )
                }
            ),
            st.dictionaries(st.text(max_size=4), children, max_size=3),
        ),
        max_leaves=25,
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_wire_nodes(), st.lists(st.binary(max_size=64), max_size=4))
def test_fuzz_tree_decoders_raise_only_protocol_errors(node: Any, blobs: list[bytes]) -> None:
    frame = decode_frame(encode_frame({"type": "x"}, blobs)[4:], FrameLimits())
    outputs = [np.zeros(2, np.float32), np.ones((), np.float32)]
    for decode in (
        lambda: decode_tree(node, frame),
        lambda: assemble(node, outputs, 1 << 20),
        lambda: decode_leaves([node], frame),
    ):
        with contextlib.suppress(ProtocolError):
            decode()
    json.dumps(node)  # the strategy only builds JSON-able nodes


@pytest.fixture(scope="module")
def problem() -> Problem:
    return ProblemSet(FIXTURES).get(FIXTURE_SLUG)


_CLAIMS = st.fixed_dictionaries(
    {
        "verdict": st.sampled_from([v.value for v in Verdict] + ["nonsense"]),
        "message": st.text(max_size=20),
        "reason": st.sampled_from([None, "structure", "type", "value", "rule", "x"]),
        "line": st.one_of(st.none(), st.integers(-5, 10**6), st.text(max_size=3)),
        "advice": st.sampled_from([None, "bool", "leak", "nope"]),
        "error": st.sampled_from([None, "ValueError", "not an identifier!"]),
    }
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    data=st.data(),
    skeleton=_wire_nodes(),
    stop_case=st.one_of(st.none(), st.integers(0, 3)),
    stop_party=st.sampled_from(["tracer", "executor"]),
    returncode=st.one_of(st.none(), st.integers(-40, 300)),
)
def test_fuzz_the_interpreter_always_gives_a_verdict_from_the_closed_set(
    problem: Problem,
    data: st.DataObject,
    skeleton: Any,
    stop_case: int | None,
    stop_party: str,
    returncode: int | None,
) -> None:
    cases = list(problem.cases[:4])
    job = build_session(problem, "x = 1\n", cases, [c.hidden for c in cases], 1 << 20)
    raw = RawRun(load=decode_load({"type": "loaded"}))
    for case in job.cases:
        choice = data.draw(st.sampled_from(["ok", "claim", "refused", "missing", "error"]))
        if choice == "claim":
            raw.programs[case.sig] = ProgramReport(case.sig, failure=decode_failure(data.draw(_CLAIMS)))
        elif choice == "refused":
            kind = data.draw(st.sampled_from(["host_callback", "extra_inputs", "output_limit", "op", "junk"]))
            raw.programs[case.sig] = ProgramReport(
                case.sig, refused=decode_refused({"kind": kind, "message": "m", "summary": {}})
            )
        elif choice in ("ok", "error"):
            raw.programs.setdefault(
                case.sig,
                ProgramReport(case.sig, skeleton=skeleton, compiled=decode_compiled({"summary": {}})),
            )
            outputs = [np.zeros(2, np.float32), np.array(1.0, np.float32)]
            error = decode_run_error(
                {"kind": data.draw(st.sampled_from(["memory", "runtime"])), "message": "x"}
            )
            raw.runs[case.index] = CaseReport(
                case.index, outputs=outputs, error=error if choice == "error" else None
            )
    if stop_case is not None:
        phase = data.draw(st.sampled_from(["load", "trace", "print", "retrace", "compile", "run"]))
        raw.stop = Stop(stop_party, phase, stop_case, returncode=returncode)  # type: ignore[arg-type]
    expected = [{"clipped": c.inputs[0], "global_norm": np.array(1.0, np.float32)} for c in cases]
    result = interpret(
        problem, cases, [c.visibility for c in cases], expected, raw, SandboxLimits(), job,  # type: ignore[misc]
        backend="fuzz", elapsed_ms=1.0,
    )  # fmt: skip
    assert result.verdict in set(Verdict) - {Verdict.NOT_RUN}
    assert all(c.verdict in set(Verdict) for c in result.cases)
    json.dumps(result.model_dump(mode="json"))  # serializable, whatever the record held
    for graded in result.cases:
        if graded.visibility == "hidden":
            assert graded.run_ms is None and graded.error_ratio is None and graded.output is None
