// The Submit status line says why a submission waits, in words, never its id.
import assert from "node:assert/strict";
import { test } from "node:test";

import { gradedText, queuedText, statusText } from "../src/waiting.js";

test("a queued submission shows the judge's sentence for why it waits", () => {
  const submission = {
    id: "0b4c6f3e-1111-2222-3333-444455556666",
    status: "queued",
    waiting: { ahead: 3, reason: "queue", estimate_s: 12, message: "Queued behind 3 other submissions (about 12 s)." },
  };
  assert.equal(queuedText(submission), "Queued behind 3 other submissions (about 12 s).");
  const reserve = { waiting: { reason: "run_reserve", message: "Queued: the judge keeps a sandbox free for Runs." } };
  assert.equal(queuedText(reserve), "Queued: the judge keeps a sandbox free for Runs.");
});

test("without a waiting sentence the line is plain and holds no id", () => {
  for (const submission of [null, {}, { id: "0b4c6f3e", status: "queued" }, { waiting: { message: "" } }]) {
    const text = queuedText(submission);
    assert.equal(text, "Queued: waiting for the judge…");
    assert.ok(!text.includes("0b4c6f3e"));
  }
});

test("stream statuses in words", () => {
  assert.equal(statusText({ status: "running", attempt: 1 }), "Grading…");
  assert.equal(
    statusText({ status: "queued", waiting: "capacity", reason: "the judge is busy: no sandbox worker was free" }),
    "The judge is busy: no sandbox worker was free.",
  );
  assert.equal(statusText({ status: "queued" }), "Queued: waiting for the judge…");
  assert.equal(statusText({ status: "done" }), null);
  assert.equal(gradedText(1), "1 case graded…");
  assert.equal(gradedText(4), "4 cases graded…");
});
