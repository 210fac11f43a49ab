"""Typed models for a problem package: the spec file and its case files.

Everything here is validated eagerly when a problem is loaded (``judge.core.problems.load_problem``), so a bad
spec fails at start-up with the file and field named, never in the middle of grading.
"""

from __future__ import annotations

import difflib
import keyword
import math
import re
import types
import typing
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, field_validator, model_validator
from pydantic_core import ErrorDetails

from judge.core.verdicts import Verdict
from judge.kinds.array import MAX_ARRAY_NDIM, ArrayDtype
from judge.kinds.registry import KIND_NAMES, kind_of, users_of

#: Leaf dtypes a problem may declare for its cases.
CaseDtype = Literal["float32", "bfloat16"]

Identifier = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=64)]
Slug = Annotated[str, Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=64)]


class _Strict(BaseModel):
    """No unknown key and no silent coercion: ``traced = "no"`` or ``case_time_s = "10"`` is an error, not
    ``True`` or ``10.0`` (an integer still stands for a float: ``case_time_s = 10``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


#: A verdict written as its name (strict mode would otherwise want an enum instance).
VerdictName = Annotated[Verdict, Strict(False)]


#: The kinds of argument a function may take (``ArgSpec.kind``): the names of ``judge.kinds.registry.KINDS``
#: (mypy sees a ``str``; pydantic, the API schema and the error messages see the Literal of the names).
if TYPE_CHECKING:
    ArgKind = str
else:
    ArgKind = Literal[KIND_NAMES]
#: PRNG key implementations a ``key`` argument may use (``sandbox.shared.tree.KEY_IMPLS``: the words per key).
KeyImpl = Literal["threefry2x32"]


class ArgSpec(_Strict):
    """One argument of the user's function.

    ``kind`` names one of ``judge.kinds.registry.KINDS`` (each kind's module says what the Run panel
    accepts and what the function receives; problems/README.md, "Argument kinds", tabulates them), and
    the kind says which of the optional fields (``dtype``, ``ndim``, ``impl``, ``choices``,
    ``structure``) it uses: the others must keep their defaults.

    ``traced`` defaults to true, and to false for the static kinds; a static kind cannot be traced, and an
    ``array`` cannot be static. Each distinct static value is traced and compiled on its own.
    """

    name: Identifier
    #: ``function`` accepts a JSON string naming one of ``choices``, functions of the problem's menu module
    #: (``ProblemSpec.functions``), passed to the function itself as a static argument.
    kind: ArgKind
    #: Traced arguments go through ``jax.jit`` as tracers; static ones are passed as hashable Python values.
    traced: bool = True
    #: ``array`` only: the leaf dtype.
    dtype: ArrayDtype = "case"
    #: ``key`` only: the PRNG implementation of the key (fixed by the problem).
    impl: KeyImpl = "threefry2x32"
    #: ``array`` and ``key``: the ranks the array may have (``[0]`` for a scalar, or one key); empty means
    #: any (a ``key`` argument that declares none takes one key: ``[0]``).
    ndim: list[Annotated[int, Field(ge=0, le=MAX_ARRAY_NDIM)]] = Field(default_factory=list, max_length=9)
    description: str = ""
    #: For ``function`` arguments: the names of the menu functions a case may pass; for ``str`` arguments:
    #: the strings a case may pass.
    choices: list[Identifier] = Field(default_factory=list)
    #: ``pytree`` only: ``fixed`` when every input has the same containers (a dict with the keys
    #: ``hidden`` and ``out``, say; leaf shapes may vary), so ``judge check`` holds the cases to that one
    #: structure instead of asking for bare arrays, long lists and deep nesting.
    structure: Literal["any", "fixed"] = "any"

    @model_validator(mode="before")
    @classmethod
    def _static_default(cls, data: Any) -> Any:
        if (
            isinstance(data, dict)
            and data.get("kind") in KIND_NAMES
            and kind_of(data["kind"]).static
            and "traced" not in data
        ):
            return {**data, "traced": False}
        return data

    @model_validator(mode="after")
    def _kind_fields(self) -> ArgSpec:
        kind = kind_of(self.kind)
        kind.check_traced(self)
        if (self.dtype != "case" and "dtype" not in kind.fields) or (self.ndim and "ndim" not in kind.fields):
            dtype_users = users_of("dtype")
            ndim_only = [k for k in users_of("ndim") if k not in dtype_users]
            raise ValueError(
                f"dtype and ndim apply to kind {_kinds_text(dtype_users)} only (ndim to kind "
                f"{_kinds_text(ndim_only)} too), not {self.kind!r}"
            )
        if self.impl != "threefry2x32" and "impl" not in kind.fields:
            raise ValueError(f"impl applies to kind {_kinds_text(users_of('impl'))} only, not {self.kind!r}")
        if self.structure == "fixed" and "structure" not in kind.fields:
            raise ValueError(
                f"structure 'fixed' applies to kind {_kinds_text(users_of('structure'))} only, "
                f"not {self.kind!r}"
            )
        if len(set(self.ndim)) != len(self.ndim):
            raise ValueError(f"ndim repeats a rank: {self.ndim}")
        return self

    @property
    def static(self) -> bool:
        return not self.traced

    @property
    def key_ranks(self) -> list[int]:
        """``key`` only: the key array ranks allowed (``[0]``, one key, unless ``ndim`` says otherwise)."""
        return sorted(self.ndim) if self.ndim else [0]

    @property
    def accepts(self) -> tuple[str, ...]:
        """The JSON kinds a Run input for this argument may be."""
        return kind_of(self.kind).accepts(self)

    def describe_kind(self) -> str:
        """The argument's kind in words, for the API and the statement: ``an int32 array with 0 dimensions
        (a scalar)``, ``a static tuple of ints``."""
        return kind_of(self.kind).describe(self)

    @model_validator(mode="after")
    def _choices(self) -> ArgSpec:
        kind = kind_of(self.kind)
        if self.choices and "choices" not in kind.fields:
            users = " and ".join(f"{name} arguments" for name in sorted(users_of("choices")))
            raise ValueError(f"argument {self.name!r}: choices are only for {users}")
        kind.check(self)
        return self


def _kinds_text(names: list[str]) -> str:
    """``'array'``, ``'array' or 'key'``: kinds named in an error."""
    return " or ".join(repr(name) for name in names)


class OutputSpec(_Strict):
    """The shape of what the function returns, used for display and by the author checks."""

    kind: Literal["dict", "tuple", "pytree"]
    #: For ``tuple`` outputs: a name per element, shown as ``(a, b) = (...)`` and used in leaf paths.
    names: list[Identifier] = Field(default_factory=list)
    #: Integer and bool dtypes the output may hold besides the case's float dtype (ids, masks, counts);
    #: such leaves compare exactly. ``key``: typed PRNG key arrays (a new carry key, split keys), compared
    #: exactly as keys (implementation, shape and key data).
    exact_dtypes: list[Literal["int32", "uint32", "bool", "key"]] = Field(default_factory=list)


class Tolerance(_Strict):
    """How far a float element may be from the expected element ``e``:
    ``|got - e| <= max(atol + rtol * |e|, ulps * ulp(e), floor_ulps * ulp(m))``.

    ``ulp(x)`` is the spacing of the dtype at ``|x|`` (``2**floor(log2 |x|) * eps``; the smallest subnormal
    below the normal range). The ``ulps`` bound scales with each element, so it is equally strict for small
    and large values. The ``floor_ulps`` bound is an absolute floor scaled to the magnitude of the result
    the element belongs to, which takes over only well below that magnitude: ``m`` is the largest finite
    ``|expected|`` over the leaves of this dtype in the same top-level entry of the output (one tuple
    element or one dict key, such as every leaf of ``new_params``; the whole output when it is a single
    array). It covers elements left near zero by a cancellation (``p - lr * v``, ``momentum * v + g``),
    where equally valid formulations differ by a rounding of the larger operands rather than of the
    result; a 0-d leaf has no magnitude of its own to scale by, hence the whole result.

    ``well_inside`` and ``well_outside`` are what ``judge check`` expects of the margins on cases of this
    dtype: accepted solutions' worst error below ``well_inside`` times the tolerance, and every wrong
    answer rejected by at least two hidden cases at ``well_outside`` times the tolerance or more.
    """

    rtol: float = Field(default=0.0, ge=0)
    atol: float = Field(default=0.0, ge=0)
    ulps: float = Field(default=0.0, ge=0)
    floor_ulps: float = Field(default=0.0, ge=0)
    well_inside: float = Field(default=0.1, gt=0, le=1)
    well_outside: float = Field(default=10.0, ge=1)

    @property
    def uses_ulps(self) -> bool:
        return self.ulps > 0 or self.floor_ulps > 0

    @property
    def is_zero(self) -> bool:
        return self.rtol == 0 and self.atol == 0 and not self.uses_ulps

    def describe(self) -> str:
        """``rtol 1e-05 + atol 1e-06``, or ``the larger of 3 ulp of the element and 1.5 ulp of the largest
        magnitude in its result``."""
        relative = " + ".join(
            part
            for part in (
                f"rtol {self.rtol:g}" if self.rtol else "",
                f"atol {self.atol:g}" if self.atol else "",
            )
            if part
        )
        bounds = [relative] if relative else []
        bounds += [f"{self.ulps:g} ulp of the element"] if self.ulps else []
        bounds += (
            [f"{self.floor_ulps:g} ulp of the largest magnitude in its result"] if self.floor_ulps else []
        )
        if not bounds:
            return "exact"
        return (
            bounds[0]
            if len(bounds) == 1
            else "the larger of " + ", ".join(bounds[:-1]) + " and " + bounds[-1]
        )


def default_tolerances() -> dict[str, Tolerance]:
    """The judge's tolerance per dtype, used wherever a spec declares none."""
    # float32: equally valid formulations differ in the last few ulps (a few 1e-7 relative); 1e-5 leaves
    # room for other summation orders.
    # bfloat16 keeps 8 significant bits (one ulp is 0.4-0.8% relative), so a relative tolerance loose
    # enough for honest roundings also passes a systematic error of a few percent (rtol 1.6e-2 with atol
    # 1e-2 accepted a solution 3% off). Measured on both seed problems (docs/architecture.md, "Comparison"):
    # honest bfloat16 formulations (scale in bfloat16, optax-style divide then multiply in bfloat16,
    # accumulate in float32 then cast, other summation orders) stay within 2 ulps of the element, or 1 ulp
    # of the result's magnitude at a cancellation; a 2% error is 2.6-5.1 ulps of each element, 5-6 ulps on
    # the elements in the upper half of a binade. Hence max(3 ulp, 1.5 ulp of the result's magnitude):
    # honest variants at <= 2/3 of the tolerance, a 2% error at 1.7-2x on the seed problems' cases.
    return {
        "float32": Tolerance(rtol=1e-5, atol=1e-6),
        "bfloat16": Tolerance(ulps=3.0, floor_ulps=1.5, well_inside=0.7, well_outside=1.5),
        "float16": Tolerance(rtol=2e-3, atol=1e-3),
        "float64": Tolerance(rtol=1e-7, atol=1e-9),
    }


