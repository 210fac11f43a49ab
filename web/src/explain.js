// Teach from an error message: find the user's line, and for a tracing error say why it happened under
// jax.jit and what to write instead. The explanations themselves are <template>s in problem.html.

/** `{line, source}` from a message that starts "line N: `source`", or null. */
export function userLine(message) {
  const match = /^line (\d+):(?: `([^`\n]*)`)?/m.exec(message ?? "");
  return match ? { line: Number(match[1]), source: match[2] ?? null } : null;
}

/**
 * Which tracing rule a trace_error message is about: "bool" (Python control flow on a traced value),
 * "concrete" (float()/int()/a shape from a traced value), "numpy" (numpy on a tracer), or null.
 */
export function tracingRule(message) {
  const text = message ?? "";
  if (/TracerBoolConversionError|needs a concrete True\/False|boolean conversion/.test(text)) return "bool";
  if (/TracerArrayConversionError|numpy/i.test(text)) return "numpy";
  if (/ConcretizationTypeError|TracerIntegerConversionError|concrete value|float\(\)|int\(\)/.test(text)) {
    return "concrete";
  }
  return null;
}

/**
 * The condition of a Python `if`/`elif`/`while` line (`if norm > max_norm:` gives `norm > max_norm`), so
 * that the explanation can show the user's own condition in jnp.where and jax.lax.cond; null otherwise.
 */
export function conditionOf(source) {
  const match = /^\s*(?:if|elif|while)\s+(.+?)\s*:\s*(?:#.*)?$/.exec(source ?? "");
  return match ? match[1] : null;
}
