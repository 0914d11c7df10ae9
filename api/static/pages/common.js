// What every page shares: the key this tab holds, calls of the API, who is signed in, cards,
// chips and the confirmation asked before anything that moves chips.
// The key lives in sessionStorage (this tab only, gone when it closes); it is sent only as
// `Authorization: Bearer`, never in an address.

const KEY = "reddog.key";

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

export function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => (
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}

export const chips = (n) => (n === null || n === undefined ? "–" : Number(n).toLocaleString("en"));

export function heldKey() { return sessionStorage.getItem(KEY); }
export function holdKey(key) { sessionStorage.setItem(KEY, key); }
export function dropKey() { sessionStorage.removeItem(KEY); }

export class ApiError extends Error {
  constructor(problem) {
    super(problem.detail || problem.title || `HTTP ${problem.status}`);
    this.problem = problem;
    this.status = problem.status;
  }
}

function idempotencyKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return [...crypto.getRandomValues(new Uint8Array(16))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Call the API; a POST carries a fresh Idempotency-Key. Throws ApiError with the problem. */
export async function api(method, path, body, options = {}) {
  const headers = {...(options.headers || {})};
  const key = heldKey();
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method === "POST") headers["Idempotency-Key"] = idempotencyKey();
  const response = await fetch(path, {
    method, headers, cache: "no-store",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 304) return {notModified: true, etag: response.headers.get("ETag")};
  const data = await response.json();
  if (!response.ok) {
    if (response.status === 401 && !options.noRedirect) signOut(data.detail);
    throw new ApiError(data);
  }
  return options.withEtag ? {data, etag: response.headers.get("ETag")} : data;
}

export const get = (path, options) => api("GET", path, undefined, options);
export const post = (path, body, options) => api("POST", path, body, options);

/** Every page of a list, following `next` (at most `pages` requests). */
export async function listAll(path, field, pages = 20) {
  const items = [];
  let after = null;
  for (let i = 0; i < pages; i++) {
    const sep = path.includes("?") ? "&" : "?";
    const page = await get(after ? `${path}${sep}after=${after}` : path);
    items.push(...page[field]);
    if (!page.next) break;
    after = page.next;
  }
  return items;
}

export function signOut(reason) {
  dropKey();
  const next = encodeURIComponent(location.pathname + location.search);
  location.assign(`/sign-in?next=${next}${reason ? `&reason=${encodeURIComponent(reason)}` : ""}`);
}

/** Who is signed in (GET /me), shown in the page's header with links for the role; sends a
 * tab without a key to the sign-in page. */
export async function signedIn() {
  if (!heldKey()) { signOut(); throw new Error("not signed in"); }
  const me = await get("/me");
  const who = me.role === "player" ? `${esc(me.player_id)} (player)` : `${esc(me.role)}`;
  const links = [["/", "Lobby"]];
  if (me.role === "operator") links.push(["/pages/cashier", "Cashier"]);
  if (me.role === "player") {
    const mine = encodeURIComponent(me.player_id);
    links.push([`/pages/find?player=${mine}`, "Your deals"], [`/pages/recall?player=${mine}`, "Recall"],
      ["/pages/disputes", "Disputes"]);
  } else {
    links.push(["/pages/audit", "Audit"], ["/pages/find", "Find"], ["/pages/disputes", "Disputes"],
      ["/pages/reports", "Reports"], ["/pages/verification", "Verification"]);
  }
  $("#who").innerHTML = `
    <nav aria-label="Pages">${links.map(([href, text]) =>
      `<a href="${href}"${location.pathname === href.split("?")[0] ? ' aria-current="page"' : ""}>${text}</a>`)
      .join(" ")}</nav>
    <p class="signed-in" data-role="${esc(me.role)}">Signed in as <strong>${who}</strong>
      <button type="button" id="sign-out" class="link">Sign out</button></p>`;
  $("#sign-out").addEventListener("click", () => { dropKey(); location.assign("/sign-in"); });
  return me;
}

/** Say something in the page's status line (a polite live region), or an error. */
export function say(message, error = false) {
  const line = $("#status");
  line.textContent = message;
  line.classList.toggle("error", error);
}

/** What went wrong, in words: the problem's rule and detail, or the error's message. */
export function errorText(error) {
  return error instanceof ApiError ? problemText(error) : String(error.message || error);
}

export function fail(error) { say(errorText(error), true); }

export function problemText(error) {
  const p = error.problem || {};
  return `${p.status || ""} ${p.rule ? p.rule + ": " : ""}${p.detail || error.message}`.trim();
}

// Cards: `7h`, `Td`, `As`, shown as rank and suit with a spoken alternative.
const RANKS = {T: "10", J: "Jack", Q: "Queen", K: "King", A: "Ace"};
const SUITS = {c: ["♣", "clubs"], d: ["♦", "diamonds"], h: ["♥", "hearts"], s: ["♠", "spades"]};

export function cardName(card) {
  const [rank, suit] = [card[0], card[1]];
  return `${RANKS[rank] || rank} of ${SUITS[suit][1]}`;
}

export function cardHtml(card) {
  if (!card) return `<span class="card down" role="img" aria-label="face-down card"></span>`;
  const [rank, suit] = [card[0], card[1]];
  const red = suit === "d" || suit === "h";
  return `<span class="card${red ? " red" : ""}" role="img" aria-label="${cardName(card)}"
    data-card="${esc(card)}">${rank === "T" ? "10" : esc(rank)}${SUITS[suit][0]}</span>`;
}

/** Ask before anything that moves chips; resolves true only on Confirm. */
export function confirmed(question) {
  let dialog = $("#confirm");
  if (!dialog) {
    dialog = document.createElement("dialog");
    dialog.id = "confirm";
    dialog.innerHTML = `<form method="dialog"><p id="confirm-text"></p>
      <menu><button value="cancel" type="submit">Cancel</button>
      <button value="ok" type="submit" class="primary" id="confirm-ok">Confirm</button></menu></form>`;
    document.body.append(dialog);
  }
  $("#confirm-text").textContent = question;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener(
    "close", () => resolve(dialog.returnValue === "ok"), {once: true}));
}