#: ``[compare] magnitude`` of a problem no order of addition can move (``CompareSpec.magnitude``).
NO_MAGNITUDE = "none"

#: The accelerator backends a problem may grade on besides the CPU (``judge check --backend``, a grading
#: node's ``JUDGE_NODE_BACKEND``). The CPU is the base every tolerance is written for.
Accelerator = Literal["tpu", "gpu"]
#: Every backend a problem can be graded on.
GradingBackend = Literal["cpu", "tpu", "gpu"]
GRADING_BACKENDS: tuple[str, ...] = ("cpu", "tpu", "gpu")
#: ``jax.default_matmul_precision`` values a problem may grade at.
MatmulPrecision = Literal["default", "high", "highest"]


class BackendTolerance(_Strict):
    """The bounds of one dtype's tolerance that differ on one backend (``[compare.backend.<name>.tolerance.
    <dtype>]``): each field given replaces that field of the dtype's base tolerance there; the others stay
    (so a base that changes, or its margins, carries over)."""

    rtol: float | None = Field(default=None, ge=0)
    atol: float | None = Field(default=None, ge=0)
    ulps: float | None = Field(default=None, ge=0)
    floor_ulps: float | None = Field(default=None, ge=0)

    def over(self, base: Tolerance) -> Tolerance:
        """``base`` with this override's fields in place of its own."""
        return base.model_copy(update=self.model_dump(exclude_none=True))


