"""Custom-call contracts: every custom call of a program must be one that JAX's own lowering makes.

A LAPACK kernel trusts its call: it reads and writes the buffers XLA hands it with the sizes its own lowering
rule declared. A program is bytes the submission chose, so a call to an allowed target with other types
than JAX would give makes the kernel write past a small result (a heap overflow) or leave most of a large
one unwritten (XLA's uninitialised buffer, which can hold an earlier case's inputs, comes back as output).

So each ``stablehlo.custom_call`` is checked before anything compiles. For a LAPACK target ``T`` called with
operand types ``O``, the checker lowers, on abstract inputs of types ``O``, the ``jax.lax.linalg`` function
whose lowering makes ``T`` (``FAMILIES``), over that function's small parameter space (``full_matrices``,
``compute_uv``, ``lower``, ``left_side``...), with the executor's own lowering (the tracer's: one jaxlib).
The custom calls found there are the contract: the program's call must equal one of them exactly, as
target, operand and result types and every attribute (``backend_config`` and ``mhlo.backend_config``,
``api_version``, operand and result layouts, aliases, side effect, called computations...). Types come from
JAX, never from a table kept here; contracts are cached per (target, operand types) in the process.

Partitioning annotations (``Sharding``, ``SPMDFullToShardShape``, ``SPMDShardToFullShape``) compile to
nothing on one device; they must have one operand and one result of the same type and only the attributes
JAX's ``mlir.custom_call`` gives them. Any other target is refused, named.

On several devices (a problem's ``[sandbox] devices``) annotations decide where every value lives, so they
are held to what JAX's lowering makes for that many devices (``check_partitioning``): the module is lowered
for exactly that many partitions; JAX lowers shardings with Shardy, so the only partitioning ops are
``sdy.mesh``, ``sdy.sharding_constraint``, ``sdy.manual_computation`` (``shard_map``) and its
``sdy.return``, and GSPMD's custom calls, which JAX makes only with Shardy switched off, are refused; every
mesh spans exactly the job's devices (axis sizes whose product is the device count, ``device_ids`` a
permutation of them), so an annotation cannot name a device the job does not have or leave one out. What
the annotations then ask for is what XLA compiles, and the judge reads the outputs' shardings from the
compiled executable, never from the annotations.

It runs in the executor: it imports only JAX and the standard library.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sandbox.inside.op_policy import attribute_items

#: Partitioning annotations: a no-op on one device.
ANNOTATIONS = frozenset({"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"})
#: Distinct (target, operand types) one program may call: each new one costs a lowering (3-20 ms).
MAX_CONTRACTS_PER_PROGRAM = 32
#: Contracts kept per executor process (least recently used dropped first).
CACHE_ENTRIES = 512
_LAPACK = re.compile(r"lapack_([sdcz])([a-z]+)_ffi")
_UNSPECIFIED_DIMS = re.compile(r"unspecified_dims=\[\d{1,2}(,\d{1,2})*\]")
_NUMPY_DTYPES = {
    "f32": "float32",
    "f64": "float64",
    "complex<f32>": "complex64",
    "complex<f64>": "complex128",
    "i32": "int32",
    "i64": "int64",
}
#: Element types that need jax_enable_x64 to be lowered as such (the executor runs with it off).
_WIDE = frozenset({"f64", "complex<f64>", "i64"})


class BrokenContract(Exception):
    """A custom call that is not one JAX's lowering makes; the message names the call and what differs."""


@dataclass(frozen=True)
class Call:
    """One custom call, normalised: everything that decides what the kernel reads and writes."""

    target: str
    operands: tuple[str, ...]
    results: tuple[str, ...]
    attributes: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Family:
    """The ``jax.lax.linalg`` function whose lowering makes a LAPACK target, and its parameter space."""

    name: str
    arity: int
    #: One function of the operands per point of the parameter space.
    variants: Callable[[], list[Callable[..., Any]]]


