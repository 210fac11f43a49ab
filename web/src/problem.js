// The problem page: hints, the editor, the Run panel, and Submit with live progress.
//
// The server renders what needs no script (statement, hints, signature, the starter code in a plain
// <textarea>, and the Run panel: one box per argument prefilled with the first example, the examples to fill
// them with), from the same problem body GET /api/v1/problems/{slug} returns (judge/web/run_panel.py). This
// entry stays small: it wires the textarea as an editor and the Run panel's controls, and marks the page
// usable (`judge:ready`) without waiting for any request. Then it loads CodeMirror (web/src/editor.js, a
// chunk of its own) and hands the textarea over to it (`judge:editor`, body[data-editor=codemirror]). Runs
// and submissions go through the REST API (/api/v1/problems/{slug}/run, /api/v1/submissions).
import { api, ApiError, postEvents } from "./api.js";
import { CodeBox } from "./code.js";
import { el, replace } from "./dom.js";
import { userLine } from "./explain.js";
import { parseInputs } from "./inputs.js";
import { phaseText } from "./phase.js";
import {
  caseTitle,
  renderPrints,
  renderProgressRow,
  renderResultMessage,
  renderRun,
  renderSummary,
  verdictSentence,
} from "./results.js";
import { startAccount } from "./account.js";
import {
  addSubmission,
  isSolved,
  keptWhere,
  loadCode,
  loadLastRun,
  loadRunInput,
  loadSubmissions,
  saveCode,
  saveLastRun,
  saveRunInput,
  saveVerdict,
} from "./storage.js";
import { watchScrollers } from "./scrollers.js";
import { wireSplitter, wireTabs } from "./tabs.js";
import { verdictBadge } from "./verdicts.js";
import { gradedText, queuedText, statusText } from "./waiting.js";

const SAVE_DELAY_MS = 300;
const POLL_WAIT_S = 20;
/** How often the Submit status asks where a queued submission stands. */
const QUEUE_POLL_MS = 2000;

const $ = (id) => document.getElementById(id);
const slug = document.body.dataset.slug;
const runUrl = `/api/v1/problems/${encodeURIComponent(slug)}/run/events`;
/** A tuple output's element names, which the judge's messages use as the roots of leaf paths. */
const rootNames = JSON.parse(document.body.dataset.outputNames || "[]");
/** Each argument's kind and leaf dtype, each example's dtype: to show a case's input as the function gets it. */
const inputInfo = JSON.parse(document.body.dataset.inputLayout || "{}");

/** Select a console tab ("run", "results", "output", "submissions"); set by wireLayout. */
let showConsole = () => {};
/** On a phone: show the statement or the code ("problem", "code"); set by wireLayout. */
let showView = () => {};

const state = {
  args: [], // the argument names, in the order of the boxes
  code: null,
  lastRunCode: null,
  running: false,
  submitting: false,
  saveTimer: null,
};

function announce(text, kind = "info") {
  const status = $("status");
  status.textContent = text;
  status.dataset.kind = kind;
}

// --- hints -----------------------------------------------------------------------------------------------

/** The server renders the hints hidden; each click shows the next one. */
function wireHints() {
  if (!$("hints")) return; // a problem without hints has no section
  const items = [...$("hint-list").querySelectorAll("li")];
  const button = $("next-hint");
  let shown = items.filter((item) => !item.hidden).length;
  const update = () => {
    button.hidden = shown >= items.length;
    button.textContent = `Show hint ${shown + 1} of ${items.length}`;
  };
  button.addEventListener("click", () => {
    if (shown >= items.length) return;
    const item = items[shown];
    item.hidden = false;
    shown += 1;
    update();
    item.focus();
  });
  update();
}

// --- editor -------------------------------------------------------------------------------------------