class BackendCompare(_Strict):
    """What changes when a problem is graded on one accelerator backend (``[compare.backend.tpu]``)."""

    #: Per case dtype, the bounds that differ there (``BackendTolerance``).
    tolerance: dict[CaseDtype, BackendTolerance] = Field(min_length=1)
    #: Why, in a sentence a learner reads in the statement (what differs there, and by how much).
    reason: str = Field(min_length=10, max_length=400)
    #: Shipped wrong answers (``wrong_answer/<file>.py``) that compute the reference's own values there, bit
    #: for bit, on every case whose values the CPU's grading rejects, each with why in a sentence the
    #: statement states: the backend's compiler undoes the mistake (XLA's excess precision on a TPU keeps a
    #: float32 value cast to bfloat16 and back in float32), so no tolerance or case tells them apart there;
    #: the CPU's grading still rejects them.
    #: ``judge check --backend`` holds each to it (``judge.check.backend_check``).
    same_as_reference: dict[str, str] = Field(default_factory=dict)

    @field_validator("same_as_reference")
    @classmethod
    def _wrong_answers_with_reasons(cls, value: dict[str, str]) -> dict[str, str]:
        for name, why in value.items():
            if not re.fullmatch(r"wrong_answer/[A-Za-z0-9_]+\.py", name):
                raise ValueError(f"same_as_reference: {name!r} is not a file of solutions/wrong_answer/")
            if not 10 <= len(why) <= 400:
                raise ValueError(f"same_as_reference: say why {name} gives the reference's values (10-400)")
        return value