def _grid(function: Callable[..., Any], **axes: Sequence[Any]) -> list[Callable[..., Any]]:
    """``function`` with every combination of the keyword values in ``axes``."""
    names = list(axes)
    out: list[Callable[..., Any]] = []
    for values in itertools.product(*(axes[n] for n in names)):
        params = dict(zip(names, values, strict=True))
        out.append(lambda *args, _p=params: function(*args, **_p))
    return out


def _families() -> dict[str, Family]:
    from jax import lax
    from jax._src.lax import linalg as internal

    linalg = lax.linalg
    two = (False, True)
    # Jacobi and polar SVD have no CPU lowering; one variant JAX cannot lower costs a lowering per variant.
    algorithms = (linalg.SvdAlgorithm.DEFAULT, linalg.SvdAlgorithm.QR)
    svd = Family(
        "svd",
        1,
        lambda: _grid(linalg.svd, full_matrices=two, compute_uv=two, algorithm=algorithms),
    )
    eigh = Family(
        "eigh",
        1,
        lambda: _grid(linalg.eigh, lower=two, sort_eigenvalues=two, symmetrize_input=(False,)),
    )
    qr = Family("qr", 1, lambda: [internal.geqrf, *_grid(linalg.qr, full_matrices=two)])
    householder = Family("householder_product", 2, lambda: [linalg.householder_product])
    tridiagonal = Family("tridiagonal", 1, lambda: _grid(linalg.tridiagonal, lower=two))
    return {
        "gesdd": svd,
        "syevd": eigh,
        "heevd": eigh,
        "geev": Family(
            "eig",
            1,
            lambda: _grid(linalg.eig, compute_left_eigenvectors=two, compute_right_eigenvectors=two),
        ),
        "geqrf": qr,
        "orgqr": householder,
        "ungqr": householder,
        "potrf": Family("cholesky", 1, lambda: _grid(linalg.cholesky, symmetrize_input=(False,))),
        "getrf": Family("lu", 1, lambda: [linalg.lu]),
        "trsm": Family(
            "triangular_solve",
            2,
            lambda: _grid(
                linalg.triangular_solve,
                left_side=two,
                lower=two,
                transpose_a=two,
                conjugate_a=two,
                unit_diagonal=two,
            ),
        ),
        "gees": Family(
            "schur", 1, lambda: _grid(linalg.schur, compute_schur_vectors=two, sort_eig_vals=(False,))
        ),
        "gehrd": Family("hessenberg", 1, lambda: [linalg.hessenberg]),
        "sytrd": tridiagonal,
        "hetrd": tridiagonal,
        "gtsv": Family("tridiagonal_solve", 4, lambda: _grid(linalg.tridiagonal_solve, perturb_singular=two)),
    }


def short(kind: str) -> str:
    """``tensor<4x4xf32>`` as ``f32[4,4]``; other types as MLIR prints them."""
    match = re.fullmatch(r"tensor<((?:\d+x)*)([^x<>]+|complex<[^<>]+>)>", kind)
    if match is None:
        return kind
    dims = match.group(1).rstrip("x").replace("x", ",")
    return f"{match.group(2)}[{dims}]"


