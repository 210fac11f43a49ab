"""XLA's reason for ending the executor while compiling, as judge.core.compile_failure reads it from its
output."""

from __future__ import annotations

from judge.core.compile_failure import MAX_DETAIL_CHARS, XlaReason, escaped, is_large, xla_reason


def test_an_uncaught_cpp_exception_gives_its_type_and_what() -> None:
    notes = [
        "the memory cgroup's OOM killer ended the worker",
        "executor output: terminate called after throwing an instance of 'std::length_error'\n"
        "  what():  SmallVector unable to grow.",
    ]
    assert xla_reason(notes) == XlaReason("std::length_error", "SmallVector unable to grow.")
    # No what() line: the type alone.
    bare = ["executor output: terminate called after throwing an instance of 'std::out_of_range'"]
    assert xla_reason(bare) == XlaReason("std::out_of_range", "")


def test_a_failed_check_and_an_llvm_error() -> None:
    check = [
        "executor output: 2026-12-06 07:00:00.1: W some warning\n"
        "F1206 07:01:02.123456   12345 xla/service/shape_inference.cc:412] Check failed: dim >= 0 (-1 vs. 0)"
    ]
    assert xla_reason(check) == XlaReason(
        "a failed check at xla/service/shape_inference.cc:412", "Check failed: dim >= 0 (-1 vs. 0)"
    )
    llvm = ["executor output: LLVM ERROR: out of registers\nAborted"]
    assert xla_reason(llvm) == XlaReason("an LLVM error", "out of registers")


def test_no_reason_without_words_the_judge_knows() -> None:
    assert xla_reason([]) is None
    assert xla_reason(["executor output: Fatal Python error: Segmentation fault"]) is None
    assert xla_reason(["cgroup: some processes survived SIGKILL for 2 s"]) is None


def test_a_type_name_that_is_no_type_name_is_not_quoted() -> None:
    odd = ["executor output: terminate called after throwing an instance of 'f32[3,0] <- \x1b[2J'"]
    reason = xla_reason(odd)
    assert reason is not None and reason.kind == "a C++ exception"


def test_detail_is_one_line_escaped_and_bounded() -> None:
    assert escaped("a\tb\n  c\x1b[31m") == "a b c\\x1b[31m"
    long = escaped("x" * 1000)
    assert len(long) == MAX_DETAIL_CHARS and long.endswith("...")
    reason = XlaReason("std::length_error", "shape f32[7,0]")
    assert reason.said(hidden=False) == "std::length_error: shape f32[7,0]"
    assert reason.said(hidden=True) == "std::length_error (details are not shown for hidden cases)"
    assert XlaReason("an LLVM error").said(hidden=True) == "an LLVM error"


def test_large_means_sixteen_kib_or_more() -> None:
    assert is_large(None) is None
    assert is_large(4 * 1024) is False
    assert is_large(16 * 1024) is True
