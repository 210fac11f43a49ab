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

test("the stream's first status says where a queued submission stands, as GET does", () => {
  const first = {
    status: "queued",
    waiting: { ahead: 1, reason: "queue", estimate_s: 9, message: "Queued behind 1 other submission (about 9 s)." },
  };
  assert.equal(statusText(first), "Queued behind 1 other submission (about 9 s).");
  assert.equal(statusText({ status: "queued", waiting: {} }), "Queued: waiting for the judge…");
});

test("grading progress counts the cases, and says the hidden ones come together", () => {
  const running = { status: "running", attempt: 1, cases: 30, public: 3 };
  assert.equal(statusText(running), "Grading: 0 of 30 cases graded…");
  assert.equal(gradedText(2, running), "Grading: 2 of 30 cases graded…");
  assert.equal(
    gradedText(3, running),
    "Grading: 3 of 30 cases graded; the hidden cases are being graded, their verdicts come together at the end (27 to go)…",
  );
  assert.equal(gradedText(30, running), "Grading: 30 of 30 cases graded…");
  const allHidden = { status: "running", cases: 2, public: 0 };
  assert.equal(
    statusText(allHidden),
    "Grading: 0 of 2 cases graded; the hidden cases are being graded, their verdicts come together at the end (2 to go)…",
  );
  assert.equal(gradedText(1, { cases: 1, public: 1 }), "Grading: 1 of 1 case graded…");
});
