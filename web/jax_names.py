"""Write the editor's JAX help from the installed jax: web/src/jax-names.json and web/src/jax-docs.json.

    .venv/bin/python web/jax_names.py          # from the jax the lock files pin (requirements/runtime.lock)

- ``jax-names.json``: per module (``jax``, ``jax.numpy``, ``jax.lax``, ``jax.random``, ``jax.tree``,
  ``jax.nn``) its public names, each with its kind and its cleaned signature cut to one line; bundled into
  the editor's chunk by web/build.mjs (the completion list needs it at once).
- ``jax-docs.json``: per dotted name (``jax.numpy.minimum``) the whole cleaned signature, a summary (the
  docstring's first paragraph as plain text, code in backticks) and one line per parameter its docstring
  describes; web/build.mjs emits it as an asset of its own that the editor fetches on the first completion
  or hover (it is several times the editor's size).

Both record the jax version they were made from; tests/test_web_js.py fails when it differs from the
installed jax (regenerate then, with the lock). Nothing is downloaded: the text is the installed jax's own
docstrings, read offline.

Cleaned signatures are written for reading: no annotations (``'ArrayLike'`` and the like), no parameters
that only accept None (NumPy's ``out=None`` and ``where=None``, which jax.numpy refuses), no private
parameters (``_split_transpose``), defaults that are not plain values shown as ``...``, and a jnp ufunc's
``*args`` replaced by its real inputs (``minimum(x, y, /)``).
"""

from __future__ import annotations

import enum
import inspect
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
NAMES_OUT = HERE / "src" / "jax-names.json"
DOCS_OUT = HERE / "src" / "jax-docs.json"
#: A signature in the completion list longer than this is cut (with an ellipsis): the list shows one line.
SIGNATURE_MAX = 100
#: A summary longer than this is cut at a sentence end (or a word, with an ellipsis).
SUMMARY_MAX = 600
#: One parameter's line: its description's first sentence, cut at this length.
PARAM_MAX = 200
#: A parameter's first sentence shorter than this goes on with the next one.
PARAM_SHORT = 60
#: A default whose text is longer than this is shown as ``...``.
DEFAULT_MAX = 30
#: The modules the editor helps with, by their canonical dotted name.
MODULES = ("jax", "jax.numpy", "jax.lax", "jax.random", "jax.tree", "jax.nn")


# ------------------------------------------------------------------------------------- docstring text

_ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:`([^`]+)`")
_LINK = re.compile(r"`([^`<]+?)\s*(?:<[^>]*>)?`__?")
_LITERAL = re.compile(r"``(.+?)``")
_STRONG = re.compile(r"\*\*(\S(?:.*?\S)?)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*`])\*(?=[^\s*])([^*`]*?[^\s*])\*(?![\w*])")
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!e\.g\.)(?<!i\.e\.)\s+(?=[A-Z(`])")


def _role(match: re.Match[str]) -> str:
    """``:func:`~jax.numpy.maximum``` -> ```maximum```; ``:ref:`text <target>``` -> ``text``; math as code."""
    inner = match.group(1).strip()
    label = re.match(r"(.+?)\s*<[^>]*>$", inner)
    if label:
        return label.group(1)
    if inner.startswith("~"):
        inner = inner[1:].rsplit(".", 1)[-1]
    elif inner.startswith("!"):
        inner = inner[1:]
    return f"`{inner}`"


def rst_text(text: str) -> str:
    """Docstring reStructuredText as plain text with code in single backticks: roles, ``literals``,
    links and emphasis markers resolved, so no raw ``:func:`...``` is left."""
    text = _LITERAL.sub(lambda m: f"\0{m.group(1)}\0", text)  # held apart from the single-backtick rules
    text = _ROLE.sub(_role, text)
    text = re.sub(r"(?<!`)`([^`]+)`_{1,2}", lambda m: re.sub(r"\s*<[^>]*>$", "", m.group(1)), text)
    text = _STRONG.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\1", text)
    text = text.replace("\0", "`")
    text = re.sub(r"\\([*_`\\])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def _cut(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters: whole sentences when one fits, else words and an ellipsis."""
    if len(text) <= limit:
        return text
    ends = [m.start() for m in _SENTENCE_END.finditer(text) if m.start() <= limit]
    if ends:
        return text[: ends[-1]]
    return text[: limit - 1].rsplit(" ", 1)[0] + "…"


def summary(doc: str) -> str:
    """The docstring's first paragraph as plain text (``::`` that opens a code block read as ``:``)."""
    lines: list[str] = []
    for line in doc.strip().splitlines():
        if not line.strip():
            if lines:
                break
            continue
        if line.lstrip().startswith(".. "):
            break
        lines.append(line.strip())
    text = " ".join(lines)
    if text.endswith("::"):
        text = text[:-1]
    return _cut(rst_text(text), SUMMARY_MAX)


_GOOGLE_HEADER = re.compile(r"^(\s*)(?:Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments):\s*$")
_NUMPY_HEADER = re.compile(r"^(\s*)Parameters\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}([A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:(?:\s+(.*))?$")
_NUMPY_ENTRY = re.compile(r"^\*{0,2}([A-Za-z_]\w*)\s*(?::\s*(.*))?$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _one_line(parts: list[str]) -> str:
    """A description's first sentence; the next ones too while it is shorter than PARAM_SHORT (so ``int,
    default=None.`` goes on to say what the parameter is)."""
    sentences = _SENTENCE_END.split(rst_text(" ".join(parts)))
    text = sentences[0]
    for sentence in sentences[1:]:
        if len(text) >= PARAM_SHORT:
            break
        text = f"{text} {sentence}"
    return _cut(text, PARAM_MAX)


def parameters(doc: str) -> list[tuple[str, str]]:
    """``(name, one line)`` for each parameter of the docstring's Args/Parameters section (Google or NumPy
    style); empty when it has none. ``*args`` is listed as ``args``."""
    lines = doc.expandtabs().splitlines()
    for i, line in enumerate(lines):
        google = _GOOGLE_HEADER.match(line)
        if google:
            return _entries(lines[i + 1 :], _indent(line), _GOOGLE_ENTRY, numpy=False)
        numpy = _NUMPY_HEADER.match(line)
        if numpy and i + 1 < len(lines) and re.fullmatch(r"\s*-{3,}\s*", lines[i + 1]):
            return _entries(lines[i + 2 :], _indent(line) - 1, _NUMPY_ENTRY, numpy=True)
    return []


def _entries(lines: list[str], header: int, entry: re.Pattern[str], *, numpy: bool) -> list[tuple[str, str]]:
    """The entries of one section: lines indented past ``header`` (NumPy style: at it), each entry at the
    section's first indentation, its description on that line (Google) and the lines indented below it."""
    found: list[tuple[str, list[str]]] = []
    level: int | None = None
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        depth = _indent(line)
        if depth <= header:
            break
        if (
            numpy
            and depth == header + 1
            and index + 1 < len(lines)
            and re.fullmatch(r"\s*-{3,}\s*", lines[index + 1])
        ):
            break  # the next NumPy section's header
        if level is None:
            level = depth
        if depth == level:
            match = entry.match(line.strip())
            if not match:
                break
            found.append((match.group(1), [] if numpy else [match.group(2) or ""]))
        elif depth > level and found:
            found[-1][1].append(line.strip())
    return [(name, _one_line(parts)) for name, parts in found]


# ------------------------------------------------------------------------------------------ signatures


def _default(value: Any) -> str:
    """A parameter default as the reader should see it: plain values as written, names of types and enum
    members by name, anything else ``...``."""
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, type):
        return value.__name__
    text = repr(value)
    if "<" in text or " at 0x" in text or len(text) > DEFAULT_MAX:
        return "..."
    if not isinstance(value, (int, float, str, bool, tuple, frozenset, type(None))):
        return "..."
    return text


def _refused(param: inspect.Parameter) -> bool:
    """A parameter that only accepts None (NumPy's ``out``, a ufunc's ``where``): jax.numpy refuses it."""
    return param.annotation in (None, "None", type(None)) and param.default is None


def clean_signature(value: Any, documented: list[str]) -> str | None:
    """``value``'s signature for reading (see the module docstring), or None when it has none. A jnp
    ufunc's inputs are named as its docstring names them (``documented``), else ``x1``, ``x2``, ...; a
    ``*args`` or ``**kwargs`` that a docstring listing the parameters leaves out is not shown (jnp.array's
    ``*args`` only refuses extra positional arguments; jnp.pad's ``**kwargs`` stays, its docstring lists
    the keywords it takes)."""
    nin = getattr(value, "nin", None)
    if isinstance(nin, int) and type(value).__name__ == "ufunc":
        names = documented[:nin] if len(documented) >= nin else [f"x{i + 1}" for i in range(nin)]
        return "(" + ", ".join([*names, "/"]) + ")"
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return None
    named = {
        param.name
        for param in signature.parameters.values()
        if param.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    }
    parts: list[str] = []
    slash = star = False
    for param in signature.parameters.values():
        if param.name.startswith("_") or _refused(param):
            continue
        if documented and param.name not in documented:
            if param.kind is inspect.Parameter.VAR_POSITIONAL:
                continue
            if param.kind is inspect.Parameter.VAR_KEYWORD and set(documented) <= named:
                continue
        kind = param.kind
        if kind is inspect.Parameter.POSITIONAL_ONLY:
            slash = True
        elif slash:
            parts.append("/")
            slash = False
        if kind is inspect.Parameter.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if kind is inspect.Parameter.VAR_POSITIONAL:
            parts.append(f"*{param.name}")
            star = True
        elif kind is inspect.Parameter.VAR_KEYWORD:
            parts.append(f"**{param.name}")
        elif param.default is inspect.Parameter.empty:
            parts.append(param.name)
        else:
            parts.append(f"{param.name}={_default(param.default)}")
    if slash:
        parts.append("/")
    return "(" + ", ".join(parts) + ")"


def one_line(signature: str | None) -> str:
    text = signature or ""
    return text if len(text) <= SIGNATURE_MAX else text[: SIGNATURE_MAX - 1] + "…"


# ---------------------------------------------------------------------------------------------- index


@dataclass(frozen=True)
class Entry:
    """One public name of a module: its kind and help."""

    label: str
    kind: str  # "function", "class", "module", "constant"
    signature: str | None
    summary: str
    params: list[tuple[str, str]]

    def name(self) -> dict[str, str]:
        return {"label": self.label, "type": self.kind, "detail": one_line(self.signature)}

    def doc(self) -> dict[str, Any] | None:
        if not (self.signature or self.summary or self.params):
            return None
        return {"sig": self.signature or "", "doc": self.summary, "params": [list(p) for p in self.params]}


def entry(label: str, value: Any) -> Entry:
    if inspect.ismodule(value):
        kind = "module"
    elif inspect.isclass(value):
        kind = "class"
    elif callable(value):
        kind = "function"
    else:
        kind = "constant"
    doc = (inspect.getdoc(value) or "") if kind != "constant" else ""
    documented = parameters(doc)
    signature = (
        clean_signature(value, [name for name, _ in documented]) if kind in ("function", "class") else None
    )
    if signature is not None and "**" not in signature:
        shown = set(re.findall(r"[A-Za-z_]\w*", signature))
        documented = [(name, text) for name, text in documented if name in shown]
    return Entry(label, kind, signature, summary(doc), documented)


def entries(module: ModuleType) -> list[Entry]:
    return [entry(name, getattr(module, name)) for name in sorted(dir(module)) if not name.startswith("_")]


def build() -> tuple[dict[str, Any], dict[str, Any]]:
    """The two files' contents: (names, docs)."""
    import importlib

    import jax

    names: dict[str, Any] = {}
    docs: dict[str, Any] = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        found = entries(module)
        names[module_name] = [item.name() for item in found]
        for item in found:
            doc = item.doc()
            if doc is not None:
                docs[f"{module_name}.{item.label}"] = doc
        own = summary(inspect.getdoc(module) or "")
        if own:
            docs[module_name] = {"sig": "", "doc": own, "params": []}
    return {"jax_version": jax.__version__, "modules": names}, {"jax_version": jax.__version__, "docs": docs}


def main() -> None:
    names, docs = build()
    NAMES_OUT.write_text(json.dumps(names, separators=(",", ":"), ensure_ascii=False) + "\n")
    DOCS_OUT.write_text(json.dumps(docs, separators=(",", ":"), ensure_ascii=False) + "\n")
    for out in (NAMES_OUT, DOCS_OUT):
        print(f"wrote {out} ({out.stat().st_size} bytes, jax {names['jax_version']})", file=sys.stderr)


if __name__ == "__main__":
    main()
