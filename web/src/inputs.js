// The Run panel's input boxes: how their text becomes the request's `inputs`. (The server writes the text
// they are filled with: judge/web/run_panel.py.) The tolerant JSON parser that locates a syntax error is
// loaded only when a box holds malformed JSON.

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
