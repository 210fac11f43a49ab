// The code box: one interface over the two editors the page has. The server renders the starter code in a
// plain <textarea>, so the page is an editor before any script runs; this module makes that textarea behave
// like a small code editor (Tab indents, Enter keeps the indentation), and `upgrade` hands the text, the
// selection, the focus, the scroll position and the error-line mark over to CodeMirror once its chunk has
// loaded (web/src/editor.js). The rest of the page talks only to a CodeBox, never to either editor.

const INDENT = "    ";

/** 0-based offset of the start of line `number` (1-based) in `text`, or null when there is no such line. */
export function lineStart(text, number) {
  if (!Number.isInteger(number) || number < 1) return null;
  let offset = 0;
  for (let line = 1; line < number; line += 1) {
    const next = text.indexOf("\n", offset);
    if (next < 0) return null;
    offset = next + 1;
  }
  return offset;
}

/** What Enter inserts at `offset`: a newline, the line's indentation, one level more after a `:`. */
export function newlineAt(text, offset) {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  const before = text.slice(start, offset);
  const indent = /^[ \t]*/.exec(before)[0];
  return `\n${indent}${before.trimEnd().endsWith(":") ? INDENT : ""}`;
}

/** Spaces that take column `column` (0-based) to the next multiple of four. */
export function tabAt(column) {
  return " ".repeat(INDENT.length - (column % INDENT.length));
}

/**
 * The plain editor: `textarea` as it came from the server. Implements the CodeBox backend interface
 * (get, set, markErrorLine, focusLine, focus, errorLine, destroy).
 */
class PlainEditor {
  constructor(textarea, { onChange }) {
    this.textarea = textarea;
    this.errorLine = null;
    this.escaped = false;
    this.composing = false;
    this.onComposition = (event) => {
      this.composing = event.type === "compositionstart";
    };
    this.onInput = () => {
      this.setErrorLine(null);
      onChange(textarea.value);
    };
    this.onKeyDown = (event) => this.keyDown(event);
    // Reached with Tab and not yet used: Tab moves on instead of indenting (see web/src/editor.js).
    this.passing = false;
    this.pointer = false;
    this.onPointer = () => {
      this.pointer = true;
      this.passing = false;
    };
    this.onFocus = () => {
      this.passing = !this.pointer;
      this.pointer = false;
    };
    textarea.addEventListener("pointerdown", this.onPointer);
    textarea.addEventListener("focus", this.onFocus);
    textarea.addEventListener("input", this.onInput);
    textarea.addEventListener("keydown", this.onKeyDown);
    textarea.addEventListener("compositionstart", this.onComposition);
    textarea.addEventListener("compositionend", this.onComposition);
  }

  /** Resolves when no IME composition is under way (at once, usually). */
  compositionEnd() {
    if (!this.composing) return Promise.resolve();
    return new Promise((resolve) => this.textarea.addEventListener("compositionend", resolve, { once: true }));
  }

  get() {
    return this.textarea.value;
  }

  /** Replace the whole text: one undoable edit when the box has the focus, else a plain assignment. */
  set(text) {
    const box = this.textarea;
    if (document.activeElement === box) {
      box.select();
      if (insertText(box, text)) {
        box.setSelectionRange(0, 0);
        return;
      }
    }
    box.value = text;
    box.setSelectionRange(0, 0);
    box.dispatchEvent(new Event("input", { bubbles: true }));
  }

  insert(text) {
    const box = this.textarea;
    if (insertText(box, text)) return;
    box.setRangeText(text, box.selectionStart, box.selectionEnd, "end");
    box.dispatchEvent(new Event("input", { bubbles: true }));
  }

