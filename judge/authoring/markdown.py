"""Statement Markdown -> HTML with the math already rendered as MathML (no script, no network needed).

CommonMark plus tables, raw HTML disabled (so a statement cannot inject markup). ``$...$`` and
``$$...$$`` become ``<math>`` elements (``latex2mathml``) that carry their TeX source as an
``application/x-tex`` annotation, so a page may still re-render them with KaTeX. TeX that cannot be
converted is shown as escaped code rather than dropped.

Inside text commands (``\text{max\\_norm}``, ``\texttt{add\\_rows}``) TeX's text-mode escapes (``\\_``,
``\\%``, ``\\&``, ``\\#``, ``\\$``, ``\\{``, ``\\}``, ``\textbackslash``) become their characters before the
conversion, which would otherwise keep the backslash; ``raw_tex`` finds any TeX the conversion still
leaves raw (``judge check``'s ``statement`` check reports it).
"""

from __future__ import annotations

import html
import re
from functools import cache
from typing import Any

from markdown_it import MarkdownIt

_MATH_OPEN = re.compile(r"^<math\b[^>]*>")
# A delimiter latex2mathml leaves as a bare <mo> (\lVert, \rVert, \lvert, \rvert): MathML Core's operator
# dictionary makes it a stretchy fence, so browsers grow it to the height of the whole row (a norm beside a
# square root turns into a tall bar). In TeX only \left/\right/\big delimiters grow.
_BARE_FENCE = re.compile(
    r"<mo>((?:&#x0*(?:28|29|5B|5D|7B|7D|7C|2016|2223|2225|27E8|27E9|2308|2309|230A|230B);)"
    r"|[()\[\]{}|\u2016\u2223\u2225\u27e8\u27e9\u2308\u2309\u230a\u230b])</mo>",
    re.IGNORECASE,
)


#: Commands whose argument is text, where TeX's text-mode escapes apply.
_TEXT_COMMAND = re.compile(r"\\(?:text|texttt|textrm|textit|textbf|textsf|textup|mbox)\s*\{")
#: Text-mode escapes -> what they stand for; braces and the ampersand go through private-use characters
#: that ``_PLACED`` turns back after the conversion, so they cannot close a group or start an entity.
_TEXT_ESCAPES = {
    "\\textbackslash{}": "\ue002",
    "\\textbackslash": "\ue002",
    "\\_": "_",
    "\\%": "%",
    "\\#": "#",
    "\\$": "$",
    "\\&": "\ue003",
    "\\{": "\ue000",
    "\\}": "\ue001",
}
_PLACED = {"\ue000": "{", "\ue001": "}", "\ue002": "&#x5C;", "\ue003": "&amp;"}
#: TeX a conversion left in its output: a control word or an escaped character.
_LEFT_RAW = re.compile(r"\\(?:[A-Za-z]+|[^A-Za-z\s])")
_ANNOTATION = re.compile(r"<annotation\b.*?</annotation>", re.DOTALL)


def unescape_text_commands(tex: str) -> str:
    """``\\text{max\\_norm}`` -> ``\\text{max_norm}``: the text-mode escapes inside every text command's
    argument (balanced braces) replaced by what they stand for; math outside text commands is unchanged."""
    out: list[str] = []
    i = 0
    while True:
        match = _TEXT_COMMAND.search(tex, i)
        if match is None:
            out.append(tex[i:])
            return "".join(out)
        out.append(tex[i : match.end()])
        j, depth, body = match.end(), 1, []
        while j < len(tex) and depth:
            escape = next((e for e in _TEXT_ESCAPES if tex.startswith(e, j)), None)
            if escape is not None:
                body.append(_TEXT_ESCAPES[escape])
                j += len(escape)
                continue
            char = tex[j]
            depth += (char == "{") - (char == "}")
            if depth:
                body.append(char)
            j += 1
        out.append("".join(body) + ("}" if depth == 0 else ""))
        i = j


def raw_tex(mathml: str) -> list[str]:
    """The TeX a rendered formula still shows raw: control words or escapes left in its MathML (outside the
    TeX-source annotation), or the whole source when it did not convert."""
    if mathml.startswith('<code class="math-source">'):
        return [html.unescape(mathml.removeprefix('<code class="math-source">').removesuffix("</code>"))]
    # A backslash the source meant (\\textbackslash) is the entity &#x5C;, never a literal one.
    return _LEFT_RAW.findall(_ANNOTATION.sub("", mathml))


def tex_to_mathml(tex: str, *, display: bool) -> str:
    """One formula as a ``<math>`` element (``display="block"`` for display math)."""
    from latex2mathml.converter import convert

    source = tex.strip()
    try:
        mathml = convert(unescape_text_commands(source), display="block" if display else "inline")
        for placed, shown in _PLACED.items():
            mathml = mathml.replace(placed, shown)
    except Exception:
        return f'<code class="math-source">{html.escape(source)}</code>'
    opening = _MATH_OPEN.match(mathml)
    if opening is None or not mathml.endswith("</math>"):
        return f'<code class="math-source">{html.escape(source)}</code>'
    body = _BARE_FENCE.sub(r'<mo stretchy="false">\1</mo>', mathml[opening.end() : -len("</math>")])
    annotation = f'<annotation encoding="application/x-tex">{html.escape(source)}</annotation>'
    return f"{opening.group(0)}<semantics><mrow>{body}</mrow>{annotation}</semantics></math>"


def _render_math(content: str, options: dict[str, Any]) -> str:
    return tex_to_mathml(content, display=bool(options.get("display_mode")))


@cache
def _parser() -> MarkdownIt:
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    return (
        MarkdownIt("commonmark", {"html": False})
        .enable("table")
        .use(dollarmath_plugin, renderer=_render_math)
    )


def to_html(markdown: str) -> str:
    html_text: str = _parser().render(markdown)
    return html_text


def inline_to_html(markdown: str) -> str:
    """One line of Markdown (a hint, a list item) as inline HTML: no enclosing paragraph; math as above."""
    html_text: str = _parser().renderInline(markdown)
    return html_text


def section_items(markdown: str, title: str) -> list[str]:
    """The top-level bullet items of the ``## <title>`` section, each as its Markdown source (one line)."""
    tokens = _parser().parse(markdown)
    lines = markdown.split("\n")
    items: list[str] = []
    inside = False
    depth = 0
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            level = int(token.tag[1:])
            if inside and level <= 2:
                break
            if level == 2 and i + 1 < len(tokens) and tokens[i + 1].content.strip().lower() == title.lower():
                inside = True
            continue
        if not inside:
            continue
        if token.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif token.type == "list_item_open" and depth == 1 and token.map is not None:
            start, end = token.map
            text = " ".join(line.strip() for line in lines[start:end] if line.strip())
            items.append(re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", text))
    return items


def formulas_left_raw(markdown: str) -> list[tuple[int, str, list[str]]]:
    """``(line, formula, raw parts)`` for every ``$...$`` or ``$$...$$`` formula of ``markdown`` whose
    rendering still shows TeX raw (``raw_tex``); the line is 1-based, of the block holding the formula."""
    found: list[tuple[int, str, list[str]]] = []
    for token in _parser().parse(markdown):
        line = token.map[0] + 1 if token.map else 1
        candidates = [token, *(token.children or [])]
        for part in candidates:
            if part.type in ("math_inline", "math_block", "math_block_eqno", "math_inline_double"):
                display = part.type != "math_inline"
                left = raw_tex(tex_to_mathml(part.content, display=display))
                if left:
                    found.append((line, part.content.strip(), left))
    return found
