"""Typed results of grading: one per case and one for the submission (shared by the CLI and the API).

These models are where what a sandbox reported becomes the judge's data, so they are the one place that
makes user-controlled text safe (``judge.feedback.display``): every display text (messages, prints, a value's
text) has control characters, bidirectional overrides and lone surrogates written as visible escapes,
and the raw JSON of a value (``LeafValue.json_value``, a case's ``input``) keeps what the user sent except
lone surrogates, which no encoder can hold (JSON, UTF-8, PostgreSQL) and which become their escapes too.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from judge.core.pytree_json import describe_leaves, format_value, pytree_to_json
from judge.core.verdicts import Verdict, WrongAnswerReason
from judge.feedback.display import escape_surrogates, escape_text, sanitize_json, tree_layout

Visibility = Literal["public", "hidden", "custom"]


def _finite_or_none(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


#: A measurement that is a finite number or absent: NaN and infinities become None, so a result always
#: serializes to standard JSON (strict parsers, browsers included, reject NaN and Infinity).
FiniteOrNone = Annotated[float | None, BeforeValidator(_finite_or_none)]

#: Text shown to a reader (a message, the prints, a value's text): user-controlled, so made inert.
DisplayText = Annotated[str, AfterValidator(escape_text)]
#: A JSON value that may hold user-chosen keys: kept raw but for lone surrogates (see the module doc).
RawJson = Annotated[Any, AfterValidator(escape_surrogates)]


#: Most numbers one shown value holds. A submission may return up to its output cap (tens of MiB) under a
#: key nobody asked for; rendering that as JSON and text would take the judge seconds and gigabytes per
#: Run. Four times the largest custom input (``ConversionLimits.max_elements``) leaves room for any
#: honest output of a custom case.
SHOW_MAX_ELEMENTS = 1 << 18


class ShownLeaf(BaseModel):
    """One leaf of a shown value: where it is and its dtype (which the JSON cannot say)."""

    model_config = ConfigDict(frozen=True)

    path: list[RawJson]
    dtype: str


class LeafValue(BaseModel):
    """A value shown to the user: full-precision JSON plus the 6-decimal text the statement uses; or, for a
    value too large to show (``omitted``), no JSON and a text that says what it holds."""

    model_config = ConfigDict(frozen=True)

    json_value: RawJson = Field(serialization_alias="json")
    text: DisplayText
    omitted: bool = False
    #: Each leaf's path (dict keys as text, list and tuple positions as ints) and dtype, in tree order.
    leaves: list[ShownLeaf] = Field(default_factory=list)
    #: The paths of the tuple nodes, which ``json`` writes as lists.
    tuples: list[list[RawJson]] = Field(default_factory=list)

    @classmethod
    def of(cls, tree: Any) -> LeafValue:
        """``tree`` (an output or input tree) as shown, unless it holds more than ``SHOW_MAX_ELEMENTS``."""
        leaves = describe_leaves(tree)
        count = sum(math.prod(leaf.shape) for leaf in leaves)
        if count > SHOW_MAX_ELEMENTS:
            where = ", ".join(
                f"{leaf.path or 'the value'} {leaf.dtype}{list(leaf.shape)}" for leaf in leaves[:4]
            )
            more = f" and {len(leaves) - 4} more leaves" if len(leaves) > 4 else ""
            return cls(
                json_value=None,
                text=f"not shown: {count:,} numbers ({where}{more}), more than the {SHOW_MAX_ELEMENTS:,} "
                "a result shows",
                omitted=True,
            )
        layout = tree_layout(tree)
        return cls(
            json_value=pytree_to_json(tree),
            text=format_value(tree),
            leaves=[ShownLeaf(path=path, dtype=dtype) for path, dtype in layout.leaves],
            tuples=list(layout.tuples),
        )


class MistakeMatch(BaseModel):
    """The known mistake a wrong output looks like: a shipped wrong solution of the problem whose output
    on this case it matches (within tolerance on every leaf), with the author's teaching note. Names and
    notes are repository text; on a hidden case they are all that is shown, never a value."""

    model_config = ConfigDict(frozen=True)

    name: DisplayText = Field(description="The mistake's short name, e.g. `No bias correction`.")
    note: DisplayText = Field(description="What is wrong and how to fix it, in the problem author's words.")
    others: int = Field(0, ge=0, description="How many other known mistakes this output matches as well.")


class ProgramMark(BaseModel):
    """A telling line of a program text: a loop, a custom call, a host callback or a dtype conversion."""

    model_config = ConfigDict(frozen=True)

    line: int = Field(ge=1, description="1-based line of the text.")
    kind: Literal["loop", "custom_call", "host_callback", "convert"]


class ProgramView(BaseModel):
    """What ``jax.jit`` made of the function for a public or custom case: the jaxpr as JAX prints it and
    the StableHLO it was lowered to, each with its marked lines. Never for a hidden signature."""

    model_config = ConfigDict(frozen=True)

    jaxpr: DisplayText
    stablehlo: DisplayText
    jaxpr_marks: list[ProgramMark] = Field(default_factory=list)
    stablehlo_marks: list[ProgramMark] = Field(default_factory=list)


class CaseCost(BaseModel):
    """What a public or custom case's compiled program costs beside the reference's on the same case: XLA's
    cost analysis from the executor that compiled it, and the reference's compiled on the judge's side."""

    model_config = ConfigDict(frozen=True)

    flops: FiniteOrNone = None
    bytes_accessed: FiniteOrNone = None
    loops: int | None = None
    reference_flops: FiniteOrNone = None
    reference_bytes_accessed: FiniteOrNone = None
    reference_loops: int | None = None
    #: ``flops / reference_flops`` (None when either is missing, or the reference has none).
    flops_ratio: FiniteOrNone = None
    bytes_ratio: FiniteOrNone = None
    #: Each figure beside the reference's, in words: ``29 FLOPs (the reference: 10, 2.9x), 100 bytes
    #: accessed (the reference: 100 bytes), 4 loops where the reference has 1`` (and two measurable times
    #: beside each other, their ratio when it is at least 2x or at most 0.5x).
    text: str = ""
    #: Compile time of the program (None when the executor had it compiled already) and run time of the
    #: case, in ms of charged time, beside the reference's measured on the judge's side with the same
    #: compiler flags; times of two processes, so read their ratios as rough. A ratio is None unless both
    #: times are measurable (``judge.feedback.cost.MEASURABLE_MS``): sub-millisecond timings are noise.
    compile_ms: FiniteOrNone = None
    run_ms: FiniteOrNone = None
    reference_compile_ms: FiniteOrNone = None
    reference_run_ms: FiniteOrNone = None
    compile_ratio: FiniteOrNone = None
    run_ratio: FiniteOrNone = None


class CaseResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    visibility: Visibility
    verdict: Verdict
    reason: WrongAnswerReason | None = None
    message: DisplayText = ""
    compile_ms: FiniteOrNone = None
    run_ms: FiniteOrNone = None
    #: Public and custom cases only; always None for hidden cases.
    input: Annotated[dict[str, Any] | None, AfterValidator(escape_surrogates)] = None
    output: LeafValue | None = None
    expected: LeafValue | None = None
    #: Largest element error as a multiple of the tolerance (for authors' margins). None when no finite
    #: ratio exists: the values were not compared (a structure, shape or dtype mismatch, an error, not run)
    #: or no tolerance covers the difference (NaN against a number, a wrong infinity, an integer leaf that
    #: differs); ``reason`` says which.
    error_ratio: FiniteOrNone = None
    #: A wrong answer that matches a known mistake's output on this case (the most specific one).
    mistake: MistakeMatch | None = None
    #: Public and custom cases whose program compiled: its cost beside the reference's.
    cost: CaseCost | None = None
    #: Public and custom cases that were traced: the program the function became.
    program: ProgramView | None = None


#: What a section of printed output is: printed while the code loaded, while one signature was traced
#: (``cases``: every shown case of that signature: its Python prints come once for all of them), while
#: one case ran for its ``jax.debug`` output, while the judge traced one signature again (``retrace``: a
#: function must give the same program twice), or before any section began (``other``).
OutputKind = Literal["load", "trace", "run", "retrace", "other"]


class OutputSection(BaseModel):
    """A part of the printed output, in the order printed (public and custom cases only)."""

    model_config = ConfigDict(frozen=True)

    kind: OutputKind
    #: The cases it belongs to (names); empty for ``load`` and ``other``.
    cases: list[str] = Field(default_factory=list)
    text: DisplayText = ""
    #: Bytes printed in this section past the output limit, counted and not kept.
    cut_bytes: int = 0
    #: ``run`` sections: the function made two or more ``jax.debug`` calls, one of them without
    #: ``ordered=True``, so XLA was free to run them in another order than the code's.
    unordered: bool = False


class GradeResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    problem: str
    verdict: Verdict
    passed: int
    total: int
    message: DisplayText = ""
    cases: list[CaseResult]
    #: What the submission printed (stdout and stderr), capped; hidden-case output is withheld.
    stdout: DisplayText = ""
    stdout_truncated: bool = False
    #: ``stdout`` split where it was printed (loading, tracing a signature, running a case), in order.
    output: list[OutputSection] = Field(default_factory=list)
    backend: str
    elapsed_ms: float

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.ACCEPTED


# ---- Results as strict JSON: what the store keeps, the API sends and ``judge grade/run --json`` print.
#
# ``GradeResult.model_dump(mode="json")`` may hold non-finite floats (an ``error_ratio`` of infinity when a
# leaf differs where the tolerance is zero). Strict JSON (and PostgreSQL's JSONB) has no such numbers, so an
# ``error_ratio`` that is not finite becomes ``null`` (no finite margin), and any other non-finite float
# becomes the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``, as output values already are. Lone
# surrogates (which no encoder accepts) become their visible escapes
# (``judge.feedback.display.sanitize_json``).

_NULL_WHEN_NOT_FINITE = frozenset({"error_ratio"})


def _text(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def json_safe(value: Any, key: str | None = None) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None if key in _NULL_WHEN_NOT_FINITE else _text(value)
    if isinstance(value, dict):
        return {k: json_safe(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value


def result_json(result: GradeResult) -> dict[str, Any]:
    """The result as strict JSON, in the shape of ``judge grade --json``."""
    data: dict[str, Any] = sanitize_json(json_safe(result.model_dump(mode="json", by_alias=True)))
    return data


def case_json(case: CaseResult) -> dict[str, Any]:
    data: dict[str, Any] = sanitize_json(json_safe(case.model_dump(mode="json", by_alias=True)))
    return data