export const param = (name) => new URLSearchParams(location.search).get(name);

/** Fetch a file with the key this tab holds (never in the address) and save it under
 * `filename`. Any answer but a 2xx of the expected type throws an ApiError and saves nothing. */
export async function download(path, filename, type) {
  const key = heldKey();
  const response = await fetch(path, {cache: "no-store",
    headers: key ? {Authorization: `Bearer ${key}`} : {}});
  const contentType = response.headers.get("Content-Type") || "";
  if (!response.ok || !contentType.startsWith(type)) {
    let problem = {status: response.status,
      detail: `the answer was ${contentType || "empty"}, not ${type}`};
    if (contentType.includes("json")) {
      try { problem = await response.json(); } catch { /* keep the plain problem */ }
    }
    throw new ApiError(problem);
  }
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  return blob;
}

// Searching and following the money (find, wallet, recall and table-as-of pages).

/** An instant the API reads (`2026-03-01T12:00:00Z`) from a `datetime-local` field read as UTC. */
export function utcInstant(local) {
  if (!local) return "";
  return `${local.length === 16 ? `${local}:00` : local}Z`;
}

/** A `datetime-local` field's value from an instant in an address (its UTC offset dropped). */
export function localValue(instant) {
  return String(instant || "").replace(/(Z|[+-]\d\d:\d\d)$/, "").slice(0, 19);
}

/** The form's filled fields as query parameters; instants as UTC, `type` split at commas. */
export function formQuery(form, names) {
  const query = new URLSearchParams();
  for (const name of names) {
    const field = form.elements[name];
    const value = field ? field.value.trim() : "";
    if (!value) continue;
    if (field.type === "datetime-local") query.set(name, utcInstant(value));
    else if (name === "type") value.split(/[\s,]+/).filter(Boolean).forEach((t) => query.append("type", t));
    else query.set(name, value);
  }
  return query;
}

/** Fill a form's fields from the page address (the state a link to the page carries). */
export function fillForm(form, names, params = new URLSearchParams(location.search)) {
  for (const name of names) {
    const field = form.elements[name];
    if (!field || !params.has(name)) continue;
    field.value = field.type === "datetime-local" ? localValue(params.get(name))
      : name === "type" ? params.getAll("type").join(", ") : params.get(name);
  }
}

/** The address of a deal's replay. */
export const replayHref = (dealId) => `/pages/replay?deal=${encodeURIComponent(dealId)}`;

/** A time as the pages show it: UTC, to the second. */
export const when = (instant) => (instant ? `${String(instant).slice(0, 19).replace("T", " ")} UTC` : "–");

/** An account of a transfer, linked where a page shows it (a wallet's statement). */
export function accountHtml(account) {
  const [kind, id] = String(account).split(/:(.*)/s);
  if (kind === "wallet" && id) return `<a href="/pages/wallet?id=${encodeURIComponent(id)}">wallet ${esc(id.slice(0, 8))}</a>`;
  return id ? `${esc(kind)} ${esc(id.slice(0, 8))}` : esc(kind);
}

/** Show a refusal where the answer would have been, and in the status line. */
export function refused(target, error) {
  target.innerHTML = `<span class="error" role="alert">${esc(error instanceof ApiError
    ? `Refused: ${problemText(error)}` : String(error.message || error))}</span>`;
  fail(error);
}

/** The closed sets the API documents for a query parameter (`/openapi.json`). */
export async function documentedChoices(path, name) {
  const doc = await get("/openapi.json");
  const parameter = (doc.paths[path].get.parameters || []).find((p) => p.name === name);
  return (parameter && parameter.schema && parameter.schema.enum) || [];
}
