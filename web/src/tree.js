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
// judge's text report escapes (judge/feedback/display.py).
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

/**
 * What the API says of a shown value beyond its JSON (`leaves`: each leaf's path and dtype; `tuples`: the
 * paths of its tuple nodes), as lookups by path; null when it says nothing (an input, an old result).
 */
export function layoutOf(shown) {
  if (!shown || !Array.isArray(shown.leaves) || shown.leaves.length === 0) return null;
  return {
    dtypes: new Map(shown.leaves.map((leaf) => [pathKey(leaf.path), leaf.dtype])),
    tuples: new Set((shown.tuples ?? []).map(pathKey)),
  };
}

/**
 * The layout of a case's input (`{argument: JSON}`) from what the page knows of the arguments
 * (`inputs.arguments`: each one's layout, "leaf", "tuple", "tree" or "untagged", and leaf dtype, "case"
 * for the case's float dtype; the layout, never a kind's name, so a new kind needs nothing here) and the case's
 * float dtype: each leaf's dtype, so numbers read as the function gets them (an int32 `55`, not `55.0`)
 * with their dtype beside them; a static int tuple as a tuple. Null without the page's knowledge.
 */
export function inputLayout(input, inputs, caseDtype) {
  if (!input || !inputs?.arguments) return null;
  const dtypes = new Map();
  const tuples = new Set();
  const untagged = new Set();
  const leaves = (value, path, dtype, tag = true) => {
    if (isNode(value)) {
      const keys = isDict(value) ? Object.keys(value) : value.map((_, i) => i);
      for (const key of keys) leaves(value[key], [...path, key], dtype, tag);
      return;
    }
    dtypes.set(pathKey(path), dtype);
    if (!tag) untagged.add(pathKey(path));
  };
  for (const [name, value] of Object.entries(input)) {
    const argument = inputs.arguments[name];
    if (!argument?.dtype) continue; // a string or a function's name: shown as it is
    const dtype = argument.dtype === "case" ? caseDtype : argument.dtype;
    if (!dtype) continue;
    if (argument.layout === "tuple" && Array.isArray(value)) {
      tuples.add(pathKey([name]));
      value.forEach((_, i) => dtypes.set(pathKey([name, i]), dtype));
    } else if (argument.layout === "tree" || argument.layout === "untagged") {
      // A key's seed or words are integers, but not the dtype of a leaf the function gets (a key array).
      leaves(value, [name], dtype, argument.layout !== "untagged");
    } else {
      dtypes.set(pathKey([name]), dtype);
    }
  }
  // The arguments in the function's signature order (the page's argument list is in that order), not
  // sorted as a dict's keys are: `adamw(params, grads, mu, nu, step, ...)` shows params first.
  const order = new Map([[pathKey([]), Object.keys(inputs.arguments)]]);
  return { dtypes, tuples, untagged, order };
}

function pathKey(path) {
  return JSON.stringify(path);
}

/**
 * What the JSON `value` at `path` is: "dict", "list", "tuple" or "leaf". With a layout the judge's own
 * tree decides (a list of arrays is a list node, a tuple is a tuple); without one, the Run-panel rule.
 */
export function kindAt(value, path, layout) {
  if (isDict(value)) return "dict";
  if (layout) {
    const key = pathKey(path);
    if (layout.dtypes.has(key)) return "leaf";
    if (layout.tuples.has(key)) return "tuple";
    if (Array.isArray(value)) return "list";
    return "leaf";
  }
  return isListNode(value) ? "list" : "leaf";
}