class CompareSpec(_Strict):
    #: Tolerance by the EXPECTED leaf's dtype. Integer and bool leaves compare exactly.
    tolerance: dict[str, Tolerance] = Field(default_factory=default_tolerances)
    #: The matrix-product precision the problem grades at: the judge traces the reference and every
    #: submission under ``jax.default_matmul_precision`` of it (a dot's ``precision_config`` in the program),
    #: on every backend. None: JAX's default (on a TPU, float32 products then round their inputs to bfloat16).
    matmul_precision: MatmulPrecision | None = None
    #: Per accelerator backend, the tolerance bounds that differ there (``BackendCompare``); the CPU and any
    #: backend not named grade with ``tolerance`` as it is.
    backend: dict[Accelerator, BackendCompare] = Field(default_factory=dict)
    #: NaN only matches NaN at the same place.
    nan: Literal["same_place"] = "same_place"
    #: Whether a returned list may stand for an expected tuple (and the other way round).
    tuple_as_list: bool = False
    #: Extra checks after the values match.
    checks: list[Literal["inputs_unchanged"]] = Field(default_factory=list)
    #: Reject host callbacks (``jax.pure_callback``, ``jax.experimental.io_callback``) in the traced program.
    forbid_host_callbacks: bool = True
    #: A function of the reference module, with the reference's arguments, that returns per element of the
    #: output the sum of the absolute values of the terms that make it (the output's structure; float
    #: leaves). ``rtol`` then applies to the larger of that and ``|expected|`` (``judge.core.compare``), so a
    #: value whose terms cancel is graded with the rounding error its terms allow in any order of addition.
    #: On a ``[gradient]`` problem it returns ``(output magnitudes, gradient magnitudes)``, the pair a
    #: program returns. ``"none"`` declares that no order of addition can move the result (elementwise
    #: arithmetic, sums of terms of one sign, exact integer or key operations); ``magnitude_reason`` then
    #: says why, in one line. ``judge check`` refuses a reference that reduces or contracts with neither.
    magnitude: Identifier | None = None
    #: Why a problem declares ``magnitude = "none"`` (required with it, refused without it).
    magnitude_reason: str | None = Field(default=None, min_length=10, max_length=300)

    @field_validator("tolerance")
    @classmethod
    def _merge_defaults(cls, value: dict[str, Tolerance]) -> dict[str, Tolerance]:
        return {**default_tolerances(), **value}

    @model_validator(mode="after")
    def _reasoned(self) -> CompareSpec:
        if self.magnitude == NO_MAGNITUDE and not self.magnitude_reason:
            raise ValueError('compare.magnitude = "none" needs a one-line compare.magnitude_reason')
        if self.magnitude != NO_MAGNITUDE and self.magnitude_reason is not None:
            raise ValueError('compare.magnitude_reason goes only with compare.magnitude = "none"')
        return self

    @property
    def magnitude_function(self) -> str | None:
        """The name of the reference module's magnitude function, or None (none declared, or ``"none"``)."""
        return None if self.magnitude in (None, NO_MAGNITUDE) else self.magnitude

    def tolerance_on(self, backend: str) -> dict[str, Tolerance]:
        """The tolerance per dtype a grading on ``backend`` (``cpu``, ``tpu``, ``gpu``) applies."""
        over = self.backend.get(backend)  # type: ignore[call-overload]
        if over is None:
            return dict(self.tolerance)
        merged = dict(self.tolerance)
        for dtype, bounds in over.tolerance.items():
            merged[str(dtype)] = bounds.over(self.tolerance[str(dtype)])
        return merged

    def on(self, backend: str) -> CompareSpec:
        """These settings as a grading on ``backend`` applies them (``bind`` takes the result)."""
        return self.model_copy(update={"tolerance": self.tolerance_on(backend)})


class LimitsSpec(_Strict):
    #: Wall time for one case, compile included. The run stops at the first case over it.
    case_time_s: float = Field(default=10.0, gt=0, le=120)
    #: Wall time for the whole submission (start-up, import and every case).
    wall_time_s: float = Field(default=60.0, gt=0, le=600)
    #: CPU seconds of the sandboxed process, all threads counted.
    cpu_time_s: float = Field(default=120.0, gt=0, le=1200)
    #: Memory the sandboxed process may use, in MiB (JAX needs ~300 MiB to start).
    memory_mb: int = Field(default=1536, ge=512, le=16384)
    #: Bytes of captured user output (stdout and stderr together); the rest is cut with a notice.
    output_bytes: int = Field(default=64 * 1024, ge=1024, le=16 * 1024 * 1024)
    #: Processes and threads the sandbox may hold at once (JAX starts ~17 threads).
    processes: int = Field(default=64, ge=24, le=1024)


#: Most CPU host devices a problem may ask for (each executor of that count holds them all).
MAX_DEVICES = 64


class MeshSpec(_Strict):
    """The device mesh a problem describes: axis names and sizes (their product is the device count),
    over devices 0..n-1 in row-major order. The judge words output shardings against it."""

    axes: list[Identifier] = Field(min_length=1, max_length=4)
    shape: list[int] = Field(min_length=1, max_length=4)

    @model_validator(mode="after")
    def _consistent(self) -> MeshSpec:
        if len(self.axes) != len(self.shape):
            raise ValueError("mesh.axes and mesh.shape need one entry per axis")
        if len(set(self.axes)) != len(self.axes):
            raise ValueError("mesh.axes repeat a name")
        if any(n < 1 for n in self.shape):
            raise ValueError("mesh.shape entries must be at least 1")
        return self


class SandboxSpec(_Strict):
    """What the sandbox gives the problem's programs: ``devices`` CPU host devices (more than one: programs
    are lowered and compiled for that many partitions, and each output's sharding is compared with the
    reference's), and the ``mesh`` the statement describes (required with more than one device)."""

    devices: int = Field(default=1, ge=1, le=MAX_DEVICES)
    mesh: MeshSpec | None = None

    @model_validator(mode="after")
    def _mesh_fits(self) -> SandboxSpec:
        if self.devices > 1 and self.mesh is None:
            raise ValueError("sandbox.devices > 1 needs sandbox.mesh (axes and shape)")
        if self.mesh is not None and math.prod(self.mesh.shape) != self.devices:
            raise ValueError(
                f"sandbox.mesh has {math.prod(self.mesh.shape)} devices (shape {self.mesh.shape}); "
                f"sandbox.devices is {self.devices}"
            )
        return self


class DtypePolicy(_Strict):
    #: Leaf dtypes cases may use; every case declares one of them for all its leaves.
    allowed: list[CaseDtype] = Field(default_factory=lambda: list[CaseDtype](["float32"]), min_length=1)
    #: The dtype of custom Run-panel inputs (JSON cannot say bfloat16).
    run_panel: CaseDtype = "float32"

    @model_validator(mode="after")
    def _run_panel_allowed(self) -> DtypePolicy:
        if self.run_panel not in self.allowed:
            raise ValueError(f"run_panel dtype {self.run_panel!r} is not in allowed {self.allowed}")
        return self