  keyDown(event) {
    const escaped = this.escaped || (this.passing && event.key === "Tab");
    if (!["Shift", "Tab"].includes(event.key)) this.passing = false;
    this.escaped = event.key === "Escape";
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const box = this.textarea;
    const text = box.value;
    if (event.key === "Tab" && !event.shiftKey && !escaped) {
      // Tab indents; Escape then Tab leaves the box (as in CodeMirror), so keyboard users are not trapped.
      event.preventDefault();
      const start = box.selectionStart;
      const lineBegin = text.lastIndexOf("\n", start - 1) + 1;
      this.insert(tabAt(start - lineBegin));
    } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      this.insert(newlineAt(text, box.selectionStart));
    }
  }

  setErrorLine(number) {
    this.errorLine = number;
    if (number === null) delete this.textarea.dataset.errorLine;
    else this.textarea.dataset.errorLine = String(number);
  }

  /** Remember line `number` as the one an error names and scroll to it (a textarea cannot colour it). */
  markErrorLine(number) {
    const offset = number === null ? null : lineStart(this.get(), number);
    if (offset === null) {
      this.setErrorLine(null);
      return false;
    }
    this.setErrorLine(number);
    this.scrollToLine(number);
    return true;
  }

  focusLine(number) {
    const offset = lineStart(this.get(), number);
    if (offset === null) return;
    this.textarea.focus({ preventScroll: true });
    this.textarea.setSelectionRange(offset, offset);
    this.scrollToLine(number);
  }

  scrollToLine(number) {
    const box = this.textarea;
    box.scrollTop = Math.max(0, (number - 1) * lineHeight(box) - box.clientHeight / 2);
  }

  focus() {
    this.textarea.focus();
  }

  /** What CodeMirror needs to carry on where the textarea stops. */
  snapshot() {
    const box = this.textarea;
    return {
      text: box.value,
      anchor: box.selectionDirection === "backward" ? box.selectionEnd : box.selectionStart,
      head: box.selectionDirection === "backward" ? box.selectionStart : box.selectionEnd,
      focused: document.activeElement === box,
      topLine: Math.floor(box.scrollTop / lineHeight(box)) + 1,
      errorLine: this.errorLine,
    };
  }

  destroy() {
    this.textarea.removeEventListener("input", this.onInput);
    this.textarea.removeEventListener("keydown", this.onKeyDown);
    this.textarea.removeEventListener("compositionstart", this.onComposition);
    this.textarea.removeEventListener("compositionend", this.onComposition);
    this.textarea.removeEventListener("pointerdown", this.onPointer);
    this.textarea.removeEventListener("focus", this.onFocus);
  }
}

/** Insert through the browser's editing command, so the change joins its undo history. */
function insertText(box, text) {
  try {
    return document.execCommand("insertText", false, text);
  } catch {
    return false;
  }
}

function lineHeight(box) {
  const style = getComputedStyle(box);
  const height = parseFloat(style.lineHeight);
  return Number.isFinite(height) ? height : parseFloat(style.fontSize) * 1.4;
}

/**
 * The page's code editor: starts as the plain textarea, becomes CodeMirror after `upgrade`.
 *
 * - `get()` the code; `set(text)` replaces it (undoably when the editor has the focus); `focus()`.
 * - `markErrorLine(n)` marks line n (1-based) as the one an error names (null clears it; the next edit
 *   clears it too); `focusLine(n)` puts the cursor there.
 * - `onChange(code)` follows every edit, in either editor.
 * - `keys`: extra bindings ({key: "Mod-Enter", run}) CodeMirror gives precedence over its own; the plain
 *   textarea leaves those keys to the document.
 */
export class CodeBox {
  constructor(textarea, { onChange, keys = [] }) {
    this.textarea = textarea;
    this.onChange = onChange;
    this.keys = keys;
    this.editor = new PlainEditor(textarea, { onChange });
    this.kind = "textarea";
  }

  get() {
    return this.editor.get();
  }

  set(text) {
    this.editor.set(text);
  }

  markErrorLine(number) {
    return this.editor.markErrorLine(number);
  }

  focusLine(number) {
    this.editor.focusLine(number);
  }

  focus() {
    this.editor.focus();
  }

  /**
   * Hand over to CodeMirror: `editorModule` is web/src/editor.js. Waits for a running IME composition to
   * end, so no half-typed character is lost. Resolves once CodeMirror shows the text.
   */
  async upgrade(editorModule) {
    if (this.kind !== "textarea") return;
    const box = this.textarea;
    const plain = this.editor;
    await plain.compositionEnd();
    const state = plain.snapshot();
    plain.destroy();
    this.editor = editorModule.replaceTextarea(box, { ...state, onChange: this.onChange, keys: this.keys });
    this.kind = "codemirror";
  }
}
