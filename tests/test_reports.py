"""The typed wire (``sandbox.session.reports``): every sandbox message the judge keeps is decoded once, and
any JSON a hostile tracer or executor can send decodes to typed fields, never raising."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.session.reports import (
    Compiled,
    Cost,
    Load,
    OutputLayout,
    Refused,
    RunError,
    Summary,
    TraceFailure,
    decode_compiled,
    decode_failure,
    decode_load,
    decode_loops_matter,
    decode_refused,
    decode_run_error,
    decode_summary,
    decode_view,
)
from sandbox.shared.layouts import BadLayout, Layout, from_parts, from_wire

_JSON: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
_KEYS = st.sampled_from(
    ["type", "verdict", "message", "reason", "line", "error", "advice", "kind", "summary", "compile_ms",
     "compile_wall_ms", "pipeline", "cached", "key", "cost", "donation", "shardings", "jaxpr", "stablehlo",
     "ops", "loop_ops", "recomputed_ops", "barrier_outputs", "custom_calls", "host_callbacks", "flops",
     "bytes_accessed", "donated_bytes", "aliased_bytes", "tiles", "groups"]
)  # fmt: skip
_MESSAGES = st.dictionaries(_KEYS, _JSON, max_size=8)


def _typed_summary(summary: Summary) -> None:
    assert all(isinstance(k, str) and type(v) is int for k, v in summary.ops.items())
    assert all(type(v) is int for v in [*summary.loop_ops.values(), *summary.recomputed_ops.values()])
    assert all(type(b) is bool for b in summary.barrier_outputs)
    assert all(isinstance(c, str) for c in [*summary.custom_calls, *summary.host_callbacks])
    assert type(summary.loops) is int


@settings(max_examples=300, deadline=None)
@given(_MESSAGES, _JSON)
def test_fuzz_every_decoder_gives_typed_fields_and_never_raises(message: dict[str, Any], other: Any) -> None:
    message = {**message, "summary": other} if isinstance(other, dict) else message
    load = decode_load(message)
    assert load.type in ("loaded", "load_error") and isinstance(load.verdict, str)
    failure = decode_failure(message)
    assert isinstance(failure.verdict, str) and len(failure.message) <= 4000 and type(failure.line) is int
    assert all(v is None or isinstance(v, str) for v in (failure.reason, failure.error, failure.advice))
    compiled = decode_compiled(message)
    _typed_summary(compiled.summary)
    assert compiled.compile_ms is None or 0.0 <= compiled.compile_ms <= 1e7
    assert isinstance(compiled.key, str) and type(compiled.cached) is bool
    assert all(0.0 <= v <= 1e30 for v in compiled.cost.figures().values())
    assert compiled.donation is None or type(compiled.donation.donated_bytes) is int
    assert compiled.shardings is None or all(isinstance(o, OutputLayout) for o in compiled.shardings)
    refused = decode_refused(message)
    assert isinstance(refused.kind, str) and isinstance(refused.message, str)
    _typed_summary(refused.summary)
    error = decode_run_error(message)
    assert isinstance(error.kind, str) and isinstance(error.message, str)
    view = decode_view(message)
    assert isinstance(view.jaxpr, str) and isinstance(view.stablehlo, str)
    flags = decode_loops_matter(other)
    assert flags is None or all(type(f) is bool for f in flags)
    _typed_summary(decode_summary(other))


def test_messages_decode_to_what_the_judge_reads() -> None:
    assert decode_load({"type": "loaded", "verdict": "x"}) == Load("loaded")
    assert decode_load({"type": "load_error", "verdict": 3, "message": "m"}) == Load("load_error", "", "m")
    assert decode_failure({"verdict": "trace_error", "line": True, "error": 7, "advice": "bool"}) == (
        TraceFailure("trace_error", "", None, -2, None, "bool")
    )
    reply = {
        "summary": {"ops": {"stablehlo.while": 2, "bad": "x"}, "custom_calls": ["a" * 200]},
        "compile_ms": float("inf"),
        "cached": 1,
        "key": "k",
        "cost": {"flops": 4, "bytes_accessed": -1.0, "other": 2.0},
        "donation": {"donated_bytes": 8, "aliased_bytes": True},
        "shardings": [{"tiles": [2], "groups": [[0], [1]]}],
    }
    assert decode_compiled(reply) == Compiled(
        summary=Summary(ops={"stablehlo.while": 2}, custom_calls=("a" * 100,), loops=2),
        key="k",
        cost=Cost(flops=4.0),
        shardings=(OutputLayout((2,), ([0], [1])),),
    )
    assert decode_refused({"kind": "rule", "summary": None}) == Refused("rule", "")
    assert decode_run_error({"kind": "memory" * 10, "message": None}) == RunError("memory" * 3 + "me", "")


def test_a_kept_layout_is_checked_as_the_wire_form_is() -> None:
    wire = {"tiles": [2], "groups": [[1], [0]]}
    layout = decode_compiled({"shardings": [wire]}).shardings
    assert layout is not None
    assert (
        from_parts(layout[0].tiles, layout[0].groups, 1, 2)
        == from_wire(wire, 1, 2)
        == Layout((2,), ((1,), (0,)))
    )
    for tiles, groups in (((2,), ([0], [0])), ((True, "2"), ([0], [1])), ((2,), ([0], ["1"]))):
        try:
            from_parts(tiles, groups, len(tiles), 2)
        except BadLayout:
            continue
        raise AssertionError(f"{tiles}, {groups} was accepted")