def _shorts(kinds: Iterable[str]) -> str:
    return ", ".join(short(k) for k in kinds)


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Contracts:
    """Checks every custom call of a module; ``lower(closed_jaxpr) -> bytes`` is the tracer's lowering."""

    def __init__(self, allowed: Iterable[str], lower: Callable[[Any], bytes]) -> None:
        import jax
        from jax._src.interpreters import mlir
        from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

        self.jax: Any = jax
        self.ir: Any = ir
        self.mlir: Any = mlir
        self.allowed = frozenset(allowed)
        self.lower = lower
        self.families = _families()
        self.lock = threading.Lock()
        self.cache: collections.OrderedDict[tuple[str, tuple[str, ...]], tuple[Call, ...]] = (
            collections.OrderedDict()
        )

    # ------------------------------------------------------------------------------------------ checking

    def check(self, module: Any) -> None:
        """Raise ``BrokenContract`` for the first custom call of ``module`` that JAX's lowering would not
        make (in walk order: nested regions and private functions included)."""
        calls: list[Call] = []
        ir = self.ir

        def visit(op: Any) -> Any:
            if op.name == "stablehlo.custom_call":
                calls.append(self.normalise(op.operation))
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        kinds = {(c.target, c.operands) for c in calls if c.target not in ANNOTATIONS}
        if len(kinds) > MAX_CONTRACTS_PER_PROGRAM:
            raise BrokenContract(
                f"the program makes custom calls of {len(kinds)} kinds (target and operand types); the judge "
                f"checks at most {MAX_CONTRACTS_PER_PROGRAM} per program"
            )
        for call in calls:
            self.check_call(call)

    def normalise(self, op: Any) -> Call:
        attributes = dict(attribute_items(op))  # by name: reading by position can abort the process
        return Call(
            target=str(self.ir.StringAttr(op.attributes["call_target_name"]).value),
            operands=tuple(str(v.type) for v in op.operands),
            results=tuple(str(r.type) for r in op.results),
            attributes=tuple(sorted(attributes.items())),
        )

    def check_call(self, call: Call) -> None:
        target = call.target
        if target in ANNOTATIONS:
            _check_annotation(call)
            return
        if target not in self.allowed:
            raise BrokenContract(f"the program uses the custom call {target!r}, which the judge does not run")
        match = _LAPACK.fullmatch(target)
        family = self.families.get(match.group(2)) if match else None
        if family is None:
            raise BrokenContract(
                f"the custom call {target} has no contract the judge can check, so the judge does not run it"
            )
        where = f"the custom call {target}"
        if len(call.operands) != family.arity:
            raise BrokenContract(
                f"{where} takes {_count(len(call.operands), 'operand')} ({_shorts(call.operands)}) where "
                f"JAX's lowering of {family.name} passes {family.arity}"
            )
        expected = self.contract(target, call.operands, family)
        if call in expected:
            return
        lowering = f"JAX's lowering of {family.name} for {_shorts(call.operands)}"
        same = [c for c in expected if c.target == target]
        if not same:
            others = sorted({c.target for c in expected})
            made = f" (it calls {', '.join(others)})" if others else ""
            raise BrokenContract(f"{where} is not a call {lowering} makes{made}")
        raise BrokenContract(f"{where} {_difference(call, same, lowering)}")

    # ------------------------------------------------------------------------------------------ contracts

    def contract(self, target: str, operands: tuple[str, ...], family: Family) -> tuple[Call, ...]:
        """Every custom call JAX's lowering of ``family`` makes for operands of these types (cached)."""
        key = (target, operands)
        with self.lock:
            found = self.cache.get(key)
            if found is not None:
                self.cache.move_to_end(key)
                return found
        found = self._derive(operands, family)
        with self.lock:
            self.cache[key] = found
            while len(self.cache) > CACHE_ENTRIES:
                self.cache.popitem(last=False)
        return found

    def _derive(self, operands: tuple[str, ...], family: Family) -> tuple[Call, ...]:
        avals = self._avals(operands)
        if avals is None:
            return ()
        wide = any(_element(o) in _WIDE for o in operands)
        variants = family.variants()
        with self.jax.enable_x64(True) if wide else contextlib.nullcontext():
            calls = self._lowered_calls(variants, avals)
            if calls is None:  # one variant JAX cannot lower for these types spoils the lot: one at a time
                calls = []
                for variant in variants:
                    calls.extend(self._lowered_calls([variant], avals) or ())
        return tuple(dict.fromkeys(calls))

    def _avals(self, operands: tuple[str, ...]) -> list[Any] | None:
        avals = []
        for kind in operands:
            match = re.fullmatch(r"tensor<((?:\d+x)*)([^x<>]+|complex<[^<>]+>)>", kind)
            if match is None or match.group(2) not in _NUMPY_DTYPES:
                return None
            dims = tuple(int(d) for d in match.group(1).split("x") if d)
            avals.append(self.jax.ShapeDtypeStruct(dims, _NUMPY_DTYPES[match.group(2)]))
        return avals

    def _lowered_calls(self, variants: list[Callable[..., Any]], avals: list[Any]) -> list[Call] | None:
        """The custom calls of one module that applies every variant (a variant whose shape rule refuses
        these types is left out); None if JAX could not lower it."""

        def every(*args: Any) -> list[Any]:
            outs = []
            for variant in variants:
                try:
                    outs.append(variant(*args))
                except Exception:  # this point of the parameter space does not take these types
                    continue
            return outs

        try:
            data = self.lower(self.jax.jit(every).trace(*avals).jaxpr)
        except Exception:
            return None
        calls: list[Call] = []
        ir = self.ir
        with self.mlir.make_ir_context():
            module = ir.Module.parse(data)

            def visit(op: Any) -> Any:
                if op.name == "stablehlo.custom_call":
                    calls.append(self.normalise(op.operation))
                return ir.WalkResult.ADVANCE

            module.operation.walk(visit)
        return calls


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _element(kind: str) -> str:
    match = re.fullmatch(r"tensor<(?:\d+x)*(.+)>", kind)
    return match.group(1) if match else kind


