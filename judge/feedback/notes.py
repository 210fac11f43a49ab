"""A shipped wrong solution's teaching note, read from its module docstring.

Every file under ``problems/*/solutions/wrong_answer/`` starts with::

    \"\"\"Mistake: <short name a learner recognises>

    <1-4 sentences: what is wrong and how to fix it.>
    \"\"\"

``parse_note`` reads it without running the file (``ast``); it raises ``NoteError`` saying what is missing,
which ``judge check`` reports against the file.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

PREFIX = "Mistake:"
#: Longest short name and note, in characters: a name is a label, a note a few sentences.
MAX_NAME = 80
MAX_NOTE = 600
MAX_SENTENCES = 4


class NoteError(ValueError):
    """The file has no teaching note of the required form (the message says what is wrong)."""


@dataclass(frozen=True)
class MistakeNote:
    """A known mistake: its short name and the author's note on what is wrong and how to fix it."""

    name: str
    note: str


def parse_note(source: str) -> MistakeNote:
    """The teaching note of a wrong solution's ``source``; raises ``NoteError`` naming what is missing."""
    try:
        module = ast.parse(source.removeprefix("\ufeff"))
    except SyntaxError as exc:
        raise NoteError(f"the file does not parse (line {exc.lineno}): {exc.msg}") from None
    first = module.body[0] if module.body else None
    doc = ast.get_docstring(module, clean=True) if first is not None else None
    if doc is None:
        raise NoteError(
            f'the file must start with a docstring """{PREFIX} <short name>\\n\\n<teaching note>"""'
        )
    head, _, rest = doc.partition("\n")
    if not head.startswith(PREFIX):
        raise NoteError(f"the docstring's first line must be `{PREFIX} <short name>`, not {head[:60]!r}")
    name = head.removeprefix(PREFIX).strip()
    if not name:
        raise NoteError(f"the docstring's first line names no mistake after `{PREFIX}`")
    if len(name) > MAX_NAME:
        raise NoteError(f"the mistake's name has {len(name)} characters, more than {MAX_NAME}")
    if rest and not rest.startswith("\n"):
        raise NoteError("a blank line must separate the mistake's name from its note")
    note = " ".join(rest.split())
    if not note:
        raise NoteError("the docstring has no teaching note after the name (what is wrong, how to fix it)")
    if len(note) > MAX_NOTE:
        raise NoteError(f"the teaching note has {len(note)} characters, more than {MAX_NOTE}")
    sentences = len(re.findall(r"[.!?](?=\s+[A-Z]|$)", note))
    if sentences > MAX_SENTENCES:
        raise NoteError(f"the teaching note has {sentences} sentences, more than {MAX_SENTENCES}")
    return MistakeNote(name=name, note=note)
