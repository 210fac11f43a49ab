// The editor's JAX help on screen: the documentation panel of a completion option, a tooltip for the
// name under the pointer, and the same tooltip for the name at the cursor on Ctrl+I (Cmd+I) for keyboard
// users (Escape closes it). The text is the docs index web/jax_names.py writes from the locked jax
// (web/src/jax-docs.json): web/build.mjs emits it as a file of its own, fetched once, on the first
// completion panel or tooltip, so the page does not wait for it.
import { syntaxTree } from "@codemirror/language";
import { StateEffect, StateField } from "@codemirror/state";
import { EditorView, hoverTooltip, keymap, showTooltip } from "@codemirror/view";
import docsUrl from "./jax-docs.json"; // web/build.mjs: the URL of the emitted file, not its contents
import { aliasesIn, codePieces, dottedAt, helpFor, resolve } from "./docs.js";

let loading = null;
let loaded = null;

/** The docs index, fetched on first use (a failed fetch is tried again next time). */
export function loadDocs() {
  if (!loading) {
    loading = fetch(docsUrl).then((response) => {
      if (!response.ok) throw new Error(`the JAX documentation did not load (HTTP ${response.status})`);
      return response.json();
    });
    loading.then(
      (index) => {
        loaded = index;
      },
      () => {
        loading = null;
      },
    );
  }
  return loading;
}

/** The key that shows the help at the cursor, as this platform writes it (the page's key hints do the same). */
const MOD = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent) ? "Cmd" : "Ctrl";
const KEY_TEXT = `${MOD}+I on a name shows this.`;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** `text` with its backticked pieces as <code>, appended to `parent`. */
function appendProse(parent, text) {
  for (const piece of codePieces(text)) {
    parent.append(piece.code !== undefined ? element("code", null, piece.code) : piece.text);
  }
  return parent;
}

/** The help of helpFor() as a block: the signature, the summary, one line per parameter, the version. */
export function renderHelp(help, version) {
  const root = element("div", "cm-jax-doc");
  root.append(element("code", "cm-jax-doc-signature", help.signature));
  if (help.summary) root.append(appendProse(element("p", "cm-jax-doc-summary"), help.summary));
  if (help.params.length) {
    const list = element("ul", "cm-jax-doc-params");
    list.setAttribute("aria-label", "Parameters");
    for (const param of help.params) {
      const item = element("li");
      item.append(element("code", null, param.name), ": ");
      list.append(appendProse(item, param.text));
    }
    root.append(list);
  }
  root.append(element("p", "cm-jax-doc-source", `From the docstring of jax ${version}. ${KEY_TEXT}`));
  return root;
}

/**
 * The documentation panel of completion option `path`, or null when jax has no docs for it: at once when
 * the docs index is here, else once it is (then marked as the selected option's description, which
 * CodeMirror does only for a panel given at once).
 */
export function describe(path) {
  if (loaded) return panel(path, loaded);
  return loadDocs().then(
    (index) => {
      const dom = panel(path, index);
      if (dom) setTimeout(() => describeSelected(dom), 0); // once CodeMirror has put it in its pane
      return dom;
    },
    (error) => element("p", "cm-jax-doc-missing", error.message),
  );
}

function panel(path, index) {
  const help = helpFor(path, index);
  return help ? renderHelp(help, index.jax_version) : null;
}

function describeSelected(dom) {
  const pane = dom.closest(".cm-completionInfo");
  const selected = pane?.parentElement?.querySelector("li[aria-selected]");
  if (pane && selected) selected.setAttribute("aria-describedby", pane.id);
}

/** Strings and comments name nothing. */
function inCode(state, pos) {
  const node = syntaxTree(state).resolveInner(pos, 1);
  return !/String|Comment/.test(node.name);
}

/** The dotted path and range of the name at column `column` of the line at `pos`'s line, or null. */
function nameAt(state, line, column) {
  const found = dottedAt(line.text, column);
  if (!found || !inCode(state, line.from + found.from)) return null;
  const path = resolve(found.text, aliasesIn(state.doc.toString()));
  if (!path || !(path === "jax" || path.startsWith("jax."))) return null;
  return { path, written: found.text, from: line.from + found.from, to: line.from + found.to };
}

let tooltipIds = 0;

/** A tooltip showing `dom`, given an id (the content points at it while it shows). */
function helpTooltip(pos, end, dom) {
  dom.id = `cm-jax-doc-${++tooltipIds}`;
  dom.setAttribute("role", "tooltip");
  dom.tabIndex = 0; // a long one scrolls: reachable by keyboard too
  return { pos, end, above: true, create: () => ({ dom }) };
}

