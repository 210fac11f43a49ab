// A Run's phase in words, and the judge's warm-up (its fields, not its status string) as a sentence a learner reads.
import assert from "node:assert/strict";
import { test } from "node:test";

import { phaseText, warmupText } from "../src/phase.js";

test("the warm-up is a sentence from its fields: what is starting and for how long", () => {
  const text = warmupText({ starting: 3, queued: 1, failed_starts: 0, retry_in_s: null, start_failed: false }, 8.6);
  assert.equal(
    text,
    "The judge is still warming up: 3 sandbox workers starting, 1 more waiting their turn (8 s so far). " +
      "Your Run starts as soon as it is ready.",
  );
  assert.equal(
    warmupText({ starting: 1, queued: 0 }),
    "The judge is still warming up: 1 sandbox worker starting. Your Run starts as soon as it is ready.",
  );
  assert.equal(
    warmupText({ starting: 0, queued: 9 }),
    "The judge is still warming up: 9 sandbox workers waiting their turn to start. Your Run starts as soon as it is ready.",
  );
  assert.equal(
    warmupText({ starting: 0, queued: 0 }, 2),
    "The judge is still warming up, starting its sandbox (2 s so far). Your Run starts as soon as it is ready.",
  );
});

test("the queue ahead and the estimate are said when known", () => {
  assert.equal(
    warmupText({ starting: 0, queued: 2, ahead: 5, estimate_s: 40 }, 3),
    "The judge is still warming up: 2 sandbox workers waiting their turn to start behind 5 starts of other " +
      "judges on this machine (3 s so far). Your Run starts as soon as it is ready, in about 40 s.",
  );
  assert.equal(
    warmupText({ starting: 1, queued: 0, ahead: 0, estimate_s: 1 }),
    "The judge is still warming up: 1 sandbox worker starting. Your Run starts as soon as it is ready, in about 1 s.",
  );
});

test("the sentence reads the fields, never the operator's wording in detail", () => {
  const fields = { starting: 2, queued: 0, retry_in_s: null, start_failed: false };
  const expected = "The judge is still warming up: 2 sandbox workers starting. Your Run starts as soon as it is ready.";
  for (const detail of [
    "warm sandbox workers are starting (tracers: 2 starting (the oldest for 3 s))",
    "tracers: 7 starting; executors: next start in 4 s after 2 failed start(s): OSError",
    "something reworded entirely",
    "",
  ]) {
    assert.equal(phaseText({ phase: "waiting", detail, warmup: fields }), expected);
  }
});

test("a failed start says the sandbox tries again, without the error's text", () => {
  const retry = warmupText({ starting: 1, queued: 0, failed_starts: 2, retry_in_s: 4, start_failed: false }, 12);
  assert.equal(
    retry,
    "The judge's sandbox failed to start; it tries again in 4 s (12 s so far). Your Run starts as soon as it is ready.",
  );
  const failed = warmupText({ starting: 0, queued: 0, retry_in_s: null, start_failed: true });
  assert.equal(failed, "The judge's sandbox failed to start and is trying again. Your Run starts as soon as it is ready.");
});

test("missing or malformed fields fall back to the plain warm-up sentence", () => {
  const plain = "The judge is still warming up, starting its sandbox. Your Run starts as soon as it is ready.";
  for (const warmup of [undefined, null, {}, { starting: -1, queued: "3", retry_in_s: 0, start_failed: "yes" }]) {
    assert.equal(warmupText(warmup), plain, JSON.stringify(warmup));
  }
  assert.equal(phaseText({ phase: "waiting", detail: "warm sandbox workers are starting (tracers: 2 starting)" }), plain);
});

test("each phase in words with its count", () => {
  assert.equal(phaseText({ phase: "tracing", traced: 0, programs: 3 }), "Tracing 1 of 3…");
  assert.equal(phaseText({ phase: "compiling", compiled: 3, programs: 3 }), "Compiling 3 of 3…");
  assert.equal(phaseText({ phase: "running", ran: 1, cases: 4 }), "Running case 2 of 4…");
  assert.match(
    phaseText({ phase: "waiting", detail: "", warmup: { starting: 0, queued: 0, waited_s: 5 } }, 5),
    /^The judge is still warming up, starting its sandbox \(5 s so far\)/,
  );
});