function setUpEditor() {
  const textarea = $("code");
  const starter = textarea.defaultValue;
  const saved = loadCode(slug);
  // Restore what this browser kept, unless the learner typed before this script ran (then keep that).
  const typed = textarea.value !== starter;
  if (saved !== null && !typed) textarea.value = saved;
  state.code = new CodeBox(textarea, {
    onChange: codeChanged,
    keys: [
      { key: "Mod-Enter", run: () => (run(), true) },
      { key: "Mod-Shift-Enter", run: () => (submit(), true) },
    ],
  });
  if (typed) codeChanged(textarea.value);
  else $("save-state").textContent = saved === null ? "Starter code" : `Restored from ${keptWhere()}`;
  $("reset").addEventListener("click", () => {
    const before = state.code.get();
    if (before === starter) return;
    state.code.focus();
    state.code.set(starter);
    saveCode(slug, null);
    $("save-state").textContent = "Starter code restored (Ctrl+Z undoes)";
    // A visible undo as well: one click brings the code back.
    const undo = $("undo-reset");
    undo.hidden = false;
    undo.onclick = () => {
      undo.hidden = true;
      state.code.focus();
      state.code.set(before);
      $("save-state").textContent = "Your code is back";
    };
  });
}

function codeChanged(code) {
  clearTimeout(state.saveTimer);
  state.saveTimer = setTimeout(() => {
    state.saveTimer = null;
    const kept = saveCode(slug, code);
    $("save-state").textContent = kept ? `Saved in ${keptWhere()}` : "Not saved: this browser refused storage";
  }, SAVE_DELAY_MS);
  updateSubmit();
}

/** Save at once what the save delay still holds (Run and Submit keep the code they grade). */
function saveNow() {
  if (!state.code || state.saveTimer === null) return;
  clearTimeout(state.saveTimer);
  state.saveTimer = null;
  saveCode(slug, state.code.get());
}

// Signed in, a save the judge refused or never got is said where the saves are (account.js).
document.addEventListener("judge:account-saved", (event) => {
  if (!event.detail.ok) $("save-state").textContent = `Kept in this browser only: ${event.detail.message}`;
});

// Keep the last keystrokes when the page is left before the save delay ran out.
window.addEventListener("pagehide", () => {
  if (state.code && state.saveTimer !== null) saveCode(slug, state.code.get(), { keepalive: true });
});

/** Load CodeMirror and hand the textarea over to it; the page works on without it if that fails. */
async function upgradeEditor() {
  try {
    const editor = await import("./editor.js");
    await state.code.upgrade(editor);
  } catch (error) {
    // The plain textarea stays: still an editor, still saved, still runs and submits.
    $("save-state").textContent = "Plain editor (the code editor did not load)";
    console.warn("the code editor did not load:", error);
    return;
  }
  document.body.dataset.editor = "codemirror";
  performance.mark("judge:editor");
}

// --- Run panel inputs --------------------------------------------------------------------------------

function boxId(name) {
  return `arg-${name}`;
}

/** A function argument's box is a list of its choices; its value is the chosen name. */
function isChoice(box) {
  return box.tagName === "SELECT";
}

/** Whether the learner changed a box from what the server rendered in it. */
function changed(box) {
  if (isChoice(box)) return [...box.options].some((option) => option.selected !== option.defaultSelected);
  return box.value !== box.defaultValue;
}

/** Wire the server-rendered boxes: typing in one switches to "my input" and clears its error; what the
 * learner leaves in the panel is kept for the next visit (keepInputs). */
function wireInputs() {
  state.args = [...$("inputs").querySelectorAll(".arg[data-arg]")].map((node) => node.dataset.arg);
  for (const name of state.args) {
    $(boxId(name)).addEventListener("input", () => {
      setMode("custom");
      showInputError(name, null);
      keepInputs();
    });
  }
  const dtype = $("run-dtype");
  if (dtype) {
    dtype.addEventListener("change", () => {
      showDtype();
      setMode("custom");
      keepInputs();
    });
  }
  const select = $("example-select");
  $("fill-example").addEventListener("click", () => {
    fillExample(select.selectedOptions[0]);
    keepInputs();
  });
  for (const radio of document.querySelectorAll("input[name=run-on]")) {
    radio.addEventListener("change", () => {
      setMode(radio.value);
      keepInputs();
    });
  }
}

function showDtype() {
  const dtype = $("run-dtype");
  if (!dtype) return;
  for (const node of document.querySelectorAll("[data-case-dtype]")) node.textContent = dtype.value;
}

function keepInputs() {
  const texts = Object.fromEntries(state.args.map((name) => [name, $(boxId(name)).value]));
  saveRunInput(slug, { mode: mode(), texts, dtype: $("run-dtype")?.value ?? null });
}

