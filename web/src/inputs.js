// The Run panel's input boxes: their text, and how it becomes the request's `inputs`. The tolerant JSON
// parser that locates a syntax error is loaded only when a box holds malformed JSON.
import { isDict } from "./tree.js";

/** Indented JSON for a box: leaves (numbers, arrays of numbers) stay on one line, nodes open up. */
/** One-line JSON with a space after each comma and colon: `{"w": [3, 0], "b": 4}`. */
export function compactJSON(value) {
  if (isDict(value)) {
    return `{${Object.keys(value).map((k) => `${JSON.stringify(k)}: ${compactJSON(value[k])}`).join(", ")}}`;
  }
  if (Array.isArray(value)) return `[${value.map(compactJSON).join(", ")}]`;
  return JSON.stringify(value) ?? "null";
}

export function formatInput(value, depth = 0) {
  const compact = compactJSON(value);
  if (compact.length + depth * 2 <= 60) return compact;
  const pad = "  ".repeat(depth + 1);
  const end = "  ".repeat(depth);
  if (isDict(value)) {
    const items = Object.keys(value).map((k) => `${pad}${JSON.stringify(k)}: ${formatInput(value[k], depth + 1)}`);
    return items.length ? `{\n${items.join(",\n")}\n${end}}` : "{}";
  }
  if (Array.isArray(value) && value.some((item) => isDict(item) || Array.isArray(item))) {
    return `[\n${value.map((item) => pad + formatInput(item, depth + 1)).join(",\n")}\n${end}]`;
  }
  return compact;
}

/**
 * Parse every box; resolves to `{inputs}` when all hold JSON, else `{errors}` mapping an argument name to
 * a message (the box is empty, or the JSON is malformed and where).
 */
export async function parseInputs(texts) {
  const inputs = {};
  const errors = {};
  for (const [name, text] of Object.entries(texts)) {
    if (!text.trim()) {
      errors[name] = `${name}: empty; type a JSON value`;
      continue;
    }
    try {
      inputs[name] = JSON.parse(text);
    } catch (error) {
      errors[name] = `${name}: not valid JSON: ${await jsonErrorText(error, text)}`;
    }
  }
  return Object.keys(errors).length ? { errors } : { inputs };
}

// JSON.parse says little about where the text is wrong; a tolerant parser finds the first error's offset.
const READABLE = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "malformed number",
  PropertyNameExpected: "expected a property name in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: "expected ':'",
  CommaExpected: "expected ','",
  CloseBraceExpected: "expected '}'",
  CloseBracketExpected: "expected ']'",
  EndOfFileExpected: "unexpected text after the value",
  InvalidCommentToken: "comments are not JSON",
  UnexpectedEndOfComment: "comments are not JSON",
  UnexpectedEndOfString: "unterminated string",
  UnexpectedEndOfNumber: "malformed number",
  InvalidUnicode: "invalid unicode escape",
  InvalidEscapeCharacter: "invalid escape character",
  InvalidCharacter: "invalid character in a string",
};

async function jsonErrorText(error, text) {
  const { parse: parseLenient, printParseErrorCode } = await import("jsonc-parser");
  const errors = [];
  parseLenient(text, errors, { disallowComments: true, allowTrailingComma: false });
  if (errors.length === 0) return String(error.message ?? error);
  const { error: code, offset } = errors[0];
  const name = printParseErrorCode(code);
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return `${READABLE[name] ?? name} at line ${line} column ${column}`;
}