class ReachSpec(_Strict):
    """How close the hidden cases must come to each bound the validator checks (``judge check``'s
    ``reach`` check; ``judge.constraints.Bound``). A bound B other than 0 is approached when the cases
    reach B / factor (an upper bound; B * factor for a lower one, mirrored for negative bounds); a bound
    at 0 when they come within ``zero_band`` of it; a rank bound only when they reach it exactly."""

    #: The factor for every bound the problem does not name in ``factors``.
    factor: float = Field(default=10.0, ge=1.0, le=1e6)
    #: Per bound, by the key the check reports (``"step: at most"``), a factor of its own.
    factors: dict[str, Annotated[float, Field(ge=1.0, le=1e6)]] = Field(default_factory=dict)
    #: How close the cases must come to a bound at 0.
    zero_band: float = Field(default=1e-3, gt=0, le=1.0)


class PromiseSpec(_Strict):
    """One promise the statement makes about the inputs (``judge check``'s ``promises`` check): a sentence
    such as "values that lie thousands apart" or "a new value may be much smaller than the one it
    overwrites", which some hidden case must reach, or a shortcut that breaks only there passes.

    ``says`` quotes a few words of the statement; ``reached_by`` names a predicate of ``validator.py``,
    ``name(args, dtype) -> bool`` over a case's converted inputs (the arguments ``validate`` gets), true
    when the case reaches the promise; ``bounds`` names stated bounds (by the key the ``reach`` check
    reports, e.g. ``"step: at most"``) that interact, so one hidden case must approach them all at once
    (and meet ``reached_by`` when both are given)."""

    says: Annotated[str, Field(min_length=3)]
    reached_by: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")] | None = None
    bounds: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _reached_somehow(self) -> PromiseSpec:
        if self.reached_by is None and not self.bounds:
            raise ValueError("a promise needs reached_by (a predicate of validator.py), bounds, or both")
        return self


class AccuracySpec(_Strict):
    """How accurate the reference must be (``judge check``'s ``accuracy`` check): on every case, its
    largest error against the float64 evaluation of itself (``judge.check.float64_run``), in tolerances of
    the case dtype, may be at most ``share`` (or the dtype's entry in ``shares``).

    The defaults: a quarter of the tolerance, and 0.4 for bfloat16, where arithmetic in the leaf's dtype
    (a weakly typed Python float times a bfloat16 array) rounds twice before the output, a third of the
    default 3-ulp tolerance, while a solution that computes in float32 rounds once."""

    #: The share of the tolerance the reference's own error may use, for every dtype not in ``shares``.
    share: float = Field(default=0.25, gt=0, le=1)
    #: Per case dtype, a share of its own (bfloat16: 0.4 unless set).
    shares: dict[CaseDtype, Annotated[float, Field(gt=0, le=1)]] = Field(default_factory=dict)

    def limit(self, dtype: str) -> float:
        given = {str(name): share for name, share in self.shares.items()}
        if dtype in given:
            return given[dtype]
        if "share" in self.model_fields_set:
            return self.share
        return DEFAULT_ACCURACY_SHARES.get(dtype, self.share)


#: Per dtype, the ``[accuracy]`` share when a problem sets neither ``share`` nor that dtype's entry.
DEFAULT_ACCURACY_SHARES = {"bfloat16": 0.4}


class SolutionsSpec(_Strict):
    #: Extra verdicts a solutions folder may also get, e.g. a fork bomb under ``runtime_error/``
    #: that a host may instead stop with a memory limit: ``{"runtime_error": ["memory_limit_exceeded"]}``.
    also_allow: dict[VerdictName, list[VerdictName]] = Field(default_factory=dict)


#: A StableHLO op name as the executor reports it (``stablehlo.while``, ``stablehlo.sort``).
OpName = Annotated[str, Field(pattern=r"^(stablehlo|chlo)\.[a-z_]+$", max_length=64)]


class StepsSpec(_Strict):
    """Where a rule's number of steps is: the length of axis ``axis`` of argument ``arg`` (an array, or a
    pytree's first leaf), or the value of a static ``int`` argument; and how much the program's ops
    outside loops may grow with it (``judge.grading.transform_rules.unrolled_broken``): under one op per step
    (a loop's body is one copy), or, with ``per_doubling``, at most that many ops per doubling of the
    steps (``jax.lax.associative_scan`` adds a level of combines per doubling; an unrolled Python loop
    adds a copy per step)."""

    arg: Identifier
    axis: int = Field(default=0, ge=0, le=8)
    per_doubling: int | None = Field(default=None, ge=1, le=10_000)


class LoopRule(_Strict):
    """The program must compute in a loop: a ``stablehlo.while`` (what ``jax.lax.scan``, ``fori_loop`` and
    ``while_loop`` lower to; a Python loop unrolls while tracing and leaves none) whose body (its regions
    and the functions they call, transitively) holds at least one of ``body_has_any``, so a loop that does
    none of the work does not count. Checked on the program the executor compiles.
    """

    kind: Literal["require_loop"]
    #: What the problem asks for, completing "this problem asks you to ...": ``accumulate with jax.lax.scan``.
    asks: str = Field(min_length=1, max_length=200)
    #: Ops of which the loop body must hold at least one (the work to be done per step).
    body_has_any: list[OpName] = Field(min_length=1)
    #: What those ops are, for messages: ``a reduction or a dot product``.
    body_work: str = Field(min_length=1, max_length=120)
    #: Where the number of steps is (``judge.grading.transform_rules.unrolled_broken``): the program's ops
    #: outside its loops must not grow with it, so an unrolled Python loop beside a loop that does part of the
    #: work fails. None: no such bound.
    steps: StepsSpec | None = None