/** Put back the input kept from the last visit (a box or choice the problem no longer has is skipped);
 * returns the mode it was left in ("examples" when nothing was kept). */
function restoreInputs() {
  const kept = loadRunInput(slug);
  if (!kept) return "examples";
  const offers = (select, value) => [...select.options].some((option) => option.value === value);
  for (const name of state.args) {
    const box = $(boxId(name));
    const text = kept.texts[name];
    if (text === undefined || (isChoice(box) && !offers(box, text))) continue;
    box.value = text;
    if (!isChoice(box)) box.rows = Math.min(12, Math.max(2, text.split("\n").length));
  }
  const dtype = $("run-dtype");
  if (dtype && kept.dtype && offers(dtype, kept.dtype)) dtype.value = kept.dtype;
  return kept.mode;
}

/** Put an example's texts (the option's data-inputs: {argument: text}) in the boxes. */
function fillExample(option) {
  if (!option) return;
  const texts = JSON.parse(option.dataset.inputs);
  for (const name of state.args) {
    const box = $(boxId(name));
    if (isChoice(box)) {
      let chosen = null;
      try {
        chosen = JSON.parse(texts[name] ?? "null");
      } catch {
        chosen = null;
      }
      if (typeof chosen === "string") box.value = chosen;
    } else {
      box.value = texts[name] ?? "";
      box.rows = Math.min(12, Math.max(2, box.value.split("\n").length));
    }
    showInputError(name, null);
  }
  setMode("custom");
}

function mode() {
  return document.querySelector("input[name=run-on]:checked")?.value ?? "examples";
}

function setMode(value) {
  const radio = document.querySelector(`input[name=run-on][value=${value}]`);
  if (radio) radio.checked = true;
  $("run").textContent = value === "custom" ? "Run on my input" : "Run examples";
}

function showInputError(name, message) {
  const node = $(`${boxId(name)}-error`);
  if (!node) return false;
  node.hidden = !message;
  node.textContent = message ?? "";
  $(boxId(name)).setAttribute("aria-invalid", message ? "true" : "false");
  return true;
}

function clearInputErrors() {
  for (const name of state.args) showInputError(name, null);
}

/**
 * The argument a 422 body is about: the name its `argument` (else its `path`) starts with, so a
 * validator's `x rows (b)` or `x, w` is shown under the box of `x`.
 */
function inputErrorOf(body) {
  const error = body?.error ?? body;
  if (!error || typeof error !== "object") return null;
  const path = typeof error.path === "string" ? error.path : null;
  const named = typeof error.argument === "string" ? error.argument : (path ?? "");
  const argument = /^[A-Za-z_]\w*/.exec(named)?.[0];
  if (!argument) return null;
  return { argument, path, message: error.message ?? error.detail ?? "invalid input" };
}

// --- Run ----------------------------------------------------------------------------------------------

function setBusy(button, busy, text) {
  button.setAttribute("aria-busy", busy ? "true" : "false");
  if (text) button.textContent = text;
}

