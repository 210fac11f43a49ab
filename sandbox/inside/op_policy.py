"""The op policy: a program is compiled only when all of it is something JAX's own lowering makes.

A program is bytes a submission chose (a primitive of its own can lower to any StableHLO), and some XLA
kernels trust parts of it: XLA:CPU hands a sort's comparator to ``std::sort``, which runs past both ends of
its buffer when the comparator is not a strict weak order (``a <= b``). So the executor does not forbid
what it knows to be dangerous; it allows only what JAX's lowerings make, read from JAX itself:

- **Ops and attributes** (``Table``): every op's name, the names of its attributes, and the values of its
  enumerated attributes (a comparison's direction and type, a dot's precision or algorithm, an FFT's type,
  a random generator's algorithm...) together with the kind of element it applies to (float, signed or
  unsigned integer, bool, complex) must appear in the table derived by lowering a corpus of JAX programs
  (``sandbox.inside.op_corpus``; ``op_table.json``, keyed by the JAX version it came from: with another
  JAX the executor derives it again at start). Attributes whose values are shapes (dimension numbers,
  window strides and padding, slice bounds, a sort's or reduction's dimensions) are checked against the
  operand types by the StableHLO verifier, which runs as the module is read (``lowering.parse``).
- **Sort comparators** (``Comparators``): a sort is accepted only when its comparator is, op for op, the
  one JAX's lowering of ``lax.sort`` makes for the same operand element types with some number of keys
  (compared as printed, values renamed in order of appearance, so SSA names do not matter; its ops are
  also held to the table like any other; ``is_stable`` may be either, as
  ``lax.sort`` lowers both with the same comparator). Derived by lowering ``lax.sort`` per element-type
  signature, once per executor process (the usual ones at start, ``warm``).
- **Regions handed to a kernel** (reduce, reduce-window, scatter, select-and-scatter, all-reduce,
  reduce-scatter): XLA compiles them into the kernel's loop as a function of scalars; the kernel's memory
  accesses depend only on the operand types and the op's shape attributes, never on what the region
  computes. What they may hold is still what JAX puts there: only ops JAX's lowering puts in such regions
  (``region_ops``, derived from reductions, windows, scans and ``.at[].apply`` updates of the corpus, and
  the functions they call), so no sort, custom call, collective or random generator runs inside a kernel.
  ``while``, ``case``, ``if`` and ``shard_map`` bodies are ordinary code: their ops are checked like any
  other.

A custom call's attributes are left to ``sandbox.inside.contracts`` (after this), which holds every one of
them to JAX's lowering of its primitive (a custom call in a kernel's region is still refused here); meshes
are held to JAX's lowering by ``check_partitioning``.

It runs in the executor: it imports only JAX and the standard library.
"""

from __future__ import annotations

import collections
import functools
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Ops whose kernel runs a region of the program for each element (reduction, update or selection).
KERNEL_REGION_OPS = frozenset(
    {
        "stablehlo.reduce",
        "stablehlo.reduce_window",
        "stablehlo.scatter",
        "stablehlo.select_and_scatter",
        "stablehlo.all_reduce",
        "stablehlo.reduce_scatter",
    }
)
SORT = "stablehlo.sort"
#: Checked, every attribute, against JAX's lowering of its primitive by ``sandbox.inside.contracts``.
CUSTOM_CALL = "stablehlo.custom_call"
#: Element-type signatures of sorts whose comparators are derived at start (``Comparators.warm``).
#: (``jnp.sort``, ``jnp.argsort`` and ``lax.sort_key_val`` of float32 and int32; no accepted solution of
#: today's problems sorts, so the rest are derived when a program first needs them, ~20-50 ms each.)
COMMON_SORTS: tuple[tuple[str, ...], ...] = (("f32",), ("f32", "i32"), ("i32",), ("i32", "i32"))
#: Distinct sort signatures one program may have: each new one costs a lowering of ``lax.sort``.
MAX_SORT_SIGNATURES = 16
#: Operands of one sort the judge derives a comparator for.
MAX_SORT_OPERANDS = 32
#: Sort signatures kept per executor process (least recently used dropped first).
CACHE_ENTRIES = 256
_ENUM = re.compile(r"^\[?#(?:stablehlo|chlo)(?:<|\.dot_algorithm<)")
_ELEMENT = re.compile(r"^tensor<(?:[0-9?]+x)*([^<>]+|complex<[^<>]+>)>$")
_NUMPY = {
    "f32": "float32",
    "f64": "float64",
    "f16": "float16",
    "bf16": "bfloat16",
    "i1": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "ui8": "uint8",
    "ui16": "uint16",
    "ui32": "uint32",
    "ui64": "uint64",
    "complex<f32>": "complex64",
    "complex<f64>": "complex128",
}
_WIDE = frozenset({"f64", "i64", "ui64", "complex<f64>"})