class ForbidOpsRule(_Strict):
    """The program must not contain any of ``ops`` anywhere (nested computations included)."""

    kind: Literal["forbid_ops"]
    asks: str = Field(min_length=1, max_length=200)
    ops: list[OpName] = Field(min_length=1)
    #: What those ops are, for messages: ``a sort``.
    what: str = Field(min_length=1, max_length=120)
    #: A bound on how the program grows with the number of steps (``StepsSpec``): forbidding a loop
    #: alone lets an unrolled Python loop through.
    steps: StepsSpec | None = None


class InPlaceRule(_Strict):
    """The arguments in ``donate`` are donated to the compiled program (``jax.jit``'s ``donate_argnames``)
    and it must update them in place: every donated buffer reused for an output (XLA's input/output
    aliasing), and the whole program's memory traffic (XLA's cost analysis of the compiled program: bytes
    read and written) at most ``max_traffic`` times the donated buffers' bytes. Writing a few entries into
    a donated buffer touches only those entries; rebuilding it (concatenate, pad, a ``where`` over every
    position, a one-hot multiply-add) reads and writes all of it, twice its bytes. A program with a loop
    or a custom call breaks the rule, since XLA's cost analysis counts a loop's body once and a custom call
    not at all (``judge.grading.compiled_rules.UpdateInPlace``)."""

    kind: Literal["update_in_place"]
    asks: str = Field(min_length=1, max_length=200)
    #: Traced arguments donated to the program (``array`` or ``pytree``; every leaf is donated).
    donate: list[Identifier] = Field(min_length=1)
    #: The most bytes the compiled program may read and write, as a share of the donated bytes.
    max_traffic: float = Field(default=0.5, gt=0, lt=1)


class AutodiffRule(_Strict):
    """Named elements of the output must come from JAX's autodiff of the user's own function
    (``judge.grading.transform_rules``): the program computes the function twice, the second time with every
    autodiff seed (``jax.vjp``'s cotangent, ``jax.jvp``'s tangent) scaled by a power of two; what autodiff
    made scales with it, a hand-written derivative does not."""

    kind: Literal["require_autodiff"]
    #: Completes "this problem asks you to ...": ``compute the gradient with jax.value_and_grad``.
    asks: str = Field(min_length=1, max_length=200)
    #: Elements of the tuple output (``output.names``) that must come from autodiff.
    outputs: list[Identifier] = Field(min_length=1)


class BatchedRule(_Strict):
    """The function must be batched over one axis of an argument, as ``jax.vmap`` makes it
    (``judge.grading.transform_rules``): the program holds no loop, and it has the same number of ops whatever
    that axis's size (unrolled copies, one per member, grow with it). Decided across the programs of one
    grading whose cases differ in that size."""

    kind: Literal["require_batched"]
    asks: str = Field(min_length=1, max_length=200)
    #: The traced array or pytree argument whose every leaf has the batch axis.
    arg: Identifier
    #: That axis, the same for every leaf of ``arg``.
    axis: int = Field(default=0, ge=0, le=8)
    #: What one slice along the axis is, for messages: ``ensemble member``.
    member: str = Field(min_length=1, max_length=60)


class RematRule(_Strict):
    """The gradient must be computed with rematerialisation, as ``jax.checkpoint`` makes it: the backward
    pass computes at least one of ``recompute_any`` again, from values that passed an optimization barrier,
    and that second computation reaches the gradient, while the function's own output does not read a
    barrier (``sandbox.inside.remat``, ``judge.grading.compiled_rules.remat_message``). Needs a
    ``[gradient]``, or an output that holds a gradient the function takes itself."""

    kind: Literal["require_remat"]
    #: Completes "this problem asks you to ...": ``recompute each layer with jax.checkpoint``.
    asks: str = Field(min_length=1, max_length=200)
    #: Forward ops of which the backward pass must compute at least one again (``stablehlo.tanh``).
    recompute_any: list[OpName] = Field(min_length=1)
    #: What those ops are, for messages: ``the layer's tanh``.
    what: str = Field(min_length=1, max_length=120)


ProgramRuleSpec = Annotated[
    LoopRule | ForbidOpsRule | InPlaceRule | AutodiffRule | BatchedRule | RematRule,
    Field(discriminator="kind"),
]


class CostRule(_Strict):
    """A bound on what the compiled program costs, as multiples of the reference's program on the same case
    (XLA's cost analysis of each, ``judge.feedback.cost``): ``max_flops_ratio = 4`` allows at most 4x the
    reference's FLOPs, ``max_bytes_ratio = 1`` at most its bytes accessed. Checked on the trusted side from
    the executor's figures; a program over a bound is ``wrong_answer`` with reason ``rule``."""

    max_flops_ratio: float | None = Field(default=None, gt=0, le=1e6)
    max_bytes_ratio: float | None = Field(default=None, gt=0, le=1e6)