const hover = hoverTooltip(
  async (view, pos, side) => {
    const line = view.state.doc.lineAt(pos);
    const name = nameAt(view.state, line, pos - line.from - (side < 0 ? 1 : 0));
    if (!name) return null;
    let index;
    try {
      index = await loadDocs();
    } catch {
      return null; // hovering is no reason to complain: the completion panel says it
    }
    const help = helpFor(name.path, index);
    if (!help) return null;
    return helpTooltip(name.from, name.to, renderHelp(help, index.jax_version));
  },
  { hoverTime: 350 },
);

// The keyboard's tooltip: set by Ctrl+I, gone with Escape, an edit or a move of the cursor.
const setKeyTooltip = StateEffect.define();
const keyTooltip = StateField.define({
  create: () => null,
  update(value, transaction) {
    for (const effect of transaction.effects) if (effect.is(setKeyTooltip)) return effect.value;
    return transaction.docChanged || transaction.selection ? null : value;
  },
  provide: (field) => [
    showTooltip.from(field),
    EditorView.contentAttributes.from(field, (tip) => (tip ? { "aria-describedby": tip.describedBy } : {})),
  ],
});

/** Show the help of the name at (or just before) the cursor; on no JAX name, a line saying what to do. */
export function showHelpAtCursor(view) {
  const head = view.state.selection.main.head;
  const line = view.state.doc.lineAt(head);
  const name = nameAt(view.state, line, head - line.from) ?? nameAt(view.state, line, head - line.from - 1);
  const selection = view.state.selection;
  const show = (dom, from, to) => {
    if (!view.state.selection.eq(selection)) return; // the cursor moved on meanwhile
    const tip = helpTooltip(from, to, dom);
    view.dispatch({ effects: setKeyTooltip.of({ ...tip, above: false, describedBy: dom.id }) });
  };
  if (!name) {
    const hint = "Put the cursor on a JAX name (`jnp.sum`, `jax.lax.scan`...) to see its documentation.";
    show(appendProse(element("p", "cm-jax-doc cm-jax-doc-missing"), hint), head, head);
    return true;
  }
  loadDocs()
    .then((index) => {
      const help = helpFor(name.path, index);
      return help
        ? renderHelp(help, index.jax_version)
        : appendProse(element("p", "cm-jax-doc cm-jax-doc-missing"), `No JAX documentation for \`${name.written}\`.`);
    })
    .catch((error) => element("p", "cm-jax-doc cm-jax-doc-missing", error.message))
    .then((dom) => show(dom, name.from, name.to));
  return true;
}

function closeHelp(view) {
  if (!view.state.field(keyTooltip)) return false;
  view.dispatch({ effects: setKeyTooltip.of(null) });
  return true;
}

const theme = EditorView.baseTheme({
  ".cm-jax-doc": {
    maxWidth: "min(36rem, calc(100vw - 2rem))",
    maxHeight: "18rem",
    overflowY: "auto",
    padding: "6px 10px",
    fontFamily: "system-ui, sans-serif",
    fontSize: "0.875rem",
    lineHeight: "1.45",
    whiteSpace: "normal",
  },
  ".cm-completionInfo .cm-jax-doc": { padding: "0", maxWidth: "none", maxHeight: "none", overflowY: "visible" },
  ".cm-jax-doc p, .cm-jax-doc ul": { margin: "0.35em 0 0" },
  ".cm-jax-doc ul": { paddingLeft: "1.1em" },
  ".cm-jax-doc code": {
    fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace",
    fontSize: "0.95em",
  },
  ".cm-jax-doc-signature": { display: "block", fontWeight: "600", overflowWrap: "anywhere" },
  ".cm-jax-doc-source": { fontSize: "0.8rem" },
  // The keyboard's tooltip is the .cm-jax-doc itself; a hover's is inside .cm-tooltip-hover.
  "&light .cm-tooltip.cm-tooltip-hover, &light .cm-tooltip.cm-jax-doc, &light .cm-completionInfo": {
    color: "#1f2328",
    backgroundColor: "#ffffff",
  },
  "&light .cm-jax-doc-source": { color: "#57606a" },
  "&light .cm-jax-doc p code, &light .cm-jax-doc li code": { backgroundColor: "#eef1f4", borderRadius: "3px" },
  "&dark .cm-tooltip.cm-tooltip-hover, &dark .cm-tooltip.cm-jax-doc, &dark .cm-completionInfo": {
    color: "#e3e8ef",
    backgroundColor: "#161b22",
  },
  "&dark .cm-jax-doc-source": { color: "#a4afbd" },
  "&dark .cm-jax-doc p code, &dark .cm-jax-doc li code": { backgroundColor: "#2a313c", borderRadius: "3px" },
});

/** The editor extensions: hover help, Ctrl+I help at the cursor, their look. */
export const jaxHelp = [
  hover,
  keyTooltip,
  keymap.of([
    { key: "Mod-i", run: showHelpAtCursor },
    { key: "Escape", run: closeHelp },
  ]),
  theme,
];
