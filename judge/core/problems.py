"""Load problem packages from disk, validating everything eagerly.

A package is ``problems/<slug>/`` with ``problem.toml`` (``judge.core.spec.ProblemSpec``), ``statement.md``,
``starter.py``, its case files and ``solutions/<verdict>/*.py``; its reference solution is
``reference/<module>.py`` beside the ``problems/`` folder. Any defect raises ``ProblemError`` naming the
file and the field, at load time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import sys
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from judge.authoring.positions import json_lines, line_of, toml_lines
from judge.constraints import split_violation
from judge.core.errors import InputError, ProblemError, ProblemNotFound
from judge.core.menu import menu_functions
from judge.core.pytree_json import ConversionError
from judge.core.spec import ArgSpec, CaseDef, CaseFile, ProblemSpec, explain
from judge.kinds.registry import kind_of

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
SPEC_FILE = "problem.toml"
VALIDATOR_FILE = "validator.py"

#: ``validate(args, dtype) -> violations`` of ``problems/<slug>/validator.py`` (see judge.constraints).
Validator = Callable[[dict[str, Any], str], list[str]]


def default_problems_dir() -> Path:
    """``$JUDGE_PROBLEMS_DIR``; else the judge's own ``problems/`` in a checkout; else, for a judge installed
    as a package (a problems repository's CI), ``problems/`` in the current folder."""
    configured = os.environ.get("JUDGE_PROBLEMS_DIR")
    if configured:
        return Path(configured)
    own = REPO_ROOT / "problems"
    return own if own.is_dir() else Path.cwd() / "problems"


@dataclass(frozen=True)
class Case:
    """One case: its definition and its inputs already converted to host trees (numpy leaves)."""

    definition: CaseDef
    #: One value per argument, in signature order: a tree of numpy arrays, one numpy array (``array``), a
    #: Python float (``number``), int (``int``), tuple of ints (``int_tuple``), bool (``bool``) or str
    #: (``str``), a ``sandbox.shared.tree.KeyArray``
    #: (``key``: the typed key's implementation and uint32 data).
    inputs: tuple[Any, ...]

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def visibility(self) -> str:
        return self.definition.visibility

    @property
    def dtype(self) -> str:
        return self.definition.dtype

    @property
    def hidden(self) -> bool:
        return self.definition.visibility == "hidden"

    @cached_property
    def args_json(self) -> str:
        """The definition's arguments as canonical JSON, made once per case (a part of cache keys)."""
        return json.dumps(self.definition.args, sort_keys=True, separators=(",", ":"))


def convert_args(spec: ProblemSpec, args: dict[str, Any], dtype: str, *, where: str = "") -> tuple[Any, ...]:
    """Run-panel JSON for every argument -> inputs in signature order. Raises InputError naming the path."""
    if not isinstance(args, dict):
        raise InputError(where or "args", "expected an object with one entry per argument")
    expected = [a.name for a in spec.args]
    missing = [n for n in expected if n not in args]
    extra = sorted(set(args) - set(expected))
    if missing:
        raise InputError(
            f"{where}{missing[0]}", f"missing argument (the function takes {', '.join(expected)})"
        )
    if extra:
        raise InputError(f"{where}{extra[0]}", f"unknown argument (the function takes {', '.join(expected)})")
    return tuple(_convert_arg(arg, args[arg.name], dtype, where) for arg in spec.args)


def _convert_arg(arg: ArgSpec, value: Any, dtype: str, where: str) -> Any:
    try:
        return kind_of(arg.kind).from_json(arg, value, dtype, f"{where}{arg.name}")
    except ConversionError as exc:
        raise InputError(exc.path, exc.reason) from None


def import_trusted_file(path: Path, prefix: str) -> ModuleType:
    """Import a trusted repository file (a validator, a case generator) as a fresh module, writing no
    ``__pycache__`` into the problem folder. Raises whatever the module raises while it runs, and
    ``FileNotFoundError`` when it is missing."""
    name = f"_judge_{prefix}_{hashlib.sha1(str(path).encode()).hexdigest()[:12]}"
    if not path.is_file():
        raise FileNotFoundError(str(path))
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        sys.dont_write_bytecode = saved
    return module


@dataclass(frozen=True)
class Problem:
    spec: ProblemSpec
    root: Path
    statement_source: str
    starter: str
    cases: tuple[Case, ...]
    #: The problem's ``validate`` (its Constraints section as code); None when it has no validator.py.
    validator: Validator | None = None

    @property
    def slug(self) -> str:
        return self.spec.slug

    @property
    def public_cases(self) -> tuple[Case, ...]:
        return tuple(c for c in self.cases if not c.hidden)

    @property
    def hidden_cases(self) -> tuple[Case, ...]:
        return tuple(c for c in self.cases if c.hidden)

    @property
    def reference_path(self) -> Path:
        return self.root.parent.parent / "reference" / f"{self.spec.reference}.py"

    @cached_property
    def reference_source(self) -> str:
        return self.reference_path.read_text()

    def solutions(self) -> Iterator[tuple[str, Path]]:
        """(expected verdict folder, file) for every solution shipped with the problem."""
        base = self.root / "solutions"
        if not base.is_dir():
            return
        for folder in sorted(p for p in base.iterdir() if p.is_dir()):
            for file in sorted(folder.glob("*.py")):
                yield folder.name, file

    @cached_property
    def menu_source(self) -> str | None:
        """The source of the package's menu module (``functions``), sent into the sandbox; None without."""
        if self.spec.functions is None:
            return None
        return (self.root / self.spec.functions).read_text()

    def menu(self) -> dict[str, Callable[..., Any]]:
        """The menu functions every function argument may name, imported on the trusted side (for the
        reference). Raises ``ProblemError`` when the module is missing, fails or lacks a function."""
        if self.spec.functions is None:
            return {}
        file = self.root / self.spec.functions
        try:
            module = import_trusted_file(file, "functions")
        except FileNotFoundError:
            raise ProblemError(str(file), "missing (named by `functions` in problem.toml)") from None
        except Exception as exc:
            raise ProblemError(str(file), f"importing it failed: {type(exc).__name__}: {exc}") from None
        names = sorted({name for a in self.spec.args for name in a.choices})
        return menu_functions(module, names, str(file))

    def custom_case(self, args: dict[str, Any], name: str = "custom", dtype: str | None = None) -> Case:
        """A Run-panel input typed by a learner: converted with ``dtype`` (one the problem allows; default
        the Run-panel dtype), public, and held to the problem's constraints (its validator), like every case.

        Raises ``InputError`` naming the argument and JSON path: a malformed input, or the first
        constraint it breaks (``grads["w"][0]: 1e+20 is larger in magnitude than 1e+15``); or naming
        ``dtype`` when the problem does not allow it. Raises ``ProblemError`` when the validator itself
        fails (the judge's fault, not the input's).
        """
        allowed = self.spec.dtypes.allowed
        if dtype is not None and dtype not in allowed:
            raise InputError(
                "dtype", f"{dtype} is not a dtype of this problem (allowed: {', '.join(allowed)})"
            )
        definition = CaseDef.model_construct(
            name=name,
            visibility="public",
            dtype=dtype or self.spec.dtypes.run_panel,
            args=args,
            explanation=None,
        )
        case = Case(definition, convert_args(self.spec, args, definition.dtype))
        for violation in self.violations(case):
            raise InputError(*split_violation(violation))
        return case

    def violations(self, case: Case) -> list[str]:
        """The constraints ``case`` breaks (empty without a validator). Raises ``ProblemError`` when the
        validator fails or returns something other than a list of strings."""
        if self.validator is None:
            return []
        named = {arg.name: value for arg, value in zip(self.spec.args, case.inputs, strict=True)}
        where = str(self.root / VALIDATOR_FILE)
        try:
            found = self.validator(named, case.dtype)
        except Exception as exc:
            raise ProblemError(where, f"validate() failed: {type(exc).__name__}: {exc}") from exc
        if not isinstance(found, list) or not all(isinstance(v, str) for v in found):
            raise ProblemError(where, "validate() must return a list of strings")
        return found


def _where(file: Path, loc: tuple[Any, ...]) -> str:
    field = ".".join(str(p) for p in loc)
    return f"{file}: {field}" if field else str(file)


def _validation_message(
    file: Path, exc: ValidationError, model: type[BaseModel], lines: Mapping[tuple[str | int, ...], int]
) -> ProblemError:
    """The first error of a validation, with its field, its line and how many more there are."""
    first = exc.errors()[0]
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    loc = tuple(first["loc"])
    return ProblemError(
        _where(file, loc), f"{explain(first, model)}{more}", file=str(file), line=line_of(lines, loc)
    )


def toml_decode_line(exc: tomllib.TOMLDecodeError) -> int | None:
    """The 1-based line a TOML syntax error names."""
    match = re.search(r"at line (\d+)", str(exc))
    return int(match.group(1)) if match else None


def load_spec(root: Path) -> ProblemSpec:
    file = root / SPEC_FILE
    try:
        text = file.read_text()
        raw = tomllib.loads(text)
    except FileNotFoundError:
        raise ProblemError(str(file), "missing", file=str(file)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ProblemError(
            str(file), f"not valid TOML: {exc}", file=str(file), line=toml_decode_line(exc)
        ) from None
    lines = toml_lines(text)
    try:
        spec = ProblemSpec.model_validate(raw)
    except ValidationError as exc:
        raise _validation_message(file, exc, ProblemSpec, lines) from None
    if spec.slug != root.name:
        raise ProblemError(
            _where(file, ("slug",)),
            f"{spec.slug!r} differs from the folder name {root.name!r}",
            file=str(file),
            line=line_of(lines, ("slug",)),
        )
    return spec


def _case_error(
    file: Path,
    text: str,
    index: int,
    message: str,
    *field: str | int,
    at: str = "",
) -> ProblemError:
    """A defect of case ``index`` of a case file (``text``), at the line of ``field`` in it. The file is
    mapped to lines only here: mapping every value costs far more than loading it (seconds for a catalog)."""
    where = _where(file, ("cases", index, *([at] if at else [])))
    line = line_of(json_lines(text), ("cases", index, *field))
    return ProblemError(where, message, file=str(file), line=line)


def load_cases(root: Path, spec: ProblemSpec) -> tuple[Case, ...]:
    cases: list[Case] = []
    seen: set[str] = set()
    for rel in spec.case_files:
        file = root / rel
        try:
            text = file.read_text()
            data = json.loads(text)
        except FileNotFoundError:
            spec_file = root / SPEC_FILE
            raise ProblemError(
                _where(spec_file, ("case_files",)), f"lists {rel}, which does not exist", file=str(spec_file)
            ) from None
        except json.JSONDecodeError as exc:
            raise ProblemError(str(file), f"not valid JSON: {exc}", file=str(file), line=exc.lineno) from None
        try:
            parsed = CaseFile.model_validate(data)
        except ValidationError as exc:
            raise _validation_message(file, exc, CaseFile, json_lines(text)) from None
        for i, definition in enumerate(parsed.cases):
            if definition.name in seen:
                raise _case_error(file, text, i, f"case name {definition.name!r} repeats", "name")
            seen.add(definition.name)
            if definition.dtype not in spec.dtypes.allowed:
                raise _case_error(
                    file, text, i, f"dtype {definition.dtype} is not in dtypes.allowed", "dtype"
                )
            try:
                inputs = convert_args(spec, definition.args, definition.dtype)
            except InputError as exc:
                argument = re.match(r"[A-Za-z_][A-Za-z0-9_]*", exc.path)
                field = ["args", *([argument.group(0)] if argument else [])]
                raise _case_error(file, text, i, str(exc), *field, at="args") from None
            cases.append(Case(definition, inputs))
    if not cases:
        raise ProblemError(str(root), "the problem has no cases")
    return tuple(cases)


def load_validator(root: Path) -> Validator | None:
    """The ``validate`` function of ``root/validator.py``; None when the file is absent (``judge check``
    requires one). Raises ProblemError when it does not import or defines no ``validate``."""
    file = root / VALIDATOR_FILE
    try:
        module = import_trusted_file(file, "validator")
    except FileNotFoundError:
        return None
    except Exception as exc:
        raise ProblemError(str(file), f"importing it failed: {type(exc).__name__}: {exc}") from None
    validate = getattr(module, "validate", None)
    if not callable(validate):
        raise ProblemError(str(file), "does not define validate(args, dtype) -> list[str]")
    return validate  # type: ignore[no-any-return]


def load_problem(root: Path) -> Problem:
    root = root.resolve()
    spec = load_spec(root)
    texts = {}
    for name in ("statement.md", "starter.py"):
        try:
            texts[name] = (root / name).read_text()
        except FileNotFoundError:
            raise ProblemError(str(root / name), "missing") from None
    problem = Problem(
        spec, root, texts["statement.md"], texts["starter.py"], load_cases(root, spec), load_validator(root)
    )
    if spec.functions is not None and not (root / spec.functions).is_file():
        raise ProblemError(f"{root / SPEC_FILE}: functions", f"no menu module at {root / spec.functions}")
    if not problem.reference_path.is_file():
        raise ProblemError(
            f"{root / SPEC_FILE}: reference", f"no reference module at {problem.reference_path}"
        )
    return problem


class ProblemSet:
    """Every problem under one folder, loaded once."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = (directory or default_problems_dir()).resolve()
        self._problems: dict[str, Problem] = {}
        for child in sorted(self.directory.iterdir()) if self.directory.is_dir() else ():
            if (child / SPEC_FILE).is_file():
                problem = load_problem(child)
                self._problems[problem.slug] = problem

    def __iter__(self) -> Iterator[Problem]:
        return iter(self._problems.values())

    def __len__(self) -> int:
        return len(self._problems)

    def get(self, slug: str) -> Problem:
        try:
            return self._problems[slug]
        except KeyError:
            known = ", ".join(self._problems) or "none"
            raise ProblemNotFound(slug, f"no such problem (known: {known})") from None

    #: Changes whenever the problems served change (never, for a folder loaded once; see
    #: ``judge.dispatch.live_problems.LiveProblems``).
    generation = 0

    def versions(self, slug: str) -> tuple[Problem, ...]:
        """Every version of ``slug`` this set can grade, the one served first (here: one, or none)."""
        problem = self._problems.get(slug)
        return () if problem is None else (problem,)

    def scope(self, slug: str) -> frozenset[str] | None:
        """The tenants ``slug`` is visible to; None: everyone (every problem of a folder)."""
        return None


class Problems(Protocol):
    """What graders and the catalog need of a set of problems: ``ProblemSet`` (a folder, loaded once) or
    ``judge.dispatch.live_problems.LiveProblems`` (that folder plus the versions operators push at
    runtime)."""

    directory: Path
    generation: int

    def __iter__(self) -> Iterator[Problem]: ...

    def __len__(self) -> int: ...

    def get(self, slug: str) -> Problem: ...

    def versions(self, slug: str) -> tuple[Problem, ...]: ...

    def scope(self, slug: str) -> frozenset[str] | None: ...