class GradientSpec(_Strict):
    """A transformation check: the vector-Jacobian product of the function with respect to ``wrt`` for a
    fixed ``cotangent`` (``sandbox.shared.transforms``) must match the reference's, like the output does."""

    #: Traced pytree arguments to differentiate with respect to.
    wrt: list[Identifier] = Field(min_length=1)
    #: ``ones`` (the gradient of the sum of the output) or ``pattern`` (1 to 1.75 times 1/64 to 64, both
    #: signs, per leaf).
    cotangent: Literal["ones", "pattern"] = "pattern"


class ProblemSpec(_Strict):
    """The ``problem.toml`` of a problem package."""

    slug: Slug
    title: str = Field(min_length=1, max_length=120)
    difficulty: Literal["easy", "medium", "hard"]
    #: The package's human-readable version, raised by hand with each change to what grading reads
    #: (cases, reference, limits, ...); 1 when absent. The API shows it beside the content hash (which
    #: changes with any file) and every submission's manifest records both.
    revision: int = Field(default=1, ge=1, le=1_000_000)
    tags: list[str] = Field(default_factory=list)
    #: Slugs of problems a learner may try next (the catalog's "similar problems" links, strongest first):
    #: the problem list's suggested order follows them. A slug not in the catalog links nothing until a
    #: problem with it exists (``judge check`` notes it, and warns when it looks like a typo).
    similar: list[Slug] = Field(default_factory=list)
    #: Name of the function users define.
    function: Identifier
    #: Module under ``reference/`` that defines ``function`` (trusted code).
    reference: Identifier
    args: list[ArgSpec] = Field(min_length=1)
    output: OutputSpec
    dtypes: DtypePolicy = Field(default_factory=DtypePolicy)
    compare: CompareSpec = Field(default_factory=CompareSpec)
    limits: LimitsSpec = Field(default_factory=LimitsSpec)
    #: Host devices and mesh (``SandboxSpec``); one device by default.
    sandbox: SandboxSpec = Field(default_factory=SandboxSpec)
    #: Case files relative to the problem folder, in grading order (public cases first).
    case_files: list[str] = Field(default_factory=lambda: ["cases/public.json", "cases/hidden.json"])
    hints: list[str] = Field(default_factory=list)
    solutions: SolutionsSpec = Field(default_factory=SolutionsSpec)
    #: How close the hidden cases must come to the validator's bounds.
    reach: ReachSpec = Field(default_factory=ReachSpec)
    #: How accurate the reference must be against its own float64 evaluation.
    accuracy: AccuracySpec = Field(default_factory=AccuracySpec)
    #: What backs each requirement the statement states (``judge check``'s ``requirements`` check): a few
    #: words of the requirement -> ``solution:<folder>/<file>.py``, ``case:<name>``, ``rule:<kind>``,
    #: ``check:<name>``, ``gradient``, ``compare`` or ``jit``.
    requirements: dict[str, Annotated[list[str], Field(min_length=1)]] = Field(default_factory=dict)
    #: What the statement promises about the inputs, each reached by a hidden case (``PromiseSpec``).
    promises: list[PromiseSpec] = Field(default_factory=list)
    #: Rules on the user's compiled program (``judge.grading.compiled_rules``), stated in the generated
    #: statement.
    rules: list[ProgramRuleSpec] = Field(default_factory=list)
    #: A gradient checked beside the output (``sandbox.shared.transforms``).
    gradient: GradientSpec | None = None
    #: A bound on the program's cost beside the reference's (``CostRule``), stated in the statement.
    cost: CostRule | None = None
    #: The menu module of ``function`` arguments, a file of the package (problem code: it is sent into the
    #: sandbox, and the reference gets the same functions on the trusted side).
    functions: Annotated[str, Field(pattern=r"^[a-z_][a-z0-9_]*\.py$")] | None = None

    @field_validator("function", "reference")
    @classmethod
    def _not_keyword(cls, value: str) -> str:
        if keyword.iskeyword(value):
            raise ValueError(f"{value!r} is a Python keyword")
        return value

    @model_validator(mode="after")
    def _args_unique(self) -> ProblemSpec:
        names = [a.name for a in self.args]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"argument names repeat: {dupes}")
        if self.slug in self.similar:
            raise ValueError("similar names the problem itself")
        repeated = sorted({s for s in self.similar if self.similar.count(s) > 1})
        if repeated:
            raise ValueError(f"similar repeats {repeated}")
        if self.output.kind == "tuple" and not self.output.names:
            raise ValueError("output.kind 'tuple' needs output.names, one per element")
        if any(kind_of(a.kind).needs_menu for a in self.args) and self.functions is None:
            raise ValueError(
                "a function argument needs `functions`, the package's menu module (functions.py)"
            )
        if "inputs_unchanged" in self.compare.checks and not any(kind_of(a.kind).tree for a in self.args):
            raise ValueError(
                "compare.checks 'inputs_unchanged' needs a pytree argument: it watches the dicts and lists "
                "of pytree inputs (a traced array cannot be changed in place)"
            )
        for rule in self.rules:
            if isinstance(rule, InPlaceRule):
                for name in rule.donate:
                    if name not in names:
                        raise ValueError(f"rules: donate names {name!r}, which is not an argument")
                    if not kind_of(self.arg(name).kind).arrays:
                        raise ValueError(
                            f"rules: donate names {name!r}, which is not a traced array or pytree argument"
                        )
                if len(set(rule.donate)) != len(rule.donate):
                    raise ValueError("rules: donate repeats an argument")
        self._transform_rules_fit(names)
        if self.gradient is not None:
            for name in self.gradient.wrt:
                if name not in names:
                    raise ValueError(f"gradient.wrt names {name!r}, which is not an argument")
                arg = self.arg(name)
                if not kind_of(arg.kind).arrays or not arg.traced:
                    raise ValueError(f"gradient.wrt names {name!r}, which is not a traced array argument")
            if len(set(self.gradient.wrt)) != len(self.gradient.wrt):
                raise ValueError("gradient.wrt repeats an argument")
        return self

    def _transform_rules_fit(self, names: list[str]) -> None:
        """``require_autodiff`` and ``require_batched`` name parts of this spec: check that they exist."""
        kinds = [rule.kind for rule in self.rules]
        for kind in ("require_autodiff", "require_batched", "require_remat"):
            if kinds.count(kind) > 1:
                raise ValueError(f"rules: at most one {kind!r} rule")
        for rule in self.rules:
            if isinstance(rule, AutodiffRule):
                if self.output.kind != "tuple":
                    raise ValueError("rules: require_autodiff names outputs, so it needs output.kind 'tuple'")
                for name in rule.outputs:
                    if name not in self.output.names:
                        raise ValueError(
                            f"rules: require_autodiff names output {name!r}, not in output.names"
                        )
                if self.gradient is not None:
                    raise ValueError("rules: require_autodiff and [gradient] cannot be combined")
            elif isinstance(rule, BatchedRule):
                if rule.arg not in names:
                    raise ValueError(f"rules: require_batched names {rule.arg!r}, which is not an argument")
                arg = self.arg(rule.arg)
                if not kind_of(arg.kind).arrays or not arg.traced:
                    raise ValueError(
                        f"rules: require_batched names {rule.arg!r}, which is not a traced array argument"
                    )
            elif isinstance(rule, LoopRule | ForbidOpsRule) and rule.steps is not None:
                if rule.steps.arg not in names:
                    raise ValueError(
                        f"rules: {rule.kind} steps names {rule.steps.arg!r}, which is not an argument"
                    )
                arg = self.arg(rule.steps.arg)
                if not kind_of(arg.kind).gives_steps:
                    raise ValueError(
                        f"rules: {rule.kind} steps names {rule.steps.arg!r}, which is neither an array, a "
                        "pytree nor an int argument"
                    )
        if sum(isinstance(r, LoopRule | ForbidOpsRule) and r.steps is not None for r in self.rules) > 1:
            raise ValueError("rules: at most one rule with steps")

    def arg(self, name: str) -> ArgSpec:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(name)