async function run() {
  if (state.running || !state.code) return;
  saveNow();
  const code = state.code.get();
  const body = { code };
  clearInputErrors();
  if (mode() === "custom") {
    const typed = state.args.filter((name) => !isChoice($(boxId(name))));
    const boxes = Object.fromEntries(typed.map((name) => [name, $(boxId(name)).value]));
    const parsed = await parseInputs(boxes);
    if (!parsed.errors) {
      for (const name of state.args) if (isChoice($(boxId(name)))) parsed.inputs[name] = $(boxId(name)).value;
    }
    if (parsed.errors) {
      for (const [name, message] of Object.entries(parsed.errors)) showInputError(name, message);
      clearRunResult();
      announce("Fix the input marked below its box, then run again.", "error");
      $(boxId(Object.keys(parsed.errors)[0])).focus();
      return;
    }
    body.inputs = parsed.inputs;
    const dtype = $("run-dtype");
    if (dtype) body.dtype = dtype.value;
  }
  state.running = true;
  const button = $("run");
  const label = button.textContent;
  setBusy(button, true, "Running…");
  button.disabled = true;
  announce("Running…");
  const controller = new AbortController();
  const cancel = $("cancel-run");
  cancel.hidden = false;
  cancel.onclick = () => controller.abort();
  showPhase({ phase: "sending" });
  try {
    const result = await runWithProgress(body, controller.signal);
    if (body.inputs && body.dtype) result.run_dtype = body.dtype; // kept with the result, for its input
    state.lastRunCode = code;
    showRunResult(result);
    saveLastRun(slug, result);
    announce(`Run finished. ${verdictSentence(result)}`, result.verdict === "accepted" ? "ok" : "error");
  } catch (error) {
    const input = error instanceof ApiError && error.status === 422 ? inputErrorOf(error.body) : null;
    if (error.name === "AbortError") {
      announce("Run cancelled: the judge stopped it.", "info");
    } else if (input && showInputError(input.argument, input.message)) {
      clearRunResult();
      announce("The judge rejected an input: see the message below its box.", "error");
      $(boxId(input.argument)).focus();
    } else {
      announce(`Run failed: ${error.message}`, "error");
    }
  } finally {
    state.running = false;
    button.disabled = false;
    const focused = cancel === document.activeElement;
    cancel.hidden = true;
    if (focused) button.focus(); // not lost with the hidden button
    showPhase(null);
    setBusy(button, false, label);
    updateSubmit();
  }
}

/** The Run through its event stream: each progress event shows its phase; resolves with the result. */
async function runWithProgress(body, signal) {
  let result = null;
  let failure = null;
  await postEvents(runUrl, {
    body,
    signal,
    onEvent: (kind, data) => {
      if (kind === "progress") showPhase(data);
      else if (kind === "result") result = data.result;
      else if (kind === "error") failure = new ApiError(data.status, data, null);
    },
  });
  if (failure) throw failure;
  if (!result) throw new ApiError(0, null, null); // the stream ended early: the judge went away
  return result;
}

/** Show the Run's phase (null: none); while the judge warms up, the seconds waited tick every second. */
let waitTimer = null;
function showPhase(progress) {
  const node = $("run-phase");
  clearInterval(waitTimer);
  waitTimer = null;
  node.hidden = !progress;
  node.textContent = progress ? phaseText(progress) : "";
  if (progress?.phase !== "waiting") delete node.dataset.waitingSince;
  if (!progress) return;
  node.dataset.phase = progress.phase;
  if (progress.phase === "waiting") {
    // From the judge's count of the seconds waited (the first event may come after a few), then ticking here.
    const waited = Number(progress.warmup?.waited_s) || 0;
    const since = node.dataset.waitingSince ? Number(node.dataset.waitingSince) : performance.now() - 1000 * waited;
    node.dataset.waitingSince = String(since);
    const tick = () => (node.textContent = phaseText(progress, (performance.now() - since) / 1000));
    tick();
    waitTimer = setInterval(tick, 1000);
  }
}

function showRunResult(result) {
  const options = { onShowLine: (line) => state.code.focusLine(line), rootNames, inputs: inputInfo, code: state.lastRunCode };
  const panel = $("run-results");
  replace(panel, ...renderRun(result, options));
  panel.hidden = false;
  showOutput(panel);
  markFirstLine(result);
  showConsole("results");
  showNewResult(panel);
}

/** Move a result's printed output into the Output tab, leaving a pointer to it in the results. */
function showOutput(panel) {
  const prints = panel.querySelector(".prints");
  const output = $("output");
  if (!prints) {
    replace(output, el("p", { class: "muted" }, "The last Run printed nothing."));
    return;
  }
  replace(output, prints);
  const lines = prints.querySelector("h3 .times")?.textContent ?? "";
  const go = el("button", { type: "button", class: "link-button" }, `Printed output (${lines}): see the Output tab`);
  go.addEventListener("click", () => showConsole("output", { focus: true }));
  panel.append(el("p", { class: "printed" }, go));
}

/** Bring a new result into view and give it the focus (its summary is what a screen reader reads). */
function showNewResult(panel) {
  panel.focus({ preventScroll: true });
  // After the editor's own scroll to a marked line, which CodeMirror makes in its next frame.
  requestAnimationFrame(() => revealInConsole(panel, "start"));
}

