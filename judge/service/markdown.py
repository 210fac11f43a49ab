"""Statement Markdown -> HTML with the math already rendered as MathML (no script, no network needed).

CommonMark plus tables, raw HTML disabled (so a statement cannot inject markup). ``$...$`` and
``$$...$$`` become ``<math>`` elements (``latex2mathml``) that carry their TeX source as an
``application/x-tex`` annotation, so a page may still re-render them with KaTeX. TeX that cannot be
converted is shown as escaped code rather than dropped.
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


def tex_to_mathml(tex: str, *, display: bool) -> str:
    """One formula as a ``<math>`` element (``display="block"`` for display math)."""
    from latex2mathml.converter import convert

    source = tex.strip()
    try:
        mathml = convert(source, display="block" if display else "inline")
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
