"""Check ``requirements``: every requirement the statement states is backed by something that rejects a
solution breaking it, and the author says what.

A requirement is each item (or paragraph) of a ``## Requirements`` section (except one that starts with
"Advice:" or "You may"), and any sentence elsewhere that says *must* or *never*; the ``## Constraints``
section (the validator backs it), an ``## Advice`` or ``## Notes`` section, code blocks, math blocks and the
generated ``{{...}}`` lines are not read. The author marks what backs each one in ``problem.toml``::

    [requirements]
    "Do not add an epsilon" = ["solution:wrong_answer/epsilon_under_sqrt.py"]

A key is a few words of the requirement (matched case-insensitively, spaces folded); each value names
what rejects a solution that breaks it, checked to exist:

- ``solution:<folder>/<file>.py``: a shipped solution that breaks it, in a folder other than
  ``accepted`` (the ``solutions`` check proves it gets that verdict; ``margins``, that hidden cases kill
  it well outside the tolerance);
- ``case:<name>``: a case whose expected output a solution breaking it cannot match;
- ``rule:<kind>``: a ``[[rules]]`` entry of that kind; ``rule:cost``: the problem's ``[cost]`` rule (a
  bound on the compiled program's FLOPs or bytes beside the reference's), when it sets a bound;
  ``check:inputs_unchanged``: that compare check;
  ``gradient``: the ``[gradient]`` the problem checks;
- ``compare``: the comparison with the expected output itself (structure, shapes, dtypes, values);
- ``jit``: ``jax.jit`` itself refuses it (a Python ``if`` on a traced value).

A requirement no key matches is a warning that says how to back it or to write it as advice; a backer
that names nothing is an error; a key no requirement contains is a warning (a stale mark).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from judge.authoring.positions import line_of, toml_lines
from judge.check.context import CheckContext

NAME = "requirements"

#: Sections whose text states no requirement of a solution (lower case, without ``## ``).
UNREAD_SECTIONS = frozenset({"constraints", "advice", "notes", "hints"})
#: Words that make a sentence outside ``## Requirements`` a requirement.
REQUIREMENT_WORDS = re.compile(r"\b(must|never)\b", re.IGNORECASE)
#: An item of ``## Requirements`` that starts so is advice or a permission, not a requirement.
NOT_REQUIRED = re.compile(r"^([-*]\s+)?(advice:|you may\b)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")
SIMPLE_BACKERS = frozenset({"compare", "jit", "gradient"})
#: ``rule:cost`` names the problem's ``[cost]`` table, not a ``[[rules]]`` entry.
COST_RULE = "cost"
HOW_TO_BACK = (
    "mark what rejects a solution that breaks it in problem.toml, [requirements] "
    '"<a few words of it>" = ["solution:wrong_answer/<file>.py"] (a shipped solution that breaks it), or '
    '"case:<name>", "rule:<kind>", "rule:cost" (the [cost] rule), "check:inputs_unchanged", "gradient", '
    '"compare" (the comparison with the expected output) or "jit" (jax.jit refuses it); if nothing can '
    'reject it, write it as advice (under "## Advice", as an item starting "Advice:", or elsewhere without '
    "must / never)"
)


@dataclass(frozen=True)
class Requirement:
    line: int
    text: str


def requirements(source: str) -> list[Requirement]:
    """The requirements a statement states (see the module docstring), each with its first line."""
    found: list[Requirement] = []
    section = ""
    block: list[str] = []
    start = 0
    fenced = False

    def flush() -> None:
        nonlocal block
        text = " ".join(part.strip() for part in block).strip()
        block = []
        if not text or section in UNREAD_SECTIONS:
            return
        if section == "requirements":
            if not NOT_REQUIRED.match(text):
                found.append(Requirement(start, text))
            return
        found.extend(Requirement(start, s) for s in _SENTENCE_END.split(text) if REQUIREMENT_WORDS.search(s))

    for number, line in enumerate(source.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("```") or stripped == "$$":
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if stripped.startswith("#"):
            flush()
            section = stripped.lstrip("#").strip().lower()
            continue
        if not stripped or stripped.startswith("{{") or re.match(r"^[-*] |^\d+\. ", stripped):
            flush()
            if not stripped or stripped.startswith("{{"):
                continue
        if not block:
            start = number
        block.append(stripped)
    flush()
    return found


def _fold(text: str) -> str:
    return " ".join(text.lower().split())


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    spec_file = problem.root / "problem.toml"
    statement = problem.root / "statement.md"
    marks = problem.spec.requirements
    lines = toml_lines(spec_file.read_text()) if spec_file.is_file() else {}
    for key, backers in marks.items():
        for backer in backers:
            missing = _missing(ctx, backer)
            if missing:
                ctx.diag.error(
                    f'[requirements] "{key}" is backed by {backer!r}, but {missing}',
                    file=spec_file,
                    at=f"requirements.{key}",
                    line=line_of(lines, ["requirements", key]),
                )
    stated = requirements(problem.statement_source)
    used: set[str] = set()
    for req in stated:
        keys = [k for k in marks if _fold(k) and _fold(k) in _fold(req.text)]
        used.update(keys)
        if not keys:
            # The whole sentence: a cut one could end before the word that made it a requirement.
            ctx.diag.warning(
                f'a requirement that nothing is marked to back: "{req.text}"; {HOW_TO_BACK}',
                file=statement,
                at=f"line {req.line}",
                line=req.line,
            )
    for key in marks:
        if key not in used:
            ctx.diag.warning(
                f'[requirements] "{key}" matches no requirement of the statement (a section it reads, '
                "see judge check's requirements check): quote a few words of the requirement it backs",
                file=spec_file,
                at=f"requirements.{key}",
                line=line_of(lines, ["requirements", key]),
            )
    if stated:
        ctx.diag.note(
            f"{len(stated)} requirement{'s' * (len(stated) != 1)} stated, each marked with its backing"
        )


def _missing(ctx: CheckContext, backer: str) -> str | None:
    """Why ``backer`` names nothing of this package; None when it does."""
    spec = ctx.loaded.spec
    kind, _, name = backer.partition(":")
    if backer in SIMPLE_BACKERS:
        if backer == "gradient" and spec.gradient is None:
            return "the problem checks no [gradient]"
        return None
    if kind == "solution":
        path = Path(name)
        if len(path.parts) != 2 or path.parts[0] == "accepted":
            return "it must name a file solutions/<folder>/<file>.py in a folder other than accepted"
        if not (ctx.loaded.root / "solutions" / path).is_file():
            return f"solutions/{name} does not exist"
        return None
    if kind == "case":
        return None if any(c.name == name for c in ctx.loaded.cases) else f"no case is named {name!r}"
    if kind == "rule" and name == COST_RULE:
        cost = spec.cost
        if cost is None or (cost.max_flops_ratio is None and cost.max_bytes_ratio is None):
            return "the problem declares no [cost] rule with a bound (max_flops_ratio or max_bytes_ratio)"
        return None
    if kind == "rule":
        kinds = sorted({r.kind for r in spec.rules})
        return (
            None
            if name in kinds
            else f"the problem declares no [[rules]] of kind {name!r} ({kinds or 'none'})"
        )
    if kind == "check":
        return None if name in spec.compare.checks else f"compare.checks does not hold {name!r}"
    return (
        "a backer is solution:<folder>/<file>.py, case:<name>, rule:<kind>, rule:cost, check:<name>, "
        "gradient, compare or jit"
    )