/**
 * Scroll `node` into view. In the console docked under the editor (a wide screen: the console's body
 * scrolls on its own) only the console scrolls, so the editor and its marked line stay in view; on a
 * phone, where the page scrolls as one column, the page does.
 */
function revealInConsole(node, block = "nearest") {
  const body = node.closest(".console-body");
  if (!body || getComputedStyle(body).overflowY === "visible") {
    node.scrollIntoView({ block });
    return;
  }
  const top = node.getBoundingClientRect().top - body.getBoundingClientRect().top;
  const bottom = node.getBoundingClientRect().bottom - body.getBoundingClientRect().bottom;
  if (block === "start" || top < 0) body.scrollTop += top;
  else if (bottom > 0) body.scrollTop += Math.min(bottom, top);
}

/** Results of an earlier Run no longer answer the current inputs once an input is rejected. */
function clearRunResult() {
  const panel = $("run-results");
  panel.replaceChildren();
  panel.hidden = true;
  showConsole("run");
}

/** The line (1-based) the result's first failing message names: a case's, else the whole result's. */
function firstErrorLine(result) {
  const failing = result.cases.find((item) => item.verdict !== "accepted" && userLine(item.message));
  if (failing) return userLine(failing.message).line;
  return result.verdict !== "accepted" ? (userLine(result.message)?.line ?? null) : null;
}

/** Mark in the editor the line named by the first failing message. */
function markFirstLine(result) {
  state.code.markErrorLine(firstErrorLine(result));
}

// --- Submit -------------------------------------------------------------------------------------------

function canSubmit() {
  return Boolean(state.code) && !state.submitting && state.lastRunCode === state.code.get();
}

function updateSubmit() {
  const button = $("submit");
  const ready = canSubmit();
  button.disabled = !ready;
  const why = $("submit-why");
  if (state.submitting) why.textContent = "Grading…";
  else if (ready) why.textContent = "Grades every public and hidden case.";
  else why.textContent = "Run your code first: Submit grades the code you last ran.";
}

async function submit() {
  if (!canSubmit()) {
    if (!state.submitting) announce("Run your code first: Submit grades the code you last ran.", "error");
    return;
  }
  saveNow();
  const code = state.code.get();
  state.submitting = true;
  updateSubmit();
  const panel = $("submission");
  const rows = el("ol", { class: "progress", "aria-label": "Cases graded so far" });
  const head = el("p", { class: "submission-status" }, "Sending…");
  parkNext();
  replace(panel, el("h2", {}, "Submission"), head, rows);
  panel.hidden = false;
  showConsole("submissions");
  revealInConsole(panel);
  announce("Submitting…");
  try {
    const created = await api("/api/v1/submissions", { method: "POST", body: { problem: slug, code } });
    tell(head, queuedText(created));
    announce(`Submitted. ${queuedText(created)}`);
    addSubmission(slug, created.id);
    const result = await follow(created.id, head, rows);
    finishSubmission(result, panel, head, rows);
    showHistory();
  } catch (error) {
    head.textContent = `Submit failed: ${error.message}`;
    announce(`Submit failed: ${error.message}`, "error");
  } finally {
    state.submitting = false;
    updateSubmit();
  }
}

/**
 * Say where a submission stands (queued and why, graded so far) in its panel's status line (`head`), and
 * beside the Submit button, where the eye is after clicking it, whichever console tab is shown.
 */
function tell(head, text) {
  head.textContent = text;
  if (state.submitting) $("submit-why").textContent = text;
}

/**
 * Follow a submission: one row per case as its event arrives, then resolve with the final result. If the
 * stream breaks before the result, fall back to waiting on GET /api/v1/submissions/{id}.
 */
