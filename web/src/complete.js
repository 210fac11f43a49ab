// Completion of jax, jnp, lax and jax.tree names with their signatures, from web/src/jax-names.json (made
// from the locked jax by web/jax_names.py, bundled into the editor's chunk: nothing is fetched at run
// time). A completion opens after a dot that follows one of these modules, or with Ctrl+Space.
import data from "./jax-names.json" with { type: "json" };

/** The module each written prefix names (NumPy's `np` is not JAX and gets no completions). */
const ALIASES = {
  jax: "jax",
  jnp: "jnp",
  "jax.numpy": "jnp",
  lax: "lax",
  "jax.lax": "lax",
  "jax.tree": "jax.tree",
  "jax.random": "jax.random",
  "jax.nn": "jax.nn",
};

export const JAX_VERSION = data.jax_version;

/** The completion options for `module` (as written: `jnp`, `jax.numpy`, ...), or null. */
export function optionsFor(module) {
  const key = ALIASES[module];
  return key ? data.modules[key] : null;
}

/** `{module, from, prefix}` for the dotted name ending at `before` (the line up to the cursor), or null. */
export function dottedBefore(before) {
  const match = /((?:[A-Za-z_][A-Za-z0-9_]*\.)+)([A-Za-z_][A-Za-z0-9_]*)?$/.exec(before);
  if (!match) return null;
  const module = match[1].slice(0, -1);
  const prefix = match[2] ?? "";
  return { module, prefix, from: before.length - prefix.length };
}

/** A CodeMirror completion source over these names. */
export function jaxCompletions(context) {
  const line = context.state.doc.lineAt(context.pos);
  const before = line.text.slice(0, context.pos - line.from);
  const found = dottedBefore(before);
  if (!found) return null;
  const options = optionsFor(found.module);
  if (!options) return null;
  if (!found.prefix && !context.explicit && !before.endsWith(".")) return null;
  return {
    from: line.from + found.from,
    options: options.map((item) => ({
      label: item.label,
      type: item.type === "constant" ? "constant" : item.type,
      detail: item.detail,
      apply: item.label,
    })),
    validFor: /^[A-Za-z0-9_]*$/,
  };
}
