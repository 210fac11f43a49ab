// The code editor: CodeMirror 6 with Python highlighting, line numbers, auto-indent, Tab indenting,
// bracket matching and closing, code folding, undo history and search, completion of the names of jax,
// jax.numpy, jax.lax, jax.random, jax.tree and jax.nn with their signatures and a documentation panel
// (web/src/complete.js: only after one of those modules, as the code's imports name it, and a dot, or on
// Ctrl+Space, so it never competes with Enter elsewhere), the same help on hovering a name or on Ctrl+I at
// the cursor (web/src/hover.js), plus a marker for the line an error names. No lint: the judge is the
// linter.
//
// Focus: reaching the editor with Tab from the page does not make the next Tab indent line 1; until the
// learner presses another key or clicks in it, Tab and Shift+Tab move on through the page.
//
// This module is loaded on demand (a chunk of its own): the page is usable with the server-rendered
// textarea first, and web/src/code.js calls `replaceTextarea` once this chunk has arrived.
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { tags } from "@lezer/highlight";
import {
  HighlightStyle,
  bracketMatching,
  defaultHighlightStyle,
  foldGutter,
  foldKeymap,
  indentOnInput,
  indentUnit,
  syntaxHighlighting,
} from "@codemirror/language";
import { highlightSelectionMatches, searchKeymap } from "@codemirror/search";
import { jaxCompletions } from "./complete.js";
import { describe, jaxHelp } from "./hover.js";
import { focusNext } from "./focus.js";
import { Compartment, EditorState, Prec, StateEffect, StateField } from "@codemirror/state";
import {
  Decoration,
  EditorView,
  crosshairCursor,
  drawSelection,
  dropCursor,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
  rectangularSelection,
} from "@codemirror/view";

// Dark mode follows the system setting, as the page's stylesheet does: a dark theme and highlight style
// with enough contrast on the page's dark background, swapped when the setting changes.
const darkHighlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.controlKeyword, tags.operatorKeyword, tags.definitionKeyword], color: "#d2a8ff" },
  { tag: [tags.string, tags.special(tags.string)], color: "#a5d6ff" },
  { tag: [tags.number, tags.bool, tags.null], color: "#79c0ff" },
  { tag: [tags.comment, tags.lineComment], color: "#9aa5b4", fontStyle: "italic" },
  { tag: [tags.function(tags.variableName), tags.function(tags.definition(tags.variableName))], color: "#ffa657" },
  { tag: [tags.definition(tags.variableName), tags.className], color: "#7ee787" },
  { tag: tags.invalid, color: "#ff8f86" },
]);
const darkTheme = EditorView.theme(
  {
    "&": { color: "#e3e8ef", backgroundColor: "#0d1117" },
    ".cm-content": { caretColor: "#e3e8ef" },
    ".cm-cursor, .cm-dropCursor": { borderLeftColor: "#e3e8ef" },
    ".cm-gutters": { backgroundColor: "#161b22", color: "#a4afbd", borderRightColor: "#3a4452" },
    ".cm-activeLine": { backgroundColor: "#1b2430" },
    ".cm-activeLineGutter": { backgroundColor: "#1b2430" },
    "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": { backgroundColor: "#264f78" },
    ".cm-matchingBracket": { backgroundColor: "#2f4a73", color: "#fff" },
  },
  { dark: true },
);
const darkQuery = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
const colours = new Compartment();
const colourScheme = () =>
  darkQuery?.matches ? [darkTheme, syntaxHighlighting(darkHighlight)] : syntaxHighlighting(defaultHighlightStyle);

const setup = [
  lineNumbers(),
  highlightActiveLineGutter(),
  highlightSpecialChars(),
  history(),
  foldGutter(),
  drawSelection(),
  dropCursor(),
  EditorState.allowMultipleSelections.of(true),
  indentOnInput(),
  colours.of(colourScheme()),
  bracketMatching(),
  closeBrackets(),
  rectangularSelection(),
  crosshairCursor(),
  highlightActiveLine(),
  highlightSelectionMatches(),
  autocompletion({ override: [jaxCompletions(describe)], icons: false }),
  jaxHelp,
  keymap.of([
    ...closeBracketsKeymap,
    ...completionKeymap,
    ...defaultKeymap,
    ...searchKeymap,
    ...historyKeymap,
    ...foldKeymap,
  ]),
];

/**
 * Tab passes through an editor that was reached with the keyboard and not yet used: `passing` is set on
 * a focus that no pointer caused and cleared by any other key or a click.
 */