function follow(id, head, rows) {
  const url = `/api/v1/submissions/${encodeURIComponent(id)}`;
  let explained = false;
  const seen = new Set();
  const firstWithMessage = new Map();
  let progress = null; // the running event: how many cases, how many public
  const addRow = (item) => {
    if (seen.has(item.name)) return;
    seen.add(item.name);
    const explain = !explained && item.verdict === "trace_error";
    explained ||= explain;
    const sameAs = item.message ? (firstWithMessage.get(item.message) ?? null) : null;
    if (item.message && !sameAs) firstWithMessage.set(item.message, caseTitle(item));
    const onShowLine = (line) => state.code.focusLine(line);
    rows.append(renderProgressRow(item, { explain, sameAs, onShowLine, rootNames, inputs: inputInfo }));
    tell(head, gradedText(seen.size, progress));
  };
  return new Promise((resolve, reject) => {
    const source = new EventSource(`${url}/events`);
    let done = false;
    let queued = true;
    let watching = false;
    const finish = () => {
      done = true;
      source.close();
    };
    // While it is queued, say why it waits and for how long (the judge's sentence), every few seconds.
    const watchQueue = async () => {
      if (watching) return;
      watching = true;
      try {
        while (queued && !done) {
          await new Promise((wake) => setTimeout(wake, QUEUE_POLL_MS));
          if (!queued || done) return;
          const submission = await api(url).catch(() => null);
          if (submission?.status !== "queued" || !queued || done) return;
          tell(head, queuedText(submission));
        }
      } finally {
        watching = false;
      }
    };
    watchQueue();
    // The stream broke, or sent something unreadable: the stored submission still has the answer.
    const fallBack = () => {
      if (done) return;
      finish();
      poll(url)
        .then((result) => {
          for (const item of result.cases) addRow(item);
          resolve(result);
        })
        .catch(reject);
    };
    const on = (kind, handle) =>
      source.addEventListener(kind, (event) => {
        let data;
        try {
          data = JSON.parse(event.data);
        } catch {
          fallBack();
          return;
        }
        handle(data);
      });
    on("status", (data) => {
      const text = statusText(data);
      if (data.status === "queued" && text) {
        // Queued again for want of a sandbox worker (no attempt used): its grading starts over.
        queued = true;
        seen.clear();
        firstWithMessage.clear();
        explained = false;
        rows.replaceChildren();
        tell(head, text);
        watchQueue();
        return;
      }
      if (data.status !== "running") return;
      queued = false;
      progress = data;
      if (data.attempt > 1) {
        // The judge restarted mid-grading and grades the submission again from its first case.
        seen.clear();
        firstWithMessage.clear();
        explained = false;
        rows.replaceChildren();
      }
      tell(head, text);
    });
    on("case", (data) => addRow(data.case));
    on("result", (data) => {
      finish();
      for (const item of data.result.cases) addRow(item);
      resolve(data.result);
    });
    on("failed", (data) => {
      finish();
      reject(new Error(data.error ?? "the judge could not grade it"));
    });
    source.addEventListener("error", fallBack);
  });
}

async function poll(url) {
  for (;;) {
    const submission = await api(`${url}?wait=${POLL_WAIT_S}`);
    if (submission.status === "done") return submission.result;
    if (submission.status === "failed") throw new Error(submission.error ?? "the judge could not grade it");
  }
}

/**
 * The graded submission: its verdict first, and beside it what to do next. An error that stopped the whole
 * submission (a syntax error, a missing function, a compile failure: no case ran) comes right under the
 * verdict with its line, and the "not run" rows fold away; so do the rows of an Accepted. "Try next" sits
 * under the verdict of an Accepted.
 */
function finishSubmission(result, panel, head, rows) {
  const summary = renderSummary(result, "cases");
  head.replaceWith(summary);
  const onShowLine = (line) => state.code.focusLine(line);
  const stopped = renderResultMessage(result, { onShowLine });
  if (stopped) summary.after(stopped);
  else if (result.message) panel.append(el("pre", { class: "message final-message", text: result.message }));
  foldRows(rows, result);
  const prints = renderPrints(result, { code: state.code.get() });
  if (prints) panel.append(prints);
  saveVerdict(slug, { verdict: result.verdict, passed: result.passed, total: result.total, at: Date.now() });
  offerNext(result.verdict === "accepted", summary);
  const line = firstErrorLine(result);
  if (line !== null) state.code.markErrorLine(line);
  announce(`Submission graded. ${verdictSentence(result)}`, result.verdict === "accepted" ? "ok" : "error");
  revealInConsole(panel, "start");
}

/**
 * Fold a finished submission's rows where they say no more than its verdict: all accepted, or none run (the
 * error above stopped them); else keep the rows that did not pass in view and fold the ones that did.
 */
