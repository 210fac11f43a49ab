// Stand-ins for the browser objects storage.js and account.js touch (Node has no DOM).

/** A localStorage: getItem, setItem, removeItem, key, length. */
export function fakeStorage() {
  const items = new Map();
  return {
    items,
    get length() {
      return items.size;
    },
    key: (i) => [...items.keys()][i] ?? null,
    getItem: (key) => (items.has(key) ? items.get(key) : null),
    setItem: (key, value) => items.set(key, String(value)),
    removeItem: (key) => items.delete(key),
  };
}

/** Install window, document (with the given account state, or none) and a recording fetch. */
export function installBrowser(state = null, csrf = null) {
  const storage = fakeStorage();
  const requests = [];
  globalThis.window = { localStorage: storage };
  globalThis.CustomEvent = class {
    constructor(type, init) {
      this.type = type;
      this.detail = init?.detail;
    }
  };
  const events = [];
  globalThis.document = {
    getElementById: (id) => (id === "account-state" && state ? { textContent: JSON.stringify(state) } : null),
    querySelector: (selector) => (selector === 'meta[name="csrf-token"]' && csrf ? { content: csrf } : null),
    dispatchEvent: (event) => events.push(event),
  };
  globalThis.fetch = async (path, options) => {
    requests.push({ path, ...options });
    return { ok: true, status: 200, json: async () => ({}) };
  };
  return { storage, requests, events };
}
