// Learner accounts (JUDGE_ACCOUNTS): what the server rendered for a signed-in learner, and the requests
// that keep it. Signed out (or with accounts off) `account()` is null and nothing here runs: the page keeps
// its progress in this browser only (storage.js), as it always did.
//
// Signed in, the server is the source: the page carries the account's progress as JSON
// (<script id="account-state">: solved marks and last verdicts of every problem; this problem's last code
// and history), storage.js reads it instead of localStorage, and the code is sent back as it is saved.

let cached;

/** The signed-in account's state from the page, or null (signed out, accounts off). */
export function account() {
  if (cached !== undefined) return cached;
  cached = null;
  if (typeof document === "undefined") return cached;
  const node = document.getElementById("account-state");
  if (!node) return cached;
  try {
    const value = JSON.parse(node.textContent);
    if (value && typeof value.id === "string" && value.problems && typeof value.problems === "object") cached = value;
  } catch {
    cached = null;
  }
  return cached;
}

/** The session's CSRF token (every state-changing request of a signed-in page sends it), or null. */
export function csrfToken() {
  if (typeof document === "undefined") return null;
  return document.querySelector('meta[name="csrf-token"]')?.content || null;
}

/** `method` `path` with a JSON `body` and the CSRF header; resolves to the Response (rejects offline). */
export function send(path, method, body, { keepalive = false } = {}) {
  return fetch(path, {
    method,
    headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRF-Token": csrfToken() ?? "" },
    body: JSON.stringify(body),
    credentials: "same-origin",
    keepalive,
  });
}

/** Tell the page how a save to the account went (problem.js's save line listens). */
function saved(ok, message) {
  document.dispatchEvent(new CustomEvent("judge:account-saved", { detail: { ok, message } }));
}

/** Send the last code of `slug` to the account (null: back to the starter). */
export function putCode(slug, code, { keepalive = false } = {}) {
  return send(`/account/code/${encodeURIComponent(slug)}`, "PUT", { code }, { keepalive })
    .then(async (response) => {
      if (response.ok) return saved(true, "");
      let message = `the judge answered ${response.status}`;
      try {
        message = (await response.json())?.error?.message ?? message;
      } catch {
        // not JSON: the status says enough
      }
      saved(false, message);
    })
    .catch(() => saved(false, "the judge could not be reached"));
}

// --- the offer to import this browser's progress from before sign-in ----------------------------------

const PREFIX = "jax-judge:";

/** What this browser kept while signed out: {code: {slug: text}, submissions: {slug: [id]}}. */
export function localProgress(storage = window.localStorage) {
  const code = {};
  const submissions = {};
  for (let i = 0; i < storage.length; i += 1) {
    const key = storage.key(i);
    if (!key?.startsWith(PREFIX)) continue;
    const rest = key.slice(PREFIX.length);
    if (rest.startsWith("code:")) code[rest.slice(5)] = storage.getItem(key);
    else if (rest.startsWith("submissions:")) {
      try {
        const items = JSON.parse(storage.getItem(key) ?? "[]");
        const ids = Array.isArray(items) ? items.map((item) => item?.id).filter((id) => typeof id === "string") : [];
        if (ids.length) submissions[rest.slice(12)] = ids;
      } catch {
        // a damaged entry is left out
      }
    }
  }
  return { code, submissions };
}

function offerImport(state) {
  let progress;
  const marker = `${PREFIX}imported:${state.id}`;
  try {
    if (window.localStorage.getItem(marker)) return;
    progress = localProgress();
  } catch {
    return; // storage refused: there is nothing to offer
  }
  const problems = new Set([...Object.keys(progress.code), ...Object.keys(progress.submissions)]);
  if (!problems.size) return;
  const count = Object.values(progress.submissions).reduce((n, ids) => n + ids.length, 0);
  const box = document.createElement("section");
  box.className = "import-offer";
  box.id = "import-offer";
  box.setAttribute("aria-label", "Progress from before you signed in");
  const text = document.createElement("p");
  text.textContent =
    `This browser has your progress from before you signed in: ${problems.size} ` +
    `problem${problems.size === 1 ? "" : "s"}, ${count} submission${count === 1 ? "" : "s"}. ` +
    "Add it to your account? (Code you already keep in the account stays as it is.)";
  const take = document.createElement("button");
  take.type = "button";
  take.className = "primary";
  take.textContent = "Add it to my account";
  const later = document.createElement("button");
  later.type = "button";
  later.textContent = "Not now";
  const done = (value) => {
    try {
      window.localStorage.setItem(marker, value);
    } catch {
      // storage refused: the offer comes again next time
    }
  };
  take.addEventListener("click", async () => {
    take.disabled = later.disabled = true;
    text.textContent = "Adding…";
    try {
      const response = await send("/account/import", "POST", progress);
      if (!response.ok) throw new Error(`the judge answered ${response.status}`);
      await response.json(); // the whole answer, before the reload
      done("imported");
      window.location.reload();
    } catch (error) {
      text.textContent = `Not added: ${error.message}. Try again later.`;
      take.disabled = later.disabled = false;
    }
  });
  later.addEventListener("click", () => {
    done("declined");
    box.remove();
  });
  box.append(text, take, later);
  document.querySelector("header.topbar")?.after(box);
}

/** Forget the copies this browser keeps of accounts (`prefix`: of one account; default: of every one). */
function forgetCopies(prefix = `${PREFIX}@`) {
  try {
    const keys = [];
    for (let i = 0; i < window.localStorage.length; i += 1) {
      const key = window.localStorage.key(i);
      if (key?.startsWith(prefix)) keys.push(key);
    }
    for (const key of keys) window.localStorage.removeItem(key);
  } catch {
    // storage refused: nothing was kept
  }
}

/**
 * Wire the account's parts of the page. Signed out, the copies of any account's progress are forgotten
 * (a shared computer keeps none after sign-out); signed in, the sign-out button forgets them too.
 */
export function startAccount() {
  const state = account();
  if (!state) {
    forgetCopies();
    return;
  }
  offerImport(state);
  document.getElementById("signout-form")?.addEventListener("submit", () => forgetCopies());
}