class PolicyViolation(Exception):
    """A program part JAX's lowering does not make; the message names the op and what differs."""


@functools.lru_cache(maxsize=4096)
def element(kind: str) -> str:
    """``tensor<4x4xf32>`` -> ``f32``; other types as MLIR prints them."""
    match = _ELEMENT.match(kind)
    return match.group(1) if match else kind


@functools.lru_cache(maxsize=4096)
def element_kind(kind: str) -> str:
    """The kind of a type's elements: float, int (signed), uint, bool, complex, or the type itself."""
    name = element(kind)
    if name == "i1":
        return "bool"
    if re.fullmatch(r"i\d+", name):
        return "int"
    if re.fullmatch(r"ui\d+", name):
        return "uint"
    if re.fullmatch(r"f\d+|bf16|f8E\w+|tf32", name):
        return "float"
    if name.startswith("complex<"):
        return "complex"
    return name


#: The text of an attribute MLIR's Python bindings cannot read (a dense array of complex numbers: reading it
#: by position aborts the process, by name raises): never a value JAX's lowering gives where it matters.
UNREADABLE = "<unreadable attribute>"


def _read(attributes: Any, name: str) -> str:
    try:
        return str(attributes[name])
    except TypeError:
        return UNREADABLE


def attribute_items(op: Any) -> list[tuple[str, str]]:
    """``op``'s attributes as (name, text), read by name: reading one by position makes the bindings cast
    it to its class, and an attribute they cannot cast then aborts the whole process."""
    attributes = op.attributes
    items = []
    for name in attributes.keys():  # noqa: SIM118 - iterating the map reads by position
        try:
            text = str(attributes[name])
        except TypeError:
            text = UNREADABLE
        items.append((str(name), text))
    return items


_attributes = attribute_items


def _op_kind(op: Any) -> str:
    """The element kind an op applies to: its first operand's, else its first result's."""
    if len(op.operands):
        return element_kind(str(op.operands[0].type))
    if len(op.results):
        return element_kind(str(op.results[0].type))
    return "none"


def _enums(attributes: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((n, v) for n, v in attributes if _ENUM.match(v)))


def _descendants(op: Any) -> Iterable[Any]:
    """Every op inside ``op``'s regions, nested ones included (an explicit stack: no recursion limit)."""
    stack = [op]
    while stack:
        parent = stack.pop()
        for region in parent.regions:
            for block in region.blocks:
                for child in block.operations:
                    child = child.operation
                    yield child
                    if len(child.regions):
                        stack.append(child)


def _all_ops(root: Any) -> list[Any]:
    """Every op under ``root`` (itself included), nested regions too, in MLIR's own walk (about five
    times cheaper than iterating blocks from Python). The callback only appends: an exception raised
    inside MLIR's walk would abort the process."""
    from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

    found: list[Any] = []
    advance = ir.WalkResult.ADVANCE

    def visit(op: Any) -> Any:
        found.append(op)
        return advance

    root.walk(visit, ir.WalkOrder.PRE_ORDER)  # ``root`` first
    return found


def _kernel_ops(module: Any, kernels: Iterable[Any]) -> Iterable[tuple[Any, str]]:
    """Every op that runs inside a region a kernel-region op hands its kernel, with that op's name. A
    function ``func.call``-ed from such a region (JAX lowers a jitted helper so) runs there too,
    transitively; each function is given once."""
    functions: dict[str, Any] | None = None
    called: set[str] = set()
    stack: list[tuple[Any, str]] = [(op, op.name) for op in kernels]
    while stack:
        op, within = stack.pop()
        for child in _all_ops(op.operation)[1:]:
            yield child, within
            if child.name == "func.call" and "callee" in child.attributes:
                if functions is None:
                    functions = {}
                    for top in module.body.operations:
                        top = top.operation
                        if top.name == "func.func" and "sym_name" in top.attributes:
                            functions[str(top.attributes["sym_name"]).strip('"')] = top
                callee = str(child.attributes["callee"]).lstrip("@").strip('"')
                if callee in functions and callee not in called:
                    called.add(callee)
                    yield functions[callee], within
                    stack.append((functions[callee], within))