def _difference(call: Call, expected: Sequence[Call], lowering: str) -> str:
    """What differs between ``call`` and the nearest of ``expected`` (same target), worded for a learner."""

    def differences(want: Call) -> list[str]:
        out = []
        if call.operands != want.operands:
            out.append(
                f"passes operands {_shorts(call.operands)} where {lowering} passes {_shorts(want.operands)}"
            )
        if len(call.results) != len(want.results):
            out.append(
                f"declares {_count(len(call.results), 'result')} ({_shorts(call.results)}) where {lowering} "
                f"gives {len(want.results)} ({_shorts(want.results)})"
            )
        else:
            for got, wanted in zip(call.results, want.results, strict=True):
                if got != wanted:
                    out.append(f"declares a result of {short(got)} where {lowering} gives {short(wanted)}")
        have, need = dict(call.attributes), dict(want.attributes)
        for name in sorted(have.keys() | need.keys(), key=lambda n: (n in _LAST, n)):
            if name not in need:
                out.append(f"has the attribute {name} = {_clip(have[name])}, which {lowering} does not give")
            elif name not in have:
                out.append(f"lacks the attribute {name} = {_clip(need[name])} that {lowering} gives")
            elif have[name] != need[name]:
                out.append(f"has {name} = {_clip(have[name])} where {lowering} gives {_clip(need[name])}")
        return out

    nearest = min((differences(want) for want in expected), key=len)
    if not nearest:
        return f"is not a call {lowering} makes"
    more = len(nearest) - 1
    return nearest[0] + (f" (and {more} more difference{'s' if more > 1 else ''})" if more else "")


#: Attributes told last: they follow from the types, so the difference that matters is named first.
_LAST = frozenset({"mhlo.frontend_attributes", "sdy.sharding_rule"})


#: The attributes ``jax._src.interpreters.mlir.custom_call`` gives a partitioning annotation, and the
#: sharding ``set_sharding`` adds; values checked in ``_check_annotation``.
_ANNOTATION_ATTRIBUTES = frozenset(
    {"call_target_name", "has_side_effect", "backend_config", "api_version", "called_computations"}
)


#: Shardy ops JAX's lowering makes (``with_sharding_constraint``, ``reshard``, ``shard_map``).
SDY_OPS = frozenset({"sdy.mesh", "sdy.sharding_constraint", "sdy.manual_computation", "sdy.return"})
_MESH_AXIS = re.compile(r'"([^"]{0,200})"\s*=\s*(\d{1,9})')
_DEVICE_IDS = re.compile(r"device_ids\s*=\s*\[([\d,\s]{0,100000})\]")