class CaseDef(_Strict):
    """One case as written in a case file: Run-panel JSON per argument plus the leaf dtype."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", max_length=80)
    visibility: Literal["public", "hidden"]
    dtype: CaseDtype = "float32"
    args: dict[str, Any]
    #: Shown under the example in the statement (public cases only).
    explanation: str | None = None
    #: The author's hand-worked output (Run-panel JSON, a tuple written as a list), never shown or sent
    #: anywhere: ``judge check`` requires the reference's output to agree with it (like a sample's answer
    #: file in Kattis problemtools), which catches a reference that solves a different problem.
    expected: Any = None


class CaseFile(_Strict):
    cases: list[CaseDef]


# --------------------------------------------------------------------------------------- error messages


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (through Annotated, unions, lists and dict values)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Annotated:
        return _models_in(args[0])
    if origin is dict:
        return _models_in(args[1]) if len(args) == 2 else []
    if origin in (list, tuple, typing.Union, types.UnionType):
        return [m for arg in args for m in _models_in(arg)]
    return []


def keys_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """The keys a table at ``loc`` (a pydantic error location) of ``model`` may hold; empty when unknown."""
    current: list[type[BaseModel]] = [model]
    for part in loc:
        if isinstance(part, int):
            continue  # a list index: the same models below it
        fields = [c.model_fields[part] for c in current if part in c.model_fields]
        if not fields:
            continue  # a key of a dict of models (a dtype under compare.tolerance): the same models
        current = [m for f in fields for m in _models_in(f.annotation)]
        if not current:
            return []
    return sorted({name for candidate in current for name in candidate.model_fields})


def did_you_mean(word: str, known: list[str]) -> str:
    """``; did you mean 'traced'?`` for a close match among ``known``, else empty."""
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def explain(error: ErrorDetails, model: type[BaseModel]) -> str:
    """One pydantic error of validating ``model`` as a sentence for an author: an unknown key names the
    keys allowed there and the closest one; a value of the wrong type names what was written."""
    loc = tuple(error["loc"])
    if error["type"] == "extra_forbidden" and loc:
        key = str(loc[-1])
        known = keys_at(model, loc[:-1])
        listed = f" (allowed here: {', '.join(known)})" if known else ""
        return f"unknown key {key!r}{did_you_mean(key, known)}{listed}"
    message = error["msg"]
    if error["type"].endswith("_type") or error["type"] in (
        "literal_error",
        "enum",
        "string_pattern_mismatch",
    ):
        value = error.get("input")
        if not isinstance(value, dict | list):
            message += f", not {_shown(value)}"
        if error["type"] == "bool_type":
            message += " (write true or false, without quotes)"
        elif error["type"] in ("int_type", "float_type") and isinstance(value, str):
            message += " (write the number without quotes)"
    return message