function tabPassesThrough() {
  let passing = false;
  let pointer = false;
  return EditorView.domEventHandlers({
    pointerdown: () => {
      pointer = true;
      passing = false;
    },
    focus: () => {
      passing = !pointer;
      pointer = false;
    },
    keydown: (event, view) => {
      if (event.key === "Tab" && passing && !event.ctrlKey && !event.altKey && !event.metaKey) {
        // CodeMirror does not indent: the focus moves on as Tab moves it elsewhere in the page.
        if (focusNext(view.dom, event.shiftKey)) event.preventDefault();
        return true;
      }
      if (!["Shift", "Tab"].includes(event.key)) passing = false;
      return false;
    },
  });
}

const setErrorLine = StateEffect.define();

const errorLineMark = Decoration.line({ class: "cm-error-line", attributes: { "data-error-line": "" } });

// The marked line (a DecorationSet); cleared by the next edit, since the line may no longer be the culprit.
const errorLineField = StateField.define({
  create: () => Decoration.none,
  update(marks, transaction) {
    for (const effect of transaction.effects) {
      if (effect.is(setErrorLine)) {
        if (effect.value === null) return Decoration.none;
        const line = transaction.state.doc.line(effect.value);
        return Decoration.set([errorLineMark.range(line.from)]);
      }
    }
    return transaction.docChanged ? Decoration.none : marks;
  },
  provide: (field) => EditorView.decorations.from(field),
});

/**
 * Replace `textarea` by CodeMirror, carrying on where it stopped: `text`, the selection (`anchor`, `head`:
 * offsets), the focus, the first visible line (`topLine`) and the error-line mark (`errorLine`, or null).
 * `onChange(code)` follows every edit; `keys` are extra bindings ({key: "Mod-Enter", run}) that take
 * precedence over the editor's own. The editor keeps the textarea's accessible name. Returns the CodeBox
 * backend (see web/src/code.js): get, set, markErrorLine, focusLine, focus.
 */
export function replaceTextarea(textarea, { text, anchor, head, focused, topLine, errorLine, onChange, keys }) {
  const clamp = (offset) => Math.max(0, Math.min(text.length, offset));
  const view = new EditorView({
    state: EditorState.create({
      doc: text,
      selection: { anchor: clamp(anchor), head: clamp(head) },
      extensions: [
        Prec.highest(tabPassesThrough()),
        Prec.highest(keymap.of(keys)),
        setup,
        keymap.of([indentWithTab]),
        python(),
        indentUnit.of("    "),
        EditorState.tabSize.of(4),
        errorLineField,
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({
          "aria-label": textarea.getAttribute("aria-label") ?? "Code editor",
          "aria-multiline": "true",
          // Focusable as it is (contenteditable); said outright so that checkers see the scroller's way in.
          tabindex: "0",
        }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  textarea.replaceWith(view.dom);
  darkQuery?.addEventListener("change", () => view.dispatch({ effects: colours.reconfigure(colourScheme()) }));
  const effects = [];
  if (errorLine !== null && errorLine >= 1 && errorLine <= view.state.doc.lines) {
    effects.push(setErrorLine.of(errorLine));
  }
  if (topLine > 1 && topLine <= view.state.doc.lines) {
    effects.push(EditorView.scrollIntoView(view.state.doc.line(topLine).from, { y: "start" }));
  } else if (focused) {
    effects.push(EditorView.scrollIntoView(view.state.selection.main.head));
  }
  if (effects.length) view.dispatch({ effects });
  if (focused) view.focus();
  return {
    get: () => view.state.doc.toString(),
    set: (code) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: code } }),
    markErrorLine: (number) => markErrorLine(view, number),
    focusLine: (number) => focusLine(view, number),
    focus: () => view.focus(),
  };
}

/** Mark line `number` (1-based) as the one an error names and scroll to it; null clears the mark. */
function markErrorLine(view, number) {
  if (number === null || number < 1 || number > view.state.doc.lines) {
    view.dispatch({ effects: setErrorLine.of(null) });
    return false;
  }
  const line = view.state.doc.line(number);
  view.dispatch({
    effects: [setErrorLine.of(number), EditorView.scrollIntoView(line.from, { y: "center" })],
  });
  return true;
}

/** Put the cursor at the start of line `number` and focus the editor. */
function focusLine(view, number) {
  if (number < 1 || number > view.state.doc.lines) return;
  const line = view.state.doc.line(number);
  view.dispatch({ selection: { anchor: line.from }, scrollIntoView: true });
  view.focus();
}