# ---------------------------------------------------------------------------------------------- the table


@dataclass
class Collected:
    """What a set of JAX-lowered modules holds, accumulated by ``collect``."""

    attributes: dict[str, set[str]] = field(default_factory=lambda: collections.defaultdict(set))
    enums: dict[str, set[tuple[str, tuple[tuple[str, str], ...]]]] = field(
        default_factory=lambda: collections.defaultdict(set)
    )
    region_ops: set[str] = field(default_factory=set)

    def table(self, version: str) -> dict[str, Any]:
        ops: dict[str, Any] = {}
        for name in sorted(self.attributes):
            entry: dict[str, Any] = {"attributes": sorted(self.attributes[name])}
            combos = sorted(self.enums.get(name, ()))
            if any(pairs for _, pairs in combos):  # an op JAX gives enumerated attributes
                entry["enums"] = [[kind, [list(p) for p in pairs]] for kind, pairs in combos]
            ops[name] = entry
        return {"jax": version, "ops": ops, "region_ops": sorted(self.region_ops)}


def collect(data: bytes, into: Collected) -> None:
    """Add what one lowered module (MLIR bytecode) holds to ``into``."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

    with mlir.make_ir_context():
        module = ir.Module.parse(data)
        ops = _all_ops(module.operation)
        for op in ops:
            attributes = _attributes(op)
            into.attributes[op.name].update(n for n, _ in attributes)
            into.enums[op.name].add((_op_kind(op), _enums(attributes)))
        for op, _ in _kernel_ops(module, [op for op in ops if op.name in KERNEL_REGION_OPS]):
            into.region_ops.add(op.name)


@dataclass(frozen=True)
class Table:
    """The ops, attribute names, enumerated values (per element kind) and kernel-region ops JAX makes."""

    version: str
    attributes: dict[str, frozenset[str]]
    enums: dict[str, frozenset[tuple[str, tuple[tuple[str, str], ...]]]]
    region_ops: frozenset[str]
    #: Per op with enumerated attributes, their names.
    enum_names: dict[str, frozenset[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for op, combos in self.enums.items():
            self.enum_names[op] = frozenset(n for _, pairs in combos for n, _ in pairs)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Table:
        ops = data["ops"]
        return cls(
            version=str(data["jax"]),
            attributes={name: frozenset(entry["attributes"]) for name, entry in ops.items()},
            enums={
                name: frozenset(
                    (str(kind), tuple((str(n), str(v)) for n, v in pairs)) for kind, pairs in entry["enums"]
                )
                for name, entry in ops.items()
                if "enums" in entry
            },
            region_ops=frozenset(data["region_ops"]),
        )


# ---------------------------------------------------------------------------------------------- comparators

Comparator = tuple[str, ...]


def comparator_of(sort: Any) -> Comparator:
    """A sort's comparator as lines, one per op, values named by position: ``a<i>`` the block's
    arguments, ``v<j>`` the ``j``-th value defined in it. Two comparators are the same program exactly
    when their lines are equal."""
    from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

    (region,) = sort.regions
    blocks = list(region.blocks)
    if len(blocks) != 1:
        return (f"<{len(blocks)} blocks>",)
    (block,) = blocks
    state = ir.AsmState(sort)
    names: dict[str, str] = {}
    for i, argument in enumerate(block.arguments):
        names[argument.get_name(state)] = f"a{i}"
    lines = [" ".join(element(str(a.type)) for a in block.arguments)]
    count = 0
    for child in block.operations:
        child = child.operation
        operands = ",".join(names.get(v.get_name(state), "?") for v in child.operands)
        results = []
        for result in child.results:
            names[result.get_name(state)] = f"v{count}"
            results.append(f"v{count}:{element(str(result.type))}")
            count += 1
        attributes = " ".join(f"{n}={v}" for n, v in sorted(_attributes(child)))
        regions = f" regions={len(child.regions)}" if len(child.regions) else ""
        lines.append(f"{','.join(results)} = {child.name}({operands}) {attributes}{regions}".strip())
    return tuple(lines)


_SSA = re.compile(r"%[\w.$-]+")


def comparator_key(sort: Any) -> str:
    """A sort's comparator as MLIR prints it, values renamed in order of appearance (the printer numbers
    them on from the enclosing function's): equal for two comparators exactly when they are the same
    program. One print of the op, ~50 us for JAX's; ``comparator_of`` gives the op-per-line form used to
    word a difference."""
    text = sort.get_asm(enable_debug_info=False, use_local_scope=True)
    start, end = text.find("({"), text.rfind("\n})")
    region = text[start:end] if 0 <= start < end else text
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        return names.setdefault(match.group(0), f"%v{len(names)}")

    return _SSA.sub(rename, region)


class Comparators:
    """The comparators JAX's lowering of ``lax.sort`` makes, per operand element types (all key counts)."""

    def __init__(self) -> None:
        import jax
        from jax._src.interpreters import mlir
        from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

        from sandbox.inside.lowering import Lowerer

        self.jax: Any = jax
        self.ir: Any = ir
        self.mlir: Any = mlir
        self.lower = Lowerer(1)
        self.lock = threading.Lock()
        self.cache: collections.OrderedDict[tuple[str, ...], dict[str, tuple[int, Comparator]]] = (
            collections.OrderedDict()
        )

    def warm(self, signatures: Iterable[tuple[str, ...]] = COMMON_SORTS) -> None:
        for signature in signatures:
            self.of(signature)

    def of(self, elements: tuple[str, ...]) -> dict[str, tuple[int, Comparator]]:
        """Comparator -> its number of keys, for sorts of operands with these element types (cached)."""
        with self.lock:
            found = self.cache.get(elements)
            if found is not None:
                self.cache.move_to_end(elements)
                return found
        found = self._derive(elements)
        with self.lock:
            self.cache[elements] = found
            while len(self.cache) > CACHE_ENTRIES:
                self.cache.popitem(last=False)
        return found

    def _derive(self, elements: tuple[str, ...]) -> dict[str, tuple[int, Comparator]]:
        if not elements or len(elements) > MAX_SORT_OPERANDS or any(e not in _NUMPY for e in elements):
            return {}
        jax = self.jax
        specs = [jax.ShapeDtypeStruct((2,), _NUMPY[e]) for e in elements]

        def every(*operands: Any) -> list[Any]:
            return [
                jax.lax.sort(operands, dimension=0, is_stable=True, num_keys=k)
                for k in range(1, len(operands) + 1)
            ]

        wide = any(e in _WIDE for e in elements)
        with jax.enable_x64(wide):
            data = self.lower(jax.jit(every).trace(*specs).jaxpr)
        found: dict[str, tuple[int, Comparator]] = {}
        ir = self.ir
        with self.mlir.make_ir_context():
            module = ir.Module.parse(data)
            sorts = [op for op in _descendants(module.operation) if op.name == SORT]
            for keys, sort in enumerate(sorts, start=1):
                found.setdefault(comparator_key(sort), (keys, comparator_of(sort)))
        return found


