// Keys and strings from a submission's output are shown with invisible and reordering characters
// escaped, as the judge's text report shows them (issue 22, point 7).
import assert from "node:assert/strict";
import { test } from "node:test";

import { compactText, formatPath, quote } from "../src/tree.js";

test("bidirectional overrides, isolates and other invisible characters are shown as escapes", () => {
  assert.equal(quote("\u202eTPECCA"), '"\\u202eTPECCA"');
  assert.equal(quote("a\u2066b\u2069"), '"a\\u2066b\\u2069"');
  assert.equal(quote("\u200f\u061c\ufeff\u0085"), '"\\u200f\\u061c\\ufeff\\u0085"');
  assert.equal(quote("\ud800"), '"\\ud800"');
  assert.equal(quote("plain é ü"), '"plain é ü"');
});

test("paths and compact trees use the escaped keys", () => {
  assert.equal(formatPath(["\u202ew"]), 'output["\\u202ew"]');
  assert.equal(compactText({ "\u2066k": 1 }), '{"\\u2066k": 1.0}');
});
