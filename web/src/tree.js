// Show an output tree beside the expected one and mark the leaves that differ.
//
// The judge's verdict and message (its own comparison, on the trusted side, with the leaf dtype's
// tolerance) are what count; this marking is a reading aid drawn from the two JSON trees the API returns.
// JSON trees follow the Run-panel rule: an object is a dict node, a list holding objects is a list node,
// and anything else (a number, a list of numbers or of such lists) is one array leaf. Non-finite numbers
// may arrive as the strings "NaN", "Infinity" and "-Infinity".

/** float32's tolerance, the one the Run panel's values use. */
export const DISPLAY_TOLERANCE = { rtol: 1e-5, atol: 1e-6 };

const INLINE_WIDTH = 72;

// Characters a submission could use to make a shown key or string lie about itself: C1 controls, the
// bidirectional marks, embeddings, overrides and isolates, the line and paragraph separators, the
// byte-order mark (JSON.stringify already escapes C0 controls and lone surrogates). The same set the
// judge's text report escapes (judge/display.py).
const INVISIBLE = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

/** A key or string as shown: JSON-quoted, with every invisible or reordering character as `\uXXXX`. */
export function quote(text) {
  return JSON.stringify(String(text)).replace(
    INVISIBLE,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

export function isDict(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A list node: a non-empty array with at least one dict or list node in it. */
export function isListNode(value) {
  return Array.isArray(value) && value.some((item) => isDict(item) || isListNode(item));
}

export function isNode(value) {
  return isDict(value) || isListNode(value);
}

/** A number from JSON, including the non-finite spellings; null for anything else. */
export function numberValue(value) {
  if (typeof value === "number") return value;
  if (value === "NaN") return Number.NaN;
  if (value === "Infinity") return Number.POSITIVE_INFINITY;
  if (value === "-Infinity") return Number.NEGATIVE_INFINITY;
  return null;
}

/** Whether `got` is within `tol` of `expected`: NaN only matches NaN, an infinity only itself. */
export function closeEnough(got, expected, tol = DISPLAY_TOLERANCE) {
  if (Number.isNaN(got) || Number.isNaN(expected)) return Number.isNaN(got) && Number.isNaN(expected);
  if (got === expected) return true;
  if (!Number.isFinite(got) || !Number.isFinite(expected)) return false;
  return Math.abs(got - expected) <= tol.atol + tol.rtol * Math.abs(expected);
}

/** The shape of a leaf (nested lengths), or null when it is ragged or holds non-numbers. */
export function leafShape(value) {
  if (!Array.isArray(value)) return numberValue(value) === null ? null : [];
  if (value.length === 0) return [0];
  const inner = leafShape(value[0]);
  if (inner === null) return null;
  for (const item of value) {
    const shape = leafShape(item);
    if (shape === null || shape.join(",") !== inner.join(",")) return null;
  }
  return [value.length, ...inner];
}

/** The elements of a rectangular leaf, row-major. */
export function flatten(value) {
  return Array.isArray(value) ? value.flatMap(flatten) : [numberValue(value)];
}

/**
 * Compare two leaves: `{differs, elements}` where `elements` holds the row-major indexes of differing
 * elements when both leaves have the same shape (empty otherwise: the whole leaf differs).
 */
export function leafDiff(got, expected, tol = DISPLAY_TOLERANCE) {
  const shapeGot = leafShape(got);
  const shapeExpected = leafShape(expected);
  if (shapeGot === null || shapeExpected === null || shapeGot.join(",") !== shapeExpected.join(",")) {
    return { differs: true, elements: new Set() };
  }
  const a = flatten(got);
  const b = flatten(expected);
  const elements = new Set();
  a.forEach((value, i) => {
    if (!closeEnough(value, b[i], tol)) elements.add(i);
  });
  return { differs: elements.size > 0, elements };
}

/** A leaf path as the judge writes it: `clipped["dense"]["w"]`, `output[0]`, `global_norm`. */
export function formatPath(entries) {
  if (entries.length === 0) return "output";
  const [head, ...rest] = entries;
  const step = (entry) => (typeof entry === "number" ? `[${entry}]` : `[${quote(entry)}]`);
  const root = typeof head === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(head) ? head : `output${step(head)}`;
  return root + rest.map(step).join("");
}

/** The paths of every leaf or node where `got` and `expected` differ, in display order. */
export function differingPaths(got, expected, tol = DISPLAY_TOLERANCE) {
  const found = [];
  walkDiff(got, expected, [], tol, (path) => found.push(formatPath(path)));
  return found;
}

function sortedKeys(dict) {
  return Object.keys(dict).sort();
}

function walkDiff(got, expected, path, tol, report) {
  if (isDict(got) && isDict(expected)) {
    const keys = [...new Set([...Object.keys(got), ...Object.keys(expected)])].sort();
    for (const key of keys) {
      if (!(key in got) || !(key in expected)) report([...path, key]);
      else walkDiff(got[key], expected[key], [...path, key], tol, report);
    }
  } else if (isListNode(got) && isListNode(expected) && got.length === expected.length) {
    got.forEach((item, i) => walkDiff(item, expected[i], [...path, i], tol, report));
  } else if (isNode(got) || isNode(expected)) {
    report(path);
  } else if (leafDiff(got, expected, tol).differs) {
    report(path);
  }
}

/** Six decimals in shortest form, like the statement's examples: 0.8, 5.0, -0.333333, NaN. */
export function formatNumber(value) {
  const number = numberValue(value);
  if (number === null) return typeof value === "string" ? quote(value) : JSON.stringify(value);
  if (Number.isNaN(number)) return "NaN";
  if (!Number.isFinite(number)) return number > 0 ? "Infinity" : "-Infinity";
  const rounded = Number(number.toFixed(6));
  if (Object.is(rounded, -0)) return "-0.0";
  return Number.isInteger(rounded) && Math.abs(rounded) < 1e16 ? rounded.toFixed(1) : String(rounded);
}

export function compactText(value) {
  if (isDict(value)) {
    return `{${sortedKeys(value).map((k) => `${quote(k)}: ${compactText(value[k])}`).join(", ")}}`;
  }
  if (Array.isArray(value)) return `[${value.map(compactText).join(", ")}]`;
  return formatNumber(value);
}

/**
 * Render `value` as a tree of spans; with `other` (the tree it is compared with) and `mark`, differing
 * leaves get class "diff" and differing elements a <mark>, extra or missing keys class "diff".
 */
export function renderTree(value, { other, mark = false, tol = DISPLAY_TOLERANCE } = {}) {
  const root = document.createElement("code");
  root.className = "tree";
  root.append(...renderNode(value, other, mark, tol, [], 0));
  return root;
}

function span(className, text) {
  const node = document.createElement("span");
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function renderNode(value, other, mark, tol, path, depth) {
  if (other === undefined) mark = false;
  if (mark && isNode(value) !== isNode(other)) {
    const node = span("diff", compactText(value));
    node.title = `${formatPath(path)} differs`;
    return [node];
  }
  if (isDict(value)) return renderDict(value, isDict(other) ? other : undefined, mark, tol, path, depth);
  if (isListNode(value)) {
    const peer = isListNode(other) && other.length === value.length ? other : undefined;
    if (mark && peer === undefined) {
      const node = span("diff", compactText(value));
      node.title = `${formatPath(path)}: a list of ${value.length}, the other has ${
        Array.isArray(other) ? other.length : "none"
      }`;
      return [node];
    }
    return renderList(value, peer, mark, tol, path, depth);
  }
  return [renderLeaf(value, other, mark, tol, path)];
}

function renderDict(value, other, mark, tol, path, depth) {
  const keys = sortedKeys(value);
  const inline = compactText(value).length + depth * 2 <= INLINE_WIDTH;
  const parts = [span(null, "{")];
  keys.forEach((key, i) => {
    parts.push(span(null, inline ? (i ? ", " : "") : `${i ? "," : ""}\n${"  ".repeat(depth + 1)}`));
    const childPath = [...path, key];
    const missingInOther = mark && other !== undefined && !(key in other);
    const keySpan = span(missingInOther ? "key diff" : "key", quote(key));
    if (missingInOther) keySpan.title = `${formatPath(childPath)} is only on this side`;
    parts.push(keySpan, span(null, ": "));
    if (missingInOther) parts.push(span("diff", compactText(value[key])));
    else parts.push(...renderNode(value[key], other?.[key], mark, tol, childPath, depth + 1));
  });
  parts.push(span(null, inline || keys.length === 0 ? "}" : `\n${"  ".repeat(depth)}}`));
  return parts;
}

function renderList(value, other, mark, tol, path, depth) {
  const inline = compactText(value).length + depth * 2 <= INLINE_WIDTH;
  const parts = [span(null, "[")];
  value.forEach((item, i) => {
    parts.push(span(null, inline ? (i ? ", " : "") : `${i ? "," : ""}\n${"  ".repeat(depth + 1)}`));
    parts.push(...renderNode(item, other?.[i], mark, tol, [...path, i], depth + 1));
  });
  parts.push(span(null, inline ? "]" : `\n${"  ".repeat(depth)}]`));
  return parts;
}

function renderLeaf(value, other, mark, tol, path) {
  const leaf = span("leaf");
  leaf.dataset.path = formatPath(path);
  const diff = mark && other !== undefined ? leafDiff(value, other, tol) : null;
  if (diff?.differs) {
    leaf.classList.add("diff");
    leaf.title = `${formatPath(path)} differs`;
  }
  let index = 0;
  const write = (item) => {
    if (Array.isArray(item)) {
      leaf.append("[");
      item.forEach((child, i) => {
        if (i) leaf.append(", ");
        write(child);
      });
      leaf.append("]");
      return;
    }
    const text = formatNumber(item);
    if (diff?.elements.has(index)) {
      const marked = document.createElement("mark");
      marked.textContent = text;
      leaf.append(marked);
    } else {
      leaf.append(text);
    }
    index += 1;
  };
  write(value);
  return leaf;
}