# ---------------------------------------------------------------------------------------------- the check


def _types(elements: Sequence[str]) -> str:
    return ", ".join(elements)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


_COMPARE = re.compile(
    r"stablehlo\.compare\(.*?(?:compare_type=#stablehlo<comparison_type (\w+)> )?"
    r"comparison_direction=#stablehlo<comparison_direction (\w+)>"
)


def _compares(comparator: Comparator) -> list[str]:
    """The comparisons a comparator makes, as ``LT (TOTALORDER)``, in order."""
    found = []
    for line in comparator[1:]:
        match = _COMPARE.search(line)
        if match:
            found.append(f"{match.group(2)} ({match.group(1) or 'no type'})")
    return found


def _comparator_difference(got: Comparator, want: Comparator) -> str:
    """What ``got`` does that ``want`` does not: a comparison JAX's never makes, else the first op where
    they part, worded."""
    if got[:1] != want[:1]:
        return f"it takes ({got[0]}) where JAX's takes ({want[0]})"
    mine, theirs = _compares(got), _compares(want)
    extra = [c for c in dict.fromkeys(mine) if c not in theirs]
    if extra:
        return (
            f"it compares with {extra[0]}, where JAX's compares only with {', '.join(dict.fromkeys(theirs))}"
        )
    for i, (line, wanted_line) in enumerate(zip(got[1:], want[1:], strict=False), start=1):
        if line == wanted_line:
            continue
        for what, pattern in (
            ("compares with", r"comparison_direction (\w+)"),
            ("compares as", r"comparison_type (\w+)"),
        ):
            have, need = re.search(pattern, line), re.search(pattern, wanted_line)
            if have and need and have.group(1) != need.group(1):
                return f"op {i} {what} {have.group(1)} where JAX's {what} {need.group(1)}"
        return f"op {i} is `{_clip(line)}` where JAX's is `{_clip(wanted_line)}`"
    if len(got) > len(want):
        return f"it has {len(got) - len(want)} op(s) more than JAX's, from `{_clip(got[len(want)])}`"
    return f"it stops after {len(got) - 1} op(s) where JAX's has {len(want) - 1}"