function foldRows(rows, result) {
  const items = result.cases;
  if (!items.length) return;
  const fold = (label, className = "case-rows") => el("details", { class: className }, el("summary", {}, label));
  const foldAll = (label) => {
    const details = fold(label);
    rows.replaceWith(details); // before the rows move into it
    details.append(rows);
  };
  if (items.every((item) => item.verdict === "accepted")) {
    foldAll(`All ${items.length} cases passed: show them`);
  } else if (items.every((item) => item.verdict === "not_run")) {
    foldAll(`${items.length} cases not run (the error above stopped them): show them`);
  } else {
    const passed = [...rows.children].filter((row) => row.dataset.verdict === "accepted");
    if (!passed.length) return;
    rows.setAttribute("aria-label", "Cases that did not pass");
    const list = el("ol", { class: "progress", "aria-label": "Cases that passed" }, ...passed);
    const n = passed.length;
    const details = fold(`${n} case${n === 1 ? "" : "s"} passed: show ${n === 1 ? "it" : "them"}`, "case-rows passed-rows");
    details.append(list);
    rows.after(details);
  }
}

/** Put "Try next" back where the page keeps it (hidden), before a new submission replaces the panel. */
function parkNext() {
  const next = $("next-problem");
  if (!next) return;
  next.hidden = true;
  $("submissions").append(next);
}

/**
 * After an Accepted, offer under its verdict (`summary`) the first problem this browser has not solved:
 * among those this one links to ("similar problems"), then the rest of the suggested order (the server
 * lists them, best first).
 */
function offerNext(accepted, summary) {
  const next = $("next-problem");
  if (!next) return;
  next.hidden = !accepted;
  if (!accepted) return;
  summary.after(next);
  const candidates = [...next.querySelectorAll("template[data-slug]")];
  const open = candidates.find((item) => !isSolved(item.dataset.slug));
  const link = $("next-link");
  if (open) {
    link.href = `/problems/${encodeURIComponent(open.dataset.slug)}`;
    link.textContent = open.dataset.title;
  } else {
    link.href = "/";
    link.textContent = `every problem is solved in ${keptWhere()}: back to the list`;
  }
}

// --- history: this browser's submissions and last Run ------------------------------------------------

/** "2 Dec, 21:40" for an ISO time or a number of milliseconds. */
function when(value) {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
}

/** One row of the history: verdict, cases passed, time, and a button that opens its code. */
function historyRow(kept, submission) {
  const row = el("li", { class: "history-row", "data-submission": kept.id });
  if (!submission) {
    const at = when(kept.at);
    row.append(el("span", { class: "muted" }, `Your submission${at ? ` of ${at}` : ""}: no longer on this judge`));
    return row;
  }
  const result = submission.result;
  row.append(
    submission.verdict ? verdictBadge(submission.verdict) : el("span", { class: "muted" }, submission.status),
    result ? el("span", {}, ` ${result.passed} of ${result.total} cases`) : null,
    el("time", { class: "times", datetime: submission.created_at }, when(submission.created_at)),
  );
  const open = el("button", { type: "button", class: "link-button" }, "Open this code");
  open.addEventListener("click", async () => {
    try {
      const { code } = await api(`/api/v1/submissions/${encodeURIComponent(kept.id)}/code`);
      state.code.focus();
      state.code.set(code);
      $("save-state").textContent = `Opened your submission of ${when(submission.created_at)} (Ctrl+Z undoes)`;
    } catch (error) {
      announce(`The code could not be opened: ${error.message}`, "error");
    }
  });
  row.append(open);
  return row;
}

/** Fetch and list this browser's submissions of the problem (newest first); nothing when there are none. */
async function showHistory() {
  const kept = loadSubmissions(slug);
  const section = $("history");
  if (!kept.length || !section) return;
  const fetched = await Promise.all(
    kept.map((item) => api(`/api/v1/submissions/${encodeURIComponent(item.id)}`).catch(() => null)),
  );
  replace(
    $("history-list"),
    ...kept.map((item, i) => historyRow(item, fetched[i])),
  );
  section.hidden = false;
  $("tab-submissions").textContent = `Submissions (${kept.length})`;
}

