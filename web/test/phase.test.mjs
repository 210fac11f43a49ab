// A Run's phase in words, and the judge's warm-up status as a sentence a learner reads.
import assert from "node:assert/strict";
import { test } from "node:test";

import { phaseText, warmupText } from "../src/phase.js";

test("the warm-up status is a sentence: what is starting and for how long, no pool names", () => {
  const detail =
    "warm sandbox workers are starting (tracers: 2 starting (the oldest for 3 s, 1.2 s of CPU); " +
    "executors: 1 starting (the oldest for 3 s); secrets: 1 waiting for a place at the host's start gate (2 at once))";
  const text = warmupText(detail, 8.6);
  assert.equal(
    text,
    "The judge is still warming up: 3 sandbox workers starting, 1 more waiting their turn (8 s so far). " +
      "Your Run starts as soon as it is ready.",
  );
  for (const raw of ["tracers", "executors", "secrets", "gate", "oldest", "CPU", "(the"]) {
    assert.ok(!text.includes(raw), `${raw} in ${text}`);
  }
  assert.equal(
    warmupText("warm sandbox workers are starting (tracers: 1 starting (the oldest for 0 s))"),
    "The judge is still warming up: 1 sandbox worker starting. Your Run starts as soon as it is ready.",
  );
  assert.equal(
    warmupText("warm sandbox workers are starting (tracers: 9 waiting for a place at the host's start gate (2 at once))"),
    "The judge is still warming up: 9 sandbox workers waiting their turn to start. Your Run starts as soon as it is ready.",
  );
  assert.equal(
    warmupText("warm sandbox workers are starting", 2),
    "The judge is still warming up, starting its sandbox (2 s so far). Your Run starts as soon as it is ready.",
  );
});

test("a failed start says the sandbox tries again, without the error's text", () => {
  const retry = warmupText(
    "warm sandbox workers are starting (executors: next start in 4 s after 2 failed start(s): OSError: [Errno 12])",
    12,
  );
  assert.equal(
    retry,
    "The judge's sandbox failed to start; it tries again in 4 s (12 s so far). Your Run starts as soon as it is ready.",
  );
  const failed = warmupText("no warm sandbox pair is ready (RuntimeError: cgroup)");
  assert.equal(failed, "The judge's sandbox failed to start and is trying again. Your Run starts as soon as it is ready.");
});

test("each phase in words with its count", () => {
  assert.equal(phaseText({ phase: "tracing", traced: 0, programs: 3 }), "Tracing 1 of 3…");
  assert.equal(phaseText({ phase: "compiling", compiled: 3, programs: 3 }), "Compiling 3 of 3…");
  assert.equal(phaseText({ phase: "running", ran: 1, cases: 4 }), "Running case 2 of 4…");
  assert.match(phaseText({ phase: "waiting", detail: "" }, 5), /^The judge is still warming up, starting its sandbox \(5 s so far\)/);
});