/** The dtype of the leaf at `path`, or null when the layout does not say. */
export function dtypeAt(path, layout) {
  return layout?.dtypes.get(pathKey(path)) ?? null;
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

/**
 * A leaf path as the judge writes it: `clipped["dense"]["w"]`, `output[0]`, `global_norm`; with the
 * output's `rootNames` (a tuple output's element names) `[0, "b"]` is `new_params["b"]`, as in messages.
 */
export function formatPath(entries, rootNames = []) {
  if (entries.length === 0) return "output";
  const [head, ...rest] = entries;
  const step = (entry) => (typeof entry === "number" ? `[${entry}]` : `[${quote(entry)}]`);
  let root;
  if (typeof head === "number" && head >= 0 && head < rootNames.length) root = rootNames[head];
  else if (typeof head === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(head)) root = head;
  else root = `output${step(head)}`;
  return root + rest.map(step).join("");
}

/**
 * The paths of every leaf or node where `got` and `expected` differ, in display order. `options`: the
 * `tol`, each side's layout (`gotLayout`, `expectedLayout`: see layoutOf) and the output's `rootNames`.
 */
export function differingPaths(got, expected, options = {}) {
  const { tol = DISPLAY_TOLERANCE, gotLayout = null, expectedLayout = null, rootNames = [] } = options;
  const found = [];
  const sides = { gotLayout, expectedLayout };
  walkDiff(got, expected, [], tol, sides, (path) => found.push(formatPath(path, rootNames)));
  return found;
}

/**
 * A dict's keys as shown: sorted, as JAX flattens a dict; except where the layout gives the order (a
 * case's input: its arguments in signature order), which comes first, then any other key sorted.
 */
function sortedKeys(dict, layout = null, path = []) {
  const sorted = Object.keys(dict).sort();
  const order = layout?.order?.get(pathKey(path));
  if (!order) return sorted;
  const first = order.filter((key) => Object.hasOwn(dict, key));
  return [...first, ...sorted.filter((key) => !first.includes(key))];
}

function walkDiff(got, expected, path, tol, sides, report) {
  const gotKind = kindAt(got, path, sides.gotLayout);
  const expectedKind = kindAt(expected, path, sides.expectedLayout);
  if (gotKind !== expectedKind) {
    report(path);
  } else if (gotKind === "dict") {
    const keys = [...new Set([...Object.keys(got), ...Object.keys(expected)])].sort();
    for (const key of keys) {
      if (!(key in got) || !(key in expected)) report([...path, key]);
      else walkDiff(got[key], expected[key], [...path, key], tol, sides, report);
    }
  } else if (gotKind !== "leaf") {
    if (got.length !== expected.length) report(path);
    else got.forEach((item, i) => walkDiff(item, expected[i], [...path, i], tol, sides, report));
  } else if (
    leafDiff(got, expected, tol).differs ||
    dtypeAt(path, sides.gotLayout) !== dtypeAt(path, sides.expectedLayout)
  ) {
    report(path);
  }
}

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

/** `x` rounded to bfloat16 (round to nearest even on float32's bits), as a number. */
export function toBfloat16(x) {
  F32[0] = x;
  const bits = U32[0];
  if ((bits & 0x7f800000) === 0x7f800000) return F32[0]; // NaN and infinities stay
  U32[0] = (bits + 0x7fff + ((bits >>> 16) & 1)) & 0xffff0000;
  return F32[0];
}

/** The rounding of each float dtype the page shows, for the shortest text that reads back the same. */
const ROUNDING = { float32: Math.fround, float16: Math.fround, bfloat16: toBfloat16 };

/**
 * A number as its dtype holds it, in the shortest text that reads back as the same value of that dtype,
 * like Python's repr: integer dtypes as integers (`55`), floats with a point (`5.0`), `0.00059988` for a
 * float32 that six decimals would show as 0.0006. Without a dtype (an input as typed): float32's.
 */
export function formatNumber(value, dtype = null) {
  if (typeof value === "boolean") return value ? "True" : "False";
  const number = numberValue(value);
  if (number === null) return typeof value === "string" ? quote(value) : JSON.stringify(value);
  if (Number.isNaN(number)) return "NaN";
  if (!Number.isFinite(number)) return number > 0 ? "Infinity" : "-Infinity";
  // A typed PRNG key's data (dtype `key<fry>`) is uint32 words: integers too.
  if (dtype && /^u?int|^int$|^key</.test(dtype)) return String(number);
  if (dtype === "bool") return number ? "True" : "False";
  let text;
  if (dtype === "float64" || dtype === "float") {
    text = String(number);
  } else {
    const round = ROUNDING[dtype] ?? Math.fround;
    const target = round(number);
    text = String(number);
    for (let digits = 1; digits <= 17; digits += 1) {
      const candidate = Number(number.toPrecision(digits));
      if (round(candidate) === target) {
        text = String(candidate);
        break;
      }
    }
  }
  if (Object.is(Number(text), -0)) return "-0.0";
  return /^-?\d+$/.test(text) ? `${text}.0` : text;
}

/** One-line text of a value (with its layout: tuples in parentheses, numbers by dtype). */
export function compactText(value, layout = null, path = []) {
  const kind = kindAt(value, path, layout);
  if (kind === "dict") {
    const items = sortedKeys(value, layout, path).map((k) => `${quote(k)}: ${compactText(value[k], layout, [...path, k])}`);
    return `{${items.join(", ")}}`;
  }
  if (kind === "list" || kind === "tuple") {
    const items = value.map((item, i) => compactText(item, layout, [...path, i]));
    if (kind === "tuple") return items.length === 1 ? `(${items[0]},)` : `(${items.join(", ")})`;
    return `[${items.join(", ")}]`;
  }
  return leafText(value, dtypeAt(path, layout));
}

function leafText(value, dtype) {
  if (Array.isArray(value)) return `[${value.map((item) => leafText(item, dtype)).join(", ")}]`;
  return formatNumber(value, dtype);
}

/**
 * Render `value` as a tree of spans; with `other` (the tree it is compared with) and `mark`, differing
 * leaves get class "diff" and differing elements a <mark>, extra or missing keys class "diff". `layout`
 * and `otherLayout` (layoutOf each side) show tuples as tuples, numbers by dtype and each leaf's dtype;
 * `rootNames` names a tuple output's elements in the paths (as the judge's messages do).
 */
export function renderTree(value, options = {}) {
  const { other, mark = false, tol = DISPLAY_TOLERANCE, layout = null, otherLayout = null, rootNames = [] } =
    options;
  const context = { mark, tol, layout, otherLayout, rootNames };
  const root = document.createElement("code");
  root.className = "tree";
  root.append(...renderNode(value, other, context, [], 0));
  return root;
}

function span(className, text) {
  const node = document.createElement("span");
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function renderNode(value, other, context, path, depth) {
  const mark = context.mark && other !== undefined;
  const kind = kindAt(value, path, context.layout);
  const where = formatPath(path, context.rootNames);
  if (mark && kind !== kindAt(other, path, context.otherLayout)) {
    const node = span("diff", compactText(value, context.layout, path));
    node.title = `${where} differs`;
    return [node];
  }
  if (kind === "dict") return renderDict(value, isDict(other) ? other : undefined, context, path, depth);
  if (kind === "list" || kind === "tuple") {
    const peer = Array.isArray(other) && other.length === value.length ? other : undefined;
    if (mark && peer === undefined) {
      const node = span("diff", compactText(value, context.layout, path));
      node.title = `${where}: ${value.length} items, the other has ${Array.isArray(other) ? other.length : "none"}`;
      return [node];
    }
    return renderList(value, peer, kind, context, path, depth);
  }
  return renderLeaf(value, mark ? other : undefined, context, path);
}

function inlineFits(value, context, path, depth) {
  return compactText(value, context.layout, path).length + depth * 2 <= INLINE_WIDTH;
}

function renderDict(value, other, context, path, depth) {
  const keys = sortedKeys(value, context.layout, path);
  const inline = inlineFits(value, context, path, depth);
  const parts = [span(null, "{")];
  keys.forEach((key, i) => {
    parts.push(span(null, inline ? (i ? ", " : "") : `${i ? "," : ""}\n${"  ".repeat(depth + 1)}`));
    const childPath = [...path, key];
    const missingInOther = context.mark && other !== undefined && !(key in other);
    const keySpan = span(missingInOther ? "key diff" : "key", quote(key));
    if (missingInOther) keySpan.title = `${formatPath(childPath, context.rootNames)} is only on this side`;
    parts.push(keySpan, span(null, ": "));
    if (missingInOther) parts.push(span("diff", compactText(value[key], context.layout, childPath)));
    else parts.push(...renderNode(value[key], other?.[key], context, childPath, depth + 1));
  });
  parts.push(span(null, inline || keys.length === 0 ? "}" : `\n${"  ".repeat(depth)}}`));
  return parts;
}

function renderList(value, other, kind, context, path, depth) {
  const inline = inlineFits(value, context, path, depth);
  const [open, close] = kind === "tuple" ? ["(", value.length === 1 ? ",)" : ")"] : ["[", "]"];
  const parts = [span(null, open)];
  value.forEach((item, i) => {
    parts.push(span(null, inline ? (i ? ", " : "") : `${i ? "," : ""}\n${"  ".repeat(depth + 1)}`));
    parts.push(...renderNode(item, other?.[i], context, [...path, i], depth + 1));
  });
  parts.push(span(null, inline ? close : `\n${"  ".repeat(depth)}${close}`));
  return parts;
}

function renderLeaf(value, other, context, path) {
  const leaf = span("leaf");
  const where = formatPath(path, context.rootNames);
  leaf.dataset.path = where;
  const dtype = dtypeAt(path, context.layout);
  const otherDtype = other !== undefined ? dtypeAt(path, context.otherLayout) : null;
  const diff = other !== undefined ? leafDiff(value, other, context.tol) : null;
  const dtypeDiffers = other !== undefined && dtype !== otherDtype;
  if (diff?.differs || dtypeDiffers) {
    leaf.classList.add("diff");
    leaf.title = dtypeDiffers ? `${where}: dtype ${dtype}, the other ${otherDtype}` : `${where} differs`;
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
    const text = formatNumber(item, dtype);
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
  if (!dtype || context.layout?.untagged?.has(pathKey(path))) return [leaf];
  // The leaf's dtype beside it (JSON cannot say bfloat16); marked when the other side's differs.
  const tag = span(dtypeDiffers ? "dtype diff" : "dtype", dtype);
  return [leaf, span(null, " "), tag];
}
