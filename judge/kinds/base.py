"""The protocol every argument kind implements (``judge.kinds.registry.KINDS`` maps names to them).

A kind is one class, one module: what ``ArgSpec`` fields it uses and how they are checked, how a Run-panel
JSON value becomes the value the function receives, what crosses to the sandbox for it (the wire form: data,
read by the tracer's few wire tags, so a new kind rarely touches the sandbox), its words for the API, the
statement and the Run panel, what the coverage check wants of its hidden values, and what ``judge new``
scaffolds for it. Modules outside ``judge/kinds`` ask the registry for these, or for a kind's facts
(``static``, ``arrays``, ``tree``...), instead of naming kinds. The one place left with a section per kind is
the case-generator template of ``judge new`` (``judge.authoring.scaffold``); a static kind it has no section
for gives its values in turn (``scaffold_cycle``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

import numpy as np

#: The ``ArgSpec`` fields a kind may use beyond the common ones (``name``, ``kind``, ``traced``,
#: ``description``); a kind that does not list one refuses a value other than its default.
OPTIONAL_FIELDS = ("dtype", "ndim", "impl", "choices", "structure")

#: What one argument of one case sends to the sandbox: its wire form (JSON) and its flat input leaves.
Wire = tuple[dict[str, Any], list[np.ndarray[Any, Any]]]


class Arg(Protocol):
    """An argument as a spec declares it (``judge.core.spec.ArgSpec``, which imports the kinds: they see it
    through this protocol)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def traced(self) -> bool: ...
    @property
    def dtype(self) -> str: ...
    @property
    def impl(self) -> str: ...
    @property
    def ndim(self) -> list[int]: ...
    @property
    def choices(self) -> list[str]: ...
    @property
    def structure(self) -> str: ...
    @property
    def key_ranks(self) -> list[int]: ...

    def describe_kind(self) -> str: ...