/** The last Run's result, shown again on a return visit, labelled with when it ran. */
function showLastRun() {
  const last = loadLastRun(slug);
  if (!last) return;
  const options = { onShowLine: (line) => state.code.focusLine(line), rootNames, inputs: inputInfo };
  const panel = $("run-results");
  replace(
    panel,
    el("p", { class: "muted last-run" }, `Your last Run, ${when(last.at)} (run again to refresh):`),
    ...renderRun(last.result, options),
  );
  panel.hidden = false;
  showOutput(panel);
}

// --- layout: statement and editor side by side (tabs on a phone), the console's tabs ----------------

const SPLIT_KEY = "jax-judge:layout:split";
/** The editor's share of the code pane's height (the console takes the rest), as the learner left it. */
const EDITOR_KEY = "jax-judge:layout:editor";

function wireLayout() {
  const workspace = $("main");
  showConsole = wireTabs(document.querySelector(".console-tabs"), {});
  const select = wireTabs(document.querySelector(".view-tabs"), {
    hide: false,
    onSelect: (id) => {
      workspace.dataset.view = id === "view-code" ? "code" : "problem";
    },
  });
  showView = (view) => select(view === "code" ? "view-code" : "view-problem");
  const consoleTab = showConsole;
  showConsole = (name, options) => {
    if (workspace.dataset.view !== "code") showView("code");
    consoleTab(`tab-${name}`, options);
  };
  const keep = (key) => (value) => {
    try {
      localStorage.setItem(key, String(value));
    } catch {
      // storage refused: the size is not kept
    }
  };
  const kept = (key) => {
    try {
      return Number(localStorage.getItem(key));
    } catch {
      return null;
    }
  };
  const setSplit = wireSplitter($("splitter"), workspace, { onChange: keep(SPLIT_KEY) });
  if (kept(SPLIT_KEY)) setSplit(kept(SPLIT_KEY));
  const setEditor = wireSplitter($("console-splitter"), $("solve-pane"), {
    property: "--editor-share",
    axis: "y",
    min: 15,
    max: 75,
    onChange: keep(EDITOR_KEY),
  });
  if (kept(EDITOR_KEY)) setEditor(kept(EDITOR_KEY));
}

// --- keyboard and start -------------------------------------------------------------------------------

function shortcutsForPlatform() {
  const mac = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
  if (!mac) return;
  for (const node of document.querySelectorAll("kbd[data-mod]")) node.textContent = "Cmd";
}

document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented || event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
  event.preventDefault();
  if (event.shiftKey) submit();
  else run();
});

function start() {
  startAccount();
  shortcutsForPlatform();
  wireLayout();
  watchScrollers($("statement"));
  wireHints();
  setUpEditor();
  wireInputs();
  // The input kept from the last visit, unless the learner typed in a box before this script ran.
  const typed = state.args.some((name) => changed($(boxId(name))));
  setMode(typed ? "custom" : restoreInputs());
  showDtype();
  $("run").addEventListener("click", run);
  $("submit").addEventListener("click", submit);
  updateSubmit();
  showLastRun();
  document.body.dataset.ready = "true";
  // Navigation start to a usable page: statement, an editor to type in, the Run panel (bench_page reads it).
  performance.mark("judge:ready");
  afterFirstPaint(upgradeEditor);
  afterFirstPaint(() => showHistory().catch((error) => console.warn("history:", error)));
}

/** Longest wait for the first paint before loading CodeMirror anyway (a tab opened in the background
 * paints only once shown). */
const PAINT_WAIT_MS = 3000;

/**
 * Run `task` once the browser has shown the page: after the first contentful paint has reached the screen
 * (not just after the main thread's part of a frame, which is what requestAnimationFrame marks: fetching,
 * compiling and starting CodeMirror then competes with rasterizing that frame and delays what the learner
 * sees). Where paint timing is not available, after the next frame.
 */
function afterFirstPaint(task) {
  if (!PerformanceObserver.supportedEntryTypes?.includes("paint")) {
    requestAnimationFrame(() => setTimeout(task, 0));
    return;
  }
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    observer.disconnect();
    clearTimeout(timer);
    setTimeout(task, 0);
  };
  const observer = new PerformanceObserver((list) => {
    if (list.getEntriesByName("first-contentful-paint").length) once();
  });
  observer.observe({ type: "paint", buffered: true });
  const timer = setTimeout(once, PAINT_WAIT_MS);
}

start();
