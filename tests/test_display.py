"""Safe display (judge.feedback.display, the text report) and reading source bytes like Python
(judge.core.source)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge.core.errors import InputError
from judge.core.problems import ProblemSet
from judge.core.results import CaseResult, GradeResult, LeafValue
from judge.core.source import SourceError, decode_source
from judge.core.verdicts import Verdict, WrongAnswerReason
from judge.feedback.display import escape_text, sanitize_json, strict_json
from judge.feedback.report import text_report
from tests.conftest import FIXTURE_SLUG, FIXTURES

SLUG = FIXTURE_SLUG

# ------------------------------------------------------------------------------------------ escape_text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[2J\x1b[HACCEPTED", "\\x1b[2J\\x1b[HACCEPTED"),  # clear the screen, home, fake verdict
        ("wrong\rACCEPTED", "wrong\\x0dACCEPTED"),  # a carriage return overwrites the line
        ("\x9b31m", "\\x9b31m"),  # the one-byte CSI of C1
        ("bell\x07 nul\x00 del\x7f", "bell\\x07 nul\\x00 del\\x7f"),
        ("abc\u202edcba", "abc\\u202edcba"),  # right-to-left override
        ("\u2066x\u2069", "\\u2066x\\u2069"),
        ("lone \ud800 surrogate", "lone \\ud800 surrogate"),
        ("\ufeffbom", "\\ufeffbom"),
        ("tab\tand\nnewline kept", "tab\tand\nnewline kept"),
        ("ünïcödé λ 漢字 ✓", "ünïcödé λ 漢字 ✓"),
    ],
)
def test_escape_text_makes_control_characters_visible(raw: str, shown: str) -> None:
    assert escape_text(raw) == shown
    shown.encode("utf-8")  # always encodable: no surrogate survives


def test_escape_text_can_escape_newlines_too() -> None:
    assert escape_text("a\nb", newlines=False) == "a\\x0ab"


def test_every_escaped_character_is_printable_or_layout() -> None:
    everything = "".join(map(chr, range(0x110000)))
    out = escape_text(everything)
    assert all(c.isprintable() or c in "\t\n" or ord(c) >= 0x80 for c in out if ord(c) < 0x100)
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in out)
    assert "\x1b" not in out and "\r" not in out and "\x9b" not in out and "\u202e" not in out


# ------------------------------------------------------------------------------------------ strict JSON


def _strict_loads(text: str) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def test_strict_json_has_no_nan_infinity_or_lone_surrogate() -> None:
    value = {"a": math.inf, "b": [-math.inf, math.nan, 1.5], "c\ud800": "x\udfffy", "d": (1, None, True)}
    text = strict_json(value)
    assert text.isascii()
    assert _strict_loads(text) == {
        "a": None,
        "b": [None, None, 1.5],
        "c\\ud800": "x\\udfffy",
        "d": [1, None, True],
    }
    assert sanitize_json({"ok": 0.25}) == {"ok": 0.25}


def test_a_non_finite_measurement_is_none_in_the_result_model() -> None:
    case = CaseResult(
        name="c", visibility="hidden", verdict=Verdict.WRONG_ANSWER, error_ratio=math.inf, compile_ms=math.nan
    )
    assert case.error_ratio is None and case.compile_ms is None
    assert (
        CaseResult(name="c", visibility="hidden", verdict=Verdict.ACCEPTED, error_ratio=0.5).error_ratio
        == 0.5
    )


# ------------------------------------------------------------------------------------------ text report


def _hostile_result() -> GradeResult:
    attack = f"\x1b[2J\x1b[H\r{SLUG}: ACCEPTED  (19/19 cases passed)\x1b]0;title\x07"
    cases = [
        CaseResult(
            name="example_1",
            visibility="public",
            verdict=Verdict.WRONG_ANSWER,
            reason=WrongAnswerReason.VALUE,
            message=f"line 3: ValueError: {attack} \ud800",
            input={"tree": {"w": [1.0]}, "factor": 1.0},
            output=LeafValue(json_value={"k\x1b[31m": 1.0}, text='{"k\x1b[31m": 1.0, "\x9b2J": 2.0}'),
        ),
        CaseResult(name="h1", visibility="hidden", verdict=Verdict.NOT_RUN, message="not run"),
    ]
    return GradeResult(
        problem=SLUG,
        verdict=Verdict.WRONG_ANSWER,
        passed=0,
        total=2,
        message=f"case example_1: {attack}",
        cases=cases,
        stdout=f"{attack}\nsecond line \udcff\n",
        backend="bwrap",
        elapsed_ms=12.0,
    )


def test_text_report_shows_hostile_text_inert() -> None:
    problem = ProblemSet(FIXTURES).get(SLUG)
    report = text_report(problem, _hostile_result())
    report.encode("utf-8")  # lone surrogates do not crash the output
    for bad in ("\x1b", "\r", "\x07", "\x9b", "\ud800", "\udcff"):
        assert bad not in report
    assert report.startswith(f"{SLUG}: WRONG_ANSWER")
    # The fake verdict is visible as text, never at the start of a line of its own.
    assert all(not line.startswith(f"{SLUG}: ACCEPTED") for line in report.splitlines())
    assert f"\\x1b[2J\\x1b[H\\x0d{SLUG}: ACCEPTED" in report
    assert "  | second line \\udcff" in report


# ------------------------------------------------------------------------------------------ source bytes


def test_plain_utf8_source_is_unchanged() -> None:
    assert decode_source("def f(x):\n    return 'λ'\n".encode()) == "def f(x):\n    return 'λ'\n"


def test_a_byte_order_mark_is_dropped_like_python_does() -> None:
    text = decode_source(b"\xef\xbb\xbfimport jax\n")
    assert text == "import jax\n"
    compile(text, "solution.py", "exec")


def test_a_coding_line_is_honoured() -> None:
    assert (
        decode_source(b"# -*- coding: latin-1 -*-\nname = '\xe9'\n")
        == "# -*- coding: latin-1 -*-\nname = 'é'\n"
    )


@pytest.mark.parametrize(
    ("data", "line", "needle"),
    [
        (b"import jax\n\ndef f(x):\n    return x\x00\n", 4, "NUL character at column 13"),
        (b"\x00", 1, "NUL character at column 1"),
        (b"a = 1\nb = '\xff'\n", 2, "byte 0xff at column 6 is not valid utf-8"),
        (b"\xef\xbb\xbf# coding: latin-1\n", 1, "encoding"),
        (b"#!/usr/bin/env python\n# coding: no-such-codec\n", 2, "encoding"),
    ],
    ids=["nul", "only-nul", "bad-utf8", "bom-and-latin1", "unknown-codec"],
)
def test_unreadable_source_names_the_line(data: bytes, line: int, needle: str) -> None:
    with pytest.raises(SourceError) as caught:
        decode_source(data)
    assert isinstance(caught.value, InputError)
    assert caught.value.line == line and caught.value.path == f"line {line}"
    assert needle in str(caught.value)


def test_an_over_long_source_is_refused() -> None:
    with pytest.raises(SourceError, match="the limit is 10") as caught:
        decode_source(b"x" * 11, max_bytes=10)
    assert caught.value.line is None and caught.value.path == "code"


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=64) | st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_any_bytes_give_text_or_a_source_error(data: bytes) -> None:
    try:
        text = decode_source(b"# coding: latin-1\n" + data if data[:1] == b"L" else data)
    except SourceError as exc:
        assert exc.path == "code" or exc.path.startswith("line ")
    else:
        assert "\0" not in text


def test_tree_layout_names_each_leaf_dtype_and_every_tuple_node() -> None:
    import ml_dtypes
    import numpy as np

    from judge.feedback.display import tree_layout
    from sandbox.shared.tree import NonStrKey, OtherNode

    tree = (
        {"b": np.array([1, 2], dtype=np.int32), NonStrKey("3", "int"): np.float32(0.5)},
        [np.array(1.5, dtype=ml_dtypes.bfloat16), (np.array([True]),)],
        OtherNode("Point", (1.0, 2)),
        None,
    )
    layout = tree_layout(tree)
    assert layout.leaves == [
        ([0, "b"], "int32"),
        ([0, "3"], "float32"),
        ([1, 0], "bfloat16"),
        ([1, 1, 0], "bool"),
        ([2, 0], "float"),
        ([2, 1], "int"),
    ]
    assert layout.tuples == [[], [1, 1], [2]]
    assert tree_layout(np.zeros(3, np.float32)).leaves == [([], "float32")]
    assert tree_layout(np.zeros(3, np.float32)).tuples == []


def test_a_shown_value_carries_its_layout() -> None:
    import numpy as np

    from judge.core.results import LeafValue

    shown = LeafValue.of((np.array([1, 2], dtype=np.int32), [np.float32(0.25)])).model_dump(by_alias=True)
    assert shown["json"] == [[1, 2], [0.25]]
    assert shown["leaves"] == [{"path": [0], "dtype": "int32"}, {"path": [1, 0], "dtype": "float32"}]
    assert shown["tuples"] == [[]]