def check_partitioning(ir: Any, module: Any, devices: int) -> None:
    """Raise ``BrokenContract`` unless ``module`` partitions as JAX's lowering does for ``devices`` host
    devices: lowered for that many partitions, Shardy's ops only, every mesh over exactly those devices."""
    attributes = module.operation.attributes
    partitions = attributes["mhlo.num_partitions"] if "mhlo.num_partitions" in attributes else None  # noqa: SIM401
    declared = str(partitions).split(":")[0].strip() if partitions is not None else "1"
    if declared != str(devices):
        raise BrokenContract(
            f"the program is lowered for {declared} partition(s); this problem runs on {devices} devices"
        )
    problems: list[str] = []

    def visit(op: Any) -> Any:
        name = op.name
        if name == "stablehlo.custom_call":
            target = str(ir.StringAttr(op.attributes["call_target_name"]).value)
            if target in ANNOTATIONS:
                problems.append(
                    f"the annotation {target} is GSPMD's form, which JAX's lowering for {devices} devices "
                    "does not make (it lowers shardings with Shardy: sdy.sharding_constraint)"
                )
        elif name.startswith("sdy.") and name not in SDY_OPS:
            problems.append(f"the program uses {name}, which JAX's lowering of shardings does not make")
        elif name == "sdy.mesh":
            name, mesh = str(op.attributes["sym_name"]), str(op.attributes["mesh"])
            problems.extend(_mesh_problems(name, mesh, devices))
        return ir.WalkResult.INTERRUPT if problems else ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if problems:
        raise BrokenContract(problems[0])


def _mesh_problems(name: str, mesh: str, devices: int) -> list[str]:
    """What is wrong with one ``sdy.mesh`` (its ``#sdy.mesh<...>`` text) for a job of ``devices``."""
    where = f"the mesh {name.strip(chr(34))}"
    sizes = [int(size) for _, size in _MESH_AXIS.findall(mesh.split("device_ids")[0])]
    count = 1
    for size in sizes:
        count *= size
    if count != devices:
        return [f"{where} spans {count} device(s) ({mesh[:120]}); this problem runs on {devices}"]
    ids = _DEVICE_IDS.search(mesh)
    if ids is not None:
        listed = [int(d) for d in ids.group(1).replace(" ", "").split(",") if d]
        if sorted(listed) != list(range(devices)):
            return [f"{where} names devices {listed[:16]}; this problem has devices 0 to {devices - 1}"]
    return []


def _check_annotation(call: Call) -> None:
    where = f"the annotation {call.target}"
    if len(call.operands) != 1 or len(call.results) != 1:
        raise BrokenContract(
            f"{where} has {len(call.operands)} operands and {len(call.results)} results where JAX's "
            "lowering gives one of each"
        )
    if call.operands != call.results:
        raise BrokenContract(
            f"{where} turns {short(call.operands[0])} into {short(call.results[0])}; on one device JAX's "
            "lowering keeps the type"
        )
    attributes = dict(call.attributes)
    shardings = [n for n in attributes if n in ("mhlo.sharding", "sdy.sharding")]
    extra = sorted(set(attributes) - _ANNOTATION_ATTRIBUTES - set(shardings))
    if extra or len(shardings) > 1:
        raise BrokenContract(
            f"{where} has the attribute {(extra or shardings)[0]}, which JAX's lowering does not give"
        )
    expected = {"api_version": "1 : i32", "called_computations": "[]"}
    for name, value in expected.items():
        if attributes.get(name) != value:
            raise BrokenContract(
                f"{where} has {name} = {attributes.get(name)} where JAX's lowering gives {value}"
            )
    if attributes.get("has_side_effect") not in ("false", "true"):
        raise BrokenContract(f"{where} has has_side_effect = {attributes.get('has_side_effect')}")
    config = attributes.get("backend_config", "")
    text = config[1:-1] if config.startswith('"') and config.endswith('"') else None
    if text is None or not (text == "" or _UNSPECIFIED_DIMS.fullmatch(text)):
        raise BrokenContract(
            f'{where} has backend_config = {_clip(config)} where JAX\'s lowering gives "" or unspecified_dims'
        )
