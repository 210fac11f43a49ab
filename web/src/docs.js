// Which JAX name a piece of code means, and its help as the editor shows it. Pure functions (no DOM, no
// fetch): web/src/hover.js puts them on screen, web/src/complete.js uses the same aliases.
//
// The learner's own imports decide what a prefix names: `import jax.numpy as jnp`, `from jax import lax`,
// `import jax.random as jr`, `from jax.numpy import where`... Without an import, `jax`, `jnp` and `lax`
// name what they name in every JAX program (the editor helps before the import is written).

/** The modules the editor helps with (web/jax_names.py writes their names and docs). */
export const MODULES = ["jax", "jax.numpy", "jax.lax", "jax.random", "jax.tree", "jax.nn"];

/** What a name means before any import says otherwise. */
const DEFAULT_ALIASES = { jax: "jax", jnp: "jax.numpy", lax: "jax.lax" };

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const DOTTED = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * The names `code`'s imports bind, each to the dotted path it stands for ("jr" -> "jax.random",
 * "where" -> "jax.numpy.where"), over the defaults; a name an import binds to something not in jax maps
 * to null (`import numpy as jnp` is not jax.numpy).
 */
export function aliasesIn(code) {
  const aliases = { ...DEFAULT_ALIASES };
  // A parenthesised `from x import (a,\n b)` is read as one line; comments are dropped first.
  const text = code.replace(/#.*$/gm, "").replace(/\(([^()]*)\)/g, (all, inner) => inner.replace(/\n/g, " "));
  for (const raw of text.split(/\n|;/)) {
    const line = raw.trim().replace(/\\$/, "");
    let match = /^import\s+(.+)$/.exec(line);
    if (match) {
      for (const part of match[1].split(",")) {
        const [target, alias] = part.trim().split(/\s+as\s+/);
        if (!DOTTED.test(target ?? "")) continue;
        if (alias !== undefined) {
          if (IDENTIFIER.test(alias)) aliases[alias] = isJax(target) ? target : null;
        } else {
          const head = target.split(".")[0];
          aliases[head] = head === "jax" ? "jax" : null; // `import jax.numpy` binds `jax`
        }
      }
      continue;
    }
    match = /^from\s+([A-Za-z_][\w.]*)\s+import\s+(.+)$/.exec(line);
    if (match) {
      const source = match[1];
      for (const part of match[2].split(",")) {
        const [name, alias] = part.trim().split(/\s+as\s+/);
        if (!IDENTIFIER.test(name ?? "")) continue;
        const bound = alias ?? name;
        if (IDENTIFIER.test(bound)) aliases[bound] = isJax(source) ? `${source}.${name}` : null;
      }
    }
  }
  return aliases;
}

function isJax(path) {
  return path === "jax" || path.startsWith("jax.");
}

/** The dotted path `written` ("jr.split", "jax.numpy.where") stands for under `aliases`, or null. */
export function resolve(written, aliases) {
  const [head, ...rest] = written.split(".");
  const base = Object.hasOwn(aliases, head) ? aliases[head] : null;
  if (!base) return null;
  return [base, ...rest].join(".");
}

/** The module of MODULES that `written` names (`jnp`, `jax.numpy`, `jr`...), or null. */
export function moduleNamed(written, aliases) {
  const path = resolve(written, aliases);
  return path && MODULES.includes(path) ? path : null;
}

/**
 * The dotted name at column `column` of `line` (the pointer is on one of its characters): the name up to
 * the end of the word under the pointer, so `random` in `jax.random.split` is `jax.random`. Returns
 * `{text, from, to}` (columns), or null when the pointer is not on a name.
 */
export function dottedAt(line, column) {
  const word = /[A-Za-z0-9_]/;
  if (column < 0 || column >= line.length || !word.test(line[column])) return null;
  let to = column;
  while (to < line.length && word.test(line[to])) to += 1;
  let from = column;
  while (from > 0 && word.test(line[from - 1])) from -= 1;
  // Further left across `.name` links (no spaces: `x . y` is not a dotted name as written).
  while (from > 1 && line[from - 1] === ".") {
    let start = from - 1;
    while (start > 0 && word.test(line[start - 1])) start -= 1;
    if (start === from - 1) break;
    from = start;
  }
  const text = line.slice(from, to);
  if (!DOTTED.test(text) || (from > 0 && line[from - 1] === ".")) return null;
  return { text, from, to };
}

/**
 * The help for dotted path `path` from the docs index (web/src/jax-docs.json: {docs: {path: {sig, doc,
 * params}}}), or null: {name, signature, summary, params: [{name, text}]}. `name` is the path as a reader
 * knows it (`jax.numpy.minimum`), `signature` the call as written (`jax.numpy.minimum(x, y, /)`).
 */
export function helpFor(path, index) {
  const entry = path && index?.docs && Object.hasOwn(index.docs, path) ? index.docs[path] : null;
  if (!entry) return null;
  return {
    name: path,
    signature: entry.sig ? `${path}${entry.sig}` : path,
    summary: entry.doc ?? "",
    params: (entry.params ?? []).map(([name, text]) => ({ name, text })),
  };
}

/** `text` as pieces of prose and code: "Splits `key` in two" -> [{text}, {code: "key"}, {text}]. */
export function codePieces(text) {
  const pieces = [];
  const pattern = /`([^`]+)`/g;
  let at = 0;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    if (match.index > at) pieces.push({ text: text.slice(at, match.index) });
    pieces.push({ code: match[1] });
    at = match.index + match[0].length;
  }
  if (at < text.length) pieces.push({ text: text.slice(at) });
  return pieces;
}
