// Completion of the names of jax, jax.numpy, jax.lax, jax.random, jax.tree and jax.nn with their
// signatures, from web/src/jax-names.json (made from the locked jax by web/jax_names.py, bundled into the
// editor's chunk). A completion opens after a dot that follows one of these modules as the code names it
// (`jnp.`, `jax.numpy.`, `jr.` after `import jax.random as jr`: web/src/docs.js reads the imports), or
// with Ctrl+Space. Each option's documentation panel (its `info`) comes from the caller: web/src/hover.js
// fetches the docs index on the first one.
import data from "./jax-names.json" with { type: "json" };
import { aliasesIn, moduleNamed } from "./docs.js";

export const JAX_VERSION = data.jax_version;

/** The completion options of the module `written` names (`jnp`, `jax.numpy`, `jr`...) under `aliases`. */
export function optionsFor(written, aliases = aliasesIn("")) {
  const module = moduleNamed(written, aliases);
  return module ? { module, options: data.modules[module] } : null;
}

/** `{module, from, prefix}` for the dotted name ending at `before` (the line up to the cursor), or null. */
export function dottedBefore(before) {
  const match = /((?:[A-Za-z_][A-Za-z0-9_]*\.)+)([A-Za-z_][A-Za-z0-9_]*)?$/.exec(before);
  if (!match) return null;
  const module = match[1].slice(0, -1);
  const prefix = match[2] ?? "";
  return { module, prefix, from: before.length - prefix.length };
}

/**
 * A CodeMirror completion source over these names; `describe(path)` gives the documentation panel of
 * option `path` (`jax.numpy.minimum`): a DOM node, a promise of one, or null (no panel).
 */
export function jaxCompletions(describe = null) {
  return (context) => {
    const line = context.state.doc.lineAt(context.pos);
    const before = line.text.slice(0, context.pos - line.from);
    const found = dottedBefore(before);
    if (!found) return null;
    const named = optionsFor(found.module, aliasesIn(context.state.doc.toString()));
    if (!named) return null;
    if (!found.prefix && !context.explicit && !before.endsWith(".")) return null;
    return {
      from: line.from + found.from,
      options: named.options.map((item) => ({
        label: item.label,
        type: item.type,
        detail: item.detail,
        apply: item.label,
        ...(describe ? { info: () => describe(`${named.module}.${item.label}`) } : {}),
      })),
      validFor: /^[A-Za-z0-9_]*$/,
    };
  };
}