class Decl(Protocol):
    """An argument as ``judge new --arg NAME:KIND[:OPTION ...]`` declares it
    (``judge.authoring.scaffold_kinds``)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def traced(self) -> bool: ...
    @property
    def dtype(self) -> str: ...
    @property
    def ndim(self) -> tuple[int, ...]: ...

    def spec(self) -> Arg: ...


class Kind(ABC):
    """One kind of argument (``ArgSpec.kind``)."""

    #: The name a spec writes (``kind = "..."``).
    name: ClassVar[str]
    #: The kind in a few words, for the API schema's ``kind`` description.
    api_text: ClassVar[str]
    #: Static kinds default to ``traced = false`` and cannot be traced (``traced_refusal`` says why).
    static: ClassVar[bool] = False
    #: A traced kind that may also be static (``traced = false``).
    may_be_static: ClassVar[bool] = False
    #: Why a static kind cannot be traced, and what to write instead.
    traced_refusal: ClassVar[str] = ""
    #: The optional ``ArgSpec`` fields it uses (``OPTIONAL_FIELDS``).
    fields: ClassVar[frozenset[str]] = frozenset()
    #: Its values are trees of dicts, lists and arrays of the case's float dtype (the Run panel shows the
    #: tree's JSON rule; ``inputs_unchanged`` holds its containers unchanged).
    tree: ClassVar[bool] = False
    #: Its values are traced arrays (one, or a tree of them): the Run panel shows their leaf dtype (``case``
    #: unless ``dtype`` says), and a gradient, a batched rule or a donation may name the argument.
    arrays: ClassVar[bool] = False
    #: A loop rule's ``steps`` may name it (an array's or a tree's size, or the value of an int).
    gives_steps: ClassVar[bool] = False
    #: Traced as a weakly typed Python scalar (no array leaves of its own).
    weak_scalar: ClassVar[bool] = False
    #: Its values name functions of the problem's menu module (``ProblemSpec.functions``).
    needs_menu: ClassVar[bool] = False
    #: The rule ``judge check``'s coverage check holds its traced hidden values to (``array``, ``key``,
    #: ``tree``; None: none). Static values are held to the static rule whatever the kind.
    coverage: ClassVar[str | None] = None
    #: Its values are random sources (``jax.random`` draws from them), which a float64 run cannot mirror.
    random_source: ClassVar[bool] = False
    #: The Python type a value stands for beside a Run-panel box (``float``, ``int``, ``bool``); None for a
    #: string, a function's name or an array (whose leaf dtype says it).
    panel_dtype: ClassVar[str | None] = None
    #: How the page lays a value of it out (``web/src/tree.js`` ``inputLayout``): ``leaf`` (one value of
    #: ``panel_dtype`` or the leaf dtype), ``tuple`` (a JSON array shown as a Python tuple of that type),
    #: ``tree`` (a tree whose leaves are of the dtype) or ``untagged`` (a tree of integers that are not the
    #: dtype of what the function gets, as a key's seed or words).
    panel_layout: ClassVar[str] = "leaf"
    #: The Run panel's words for what a choice names (``strings``, ``functions``).
    choice_noun: ClassVar[str] = "strings"
    #: Where its statement notes go among the kinds' (lower first; 50 and above after the note on errors).
    statement_order: ClassVar[int] = 0

    # ----------------------------------------------------------------------------------- the spec

    def check_traced(self, arg: Arg) -> None:
        """Refuse ``traced`` where the kind cannot have it (``ValueError``)."""
        if self.static and arg.traced:
            raise ValueError(static_refusal(self))
        if not self.static and not self.may_be_static and not arg.traced:
            raise ValueError(
                f"kind {self.name!r} is always traced (arrays are not hashable, so they cannot be static)"
            )

    def check(self, arg: Arg) -> None:  # noqa: B027 (most kinds have no field of their own to check)
        """Checks of its own fields beyond the common ones (``ValueError`` naming what is wrong)."""

    @abstractmethod
    def accepts(self, arg: Arg) -> tuple[str, ...]:
        """The JSON kinds a Run input for ``arg`` may be (``judge.service.schemas.JsonKind``)."""

    @abstractmethod
    def describe(self, arg: Arg) -> str:
        """The argument's kind in words, for the API and the statement."""

    def ranks(self, arg: Arg) -> list[int]:
        """The ranks it may have, for the API (empty: any, or not an array)."""
        return list(arg.ndim)

    # ----------------------------------------------------------------------------- values and wire

    @abstractmethod
    def from_json(self, arg: Arg, value: Any, dtype: str, root: str) -> Any:
        """A Run-panel JSON value as the judge holds it (``ConversionError`` naming the path)."""

    @abstractmethod
    def wire(self, arg: Arg, value: Any) -> Wire:
        """What one case sends the sandbox for it: ``{"number": true}``, ``{"static": value}`` (with
        ``"tuple": true`` for a tuple), ``{"function": name}``, ``{"key": {...}}`` or ``{"tree": node}``,
        and its flat input leaves. The tracer knows these wire tags, not the kinds."""

    def coverage_wanted(self, arg: Arg) -> list[Any]:
        """A static kind's values the hidden cases must all give (``judge check``'s coverage)."""
        return []

    # --------------------------------------------------------------------------------- the words

    def panel_hint(self, ndim: Sequence[int], accepts: Sequence[str]) -> str:
        """What a Run-panel box takes, in words."""
        return ", ".join(accepts)

    def statement_notes(self, arg: Arg, same_kind: Sequence[Arg]) -> list[str]:
        """The statement's rules about ``arg`` (``same_kind``: every argument of its kind, in order)."""
        return []

    # ------------------------------------------------------------------------ the scaffold (judge new)

    def parse_options(self, text: str, name: str, options: list[str]) -> dict[str, Any]:
        """``ArgDecl`` fields from the options of ``--arg NAME:KIND:OPTION...`` (``ValueError`` naming
        what is wrong); by default a kind takes none."""
        if options:
            raise ValueError(f"--arg {text!r}: kind {self.name!r} takes no options")
        return {"traced": not self.static}

    def scaffold_spec(self, decl: Decl) -> dict[str, Any]:
        """The ``ArgSpec`` fields ``judge new`` declares for it (beyond name and kind)."""
        return {"traced": decl.traced}

    def scaffold_toml(self, decl: Decl) -> list[str]:
        """Its ``[[args]]`` lines after ``traced``."""
        return []

    @abstractmethod
    def scaffold_description(self, decl: Decl) -> str:
        """Its ``description`` in the scaffolded spec."""

    @abstractmethod
    def scaffold_constraint(self, decl: Decl) -> str:
        """Its line of the scaffolded statement's Constraints section."""

    def scaffold_promise(self, decl: Decl) -> tuple[str, list[str]] | None:
        """Its ``[[promises]]`` entry (words of its constraint and the bounds a hidden case approaches)."""
        return None

    def scaffold_checks(self, decl: Decl) -> list[str]:
        """Its lines in the scaffolded validator (``judge.constraints`` calls)."""
        return []

    @abstractmethod
    def scaffold_junk(self, decl: Decl) -> list[tuple[str, object]]:
        """Inputs that break its scaffolded constraints: ``(why, value)``."""

    @abstractmethod
    def scaffold_edge(self, decl: Decl, low: bool) -> object:
        """Its value at the limits of the constraints."""

    @abstractmethod
    def scaffold_example(self, decl: Decl, index: int) -> object:
        """Its value in public example ``index``."""

    def scaffold_cycle(self, decl: Decl) -> list[object] | None:
        """For a static kind the generated case generator knows no line for: the values its hidden cases
        take in turn (the first at the bounds); None when the generator has a line of its own for it."""
        return None


def listed_names(names: Sequence[str]) -> str:
    """```a```, ```a` and `b```, ```a`, `b` and `c```: names as the statement lists them."""
    quoted = [f"`{name}`" for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def static_refusal(kind: Kind) -> str:
    """Why an argument of static ``kind`` cannot be traced."""
    return (
        f"kind {kind.name!r} is static (passed with static_argnames) and cannot be traced; "
        f"{kind.traced_refusal}"
    )
