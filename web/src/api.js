// Calls to the judge's REST API (the page has no other way to reach the judge).
import { csrfToken } from "./account.js";

/** Signed in to an account, state-changing requests carry the session's CSRF token (account.js). */
function withCsrf(method, headers) {
  const token = method === "GET" || method === "HEAD" ? null : csrfToken();
  if (token) headers["X-CSRF-Token"] = token;
  return headers;
}

/** A non-2xx answer: `status`, the decoded JSON `body` (or null) and a readable `message`. */
export class ApiError extends Error {
  constructor(status, body, retryAfter) {
    super(errorText(status, body, retryAfter));
    this.name = "ApiError";
    this.status = status;
    this.body = body;
    this.retryAfter = retryAfter;
  }
}

/** The human-readable message of an API error body, whatever its exact shape. */
function errorText(status, body, retryAfter) {
  const error = body && typeof body === "object" ? (body.error ?? body) : null;
  let text = null;
  if (error && typeof error.message === "string") text = error.message;
  else if (error && typeof error.detail === "string") text = error.detail;
  if (!text) text = status === 0 ? "The judge could not be reached." : `The judge answered ${status}.`;
  if (status === 429 && retryAfter) text += ` Try again in ${retryAfter} s.`;
  return text;
}

/**
 * `method` `path` with an optional JSON `body`; resolves to the decoded JSON answer, rejects with
 * ApiError (status 0 when the network failed).
 */
export async function api(path, { method = "GET", body, signal } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  withCsrf(method, headers);
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      credentials: "same-origin",
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, null, null);
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) throw new ApiError(response.status, data, response.headers.get("Retry-After"));
  return data;
}

/** One server-sent event of `text` (its `event:` name and its `data:` lines), or null for a comment. */
export function parseEvent(text) {
  let event = "message";
  const data = [];
  for (const line of text.split("\n")) {
    if (line.startsWith(":") || !line) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  return data.length ? { event, data: data.join("\n") } : null;
}

/**
 * POST `body` to `path` and read the answer as server-sent events, calling `onEvent(name, data)` with
 * each event's decoded JSON data, until the stream ends. A non-2xx answer rejects with ApiError before
 * any event; aborting `signal` closes the stream (the judge then stops the work) and rejects with an
 * AbortError.
 */
export async function postEvents(path, { body, signal, onEvent }) {
  let response;
  try {
    response = await fetch(path, {
      method: "POST",
      headers: withCsrf("POST", { Accept: "text/event-stream", "Content-Type": "application/json" }),
      body: JSON.stringify(body),
      signal,
      credentials: "same-origin",
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, null, null);
  }
  if (!response.ok) {
    let data = null;
    try {
      data = JSON.parse(await response.text());
    } catch {
      data = null;
    }
    throw new ApiError(response.status, data, response.headers.get("Retry-After"));
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let carry = ""; // a chunk's last "\r": its "\n" may come with the next chunk
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    let text = carry + decoder.decode(value, { stream: true });
    carry = text.endsWith("\r") ? "\r" : "";
    if (carry) text = text.slice(0, -1);
    buffer += text.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = parseEvent(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (event) onEvent(event.event, JSON.parse(event.data));
    }
  }
}