class Policy:
    """Checks a parsed module against the table and the comparator contracts (``check``)."""

    def __init__(self, table: Table, comparators: Comparators | None = None) -> None:
        self.table = table
        self.comparators = comparators if comparators is not None else Comparators()

    def check(self, module: Any) -> None:
        """Raise ``PolicyViolation`` for the first part of ``module`` JAX's lowering does not make."""
        table = self.table
        sorts: list[Any] = []
        kernels: list[Any] = []
        for op in _all_ops(module.operation):
            name = op.name
            known = table.attributes.get(name)
            if known is None:
                raise PolicyViolation(
                    f"the program uses the operation {name!r}, which JAX's lowering does not make"
                )
            if name == CUSTOM_CALL:  # held to its own contract, every attribute (``contracts``)
                continue
            attributes = op.attributes
            # Names only: printing every value (a large constant's elements) would cost more than all else.
            names = list(attributes.keys())  # not the map itself: iterating it reads by position
            for attribute in names:
                if attribute not in known:
                    value = _clip(_read(attributes, attribute), 80)
                    raise PolicyViolation(
                        f"{name} has the attribute {attribute} = {value}, which JAX's lowering of {name} "
                        "never gives"
                    )
            combos = table.enums.get(name)
            if combos is not None:
                wanted = table.enum_names[name]
                enums = tuple(sorted((n, _read(attributes, n)) for n in names if n in wanted))
                kind = _op_kind(op)
                if (kind, enums) not in combos:
                    shown = ", ".join(f"{n} = {v}" for n, v in enums) or "none of its enumerated attributes"
                    raise PolicyViolation(
                        f"{name} on {kind} values with {_clip(shown)}: JAX's lowering makes no such {name}"
                    )
            if name == SORT:
                sorts.append(op)
            elif name in KERNEL_REGION_OPS:
                kernels.append(op)
        for op, within in _kernel_ops(module, kernels):
            if op.name not in table.region_ops:
                raise PolicyViolation(
                    f"{within} hands its kernel a region that uses {op.name}, which JAX's lowering never "
                    "puts in such a region"
                )
        signatures = {tuple(element(str(v.type)) for v in sort.operands) for sort in sorts}
        if len(signatures) > MAX_SORT_SIGNATURES:
            raise PolicyViolation(
                f"the program sorts {len(signatures)} kinds of operands; the judge checks at most "
                f"{MAX_SORT_SIGNATURES} per program"
            )
        for sort in sorts:
            self.check_sort(sort)

    def check_sort(self, sort: Any) -> None:
        elements = tuple(element(str(v.type)) for v in sort.operands)
        where = f"{SORT} of ({_types(elements)})"
        if len(elements) > MAX_SORT_OPERANDS:
            raise PolicyViolation(
                f"{where} sorts {len(elements)} operands; the judge checks at most {MAX_SORT_OPERANDS}"
            )
        expected = self.comparators.of(elements)
        if comparator_key(sort) in expected:
            return
        got = comparator_of(sort)
        if not expected:
            raise PolicyViolation(f"{where}: JAX's lowering of lax.sort makes no sort of these element types")
        keys, nearest = min(expected.values(), key=lambda want: _distance(got, want[1]))
        raise PolicyViolation(
            f"{where}: its comparator is not one JAX's lowering of lax.sort makes for these types (nearest: "
            f"the one for {_count(keys, 'key')}): {_comparator_difference(got, nearest)}"
        )


def _distance(got: Comparator, want: Comparator) -> int:
    return sum(a != b for a, b in zip(got, want, strict=False)) + abs(len(got) - len(want))
