// What every page shares: the key this tab holds, calls of the API, who is signed in, cards,
// chips and the confirmation asked before anything that moves chips.
// The key lives in sessionStorage (this tab only, gone when it closes); it is sent only as
// `Authorization: Bearer`, never in an address.

const KEY = "reddog.key";

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

// Markup, escaped by default. html`<p class="x">${value}</p>` answers a fragment: the template's
// own text is parsed once (a <template>, with a comment where a value stands between tags and
// a marker where it stands in an attribute) and each value is then put in as a DOM Text node
// or as (part of) an attribute's value, never parsed as markup. Values may be strings, numbers,
// fragments of html`` itself, arrays of these, or null, undefined and false (nothing); an
// attribute whose whole value is null or undefined is left out. A value in place of a tag's or an
// attribute's name, in an `on…` attribute, or in an element whose text is not markup
// (<textarea>, <title>, <script>, <style>) throws; a value making an address attribute a
// `javascript:`, `data:` or `vbscript:` address is replaced by `about:invalid`. Only html``
// makes fragments: an object from anywhere else (JSON, a file) is a value, shown as text.
// render(target, ...) puts fragments in an element in place of what it held; append(...) after.
const MARK = `rdl${Math.random().toString(36).slice(2, 10)}x`;
const IN_ATTRIBUTE = new RegExp(`${MARK}(\\d+)${MARK}`, "g");
const WHOLE_ATTRIBUTE = new RegExp(`^${MARK}(\\d+)${MARK}$`);
const IN_TEXT = new RegExp(`^${MARK}(\\d+)$`);
const ADDRESS = new Set(["href", "src", "action", "formaction", "xlink:href", "poster", "cite"]);
const UNSAFE_ADDRESS = /^(javascript|vbscript|data):/i;
const templates = new WeakMap();

class Fragment {
  constructor(strings, values, inSvg) {
    this.strings = strings;
    this.values = values;
    this.inSvg = inSvg;
  }
}

export const html = (strings, ...values) => new Fragment(strings, values, false);
/** As html``, for what goes inside an <svg> (parsed as SVG: <g>, <text>, <title>…). */
export const svg = (strings, ...values) => new Fragment(strings, values, true);

function templateOf({strings, inSvg}) {
  let template = templates.get(strings);
  if (template) return template;
  let markup = strings[0];
  for (let i = 1; i < strings.length; i++) {
    const inTag = markup.lastIndexOf("<") > markup.lastIndexOf(">");
    markup += (inTag ? `${MARK}${i - 1}${MARK}` : `<!--${MARK}${i - 1}-->`) + strings[i];
  }
  template = document.createElement("template");
  template.innerHTML = inSvg ? `<svg>${markup}</svg>` : markup;  // the template's own text and markers: never a value
  if (inSvg) template.content.replaceChildren(...template.content.firstChild.childNodes);
  templates.set(strings, template);
  return template;
}

function attributeText(value) {
  if (value instanceof Fragment) throw new Error("html``: markup in place of an attribute's value");
  return value === null || value === undefined ? "" : String(value);
}

function instantiate(fragment) {
  const content = document.importNode(templateOf(fragment).content, true);
  const {values} = fragment;
  const walker = document.createTreeWalker(content,
    NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_COMMENT | NodeFilter.SHOW_TEXT);
  const places = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) places.push(node);
  for (const node of places) {
    if (node.nodeType === Node.COMMENT_NODE) {
      const at = node.data.match(IN_TEXT);
      if (at) node.replaceWith(nodesOf(values[Number(at[1])]));
    } else if (node.nodeType === Node.TEXT_NODE) {
      if (node.data.includes(MARK)) throw new Error("html``: a value where only the template's text may be");
    } else {
      if (node.localName.includes(MARK)) throw new Error("html``: a value in place of a tag's name");
      for (const attribute of [...node.attributes]) {
        if (attribute.name.includes(MARK)) throw new Error("html``: a value in place of an attribute's name");
        if (!attribute.value.includes(MARK)) continue;
        if (/^on/i.test(attribute.localName)) throw new Error(`html: a value in the attribute ${attribute.name}`);
        const whole = attribute.value.match(WHOLE_ATTRIBUTE);
        const only = whole ? values[Number(whole[1])] : "";
        if (whole && (only === null || only === undefined)) {
          node.removeAttributeNode(attribute);
          continue;
        }
        let text = attribute.value.replace(IN_ATTRIBUTE, (_, i) => attributeText(values[Number(i)]));
        // eslint-disable-next-line no-control-regex
        if (ADDRESS.has(attribute.name) && UNSAFE_ADDRESS.test(text.replace(/[\u0000-\u0020]/g, ""))) {
          text = "about:invalid";
        }
        attribute.value = text;
      }
    }
  }
  return content;
}

function nodesOf(value) {
  const nodes = document.createDocumentFragment();
  if (value === null || value === undefined || value === false) return nodes;
  if (value instanceof Fragment) nodes.append(instantiate(value));
  else if (Array.isArray(value)) for (const item of value) nodes.append(nodesOf(item));
  else nodes.append(document.createTextNode(String(value)));
  return nodes;
}

/** Put fragments (or text) in an element in place of what it held; nothing empties it. */
export function render(target, ...parts) { target.replaceChildren(nodesOf(parts)); }

/** Put fragments (or text) at the end of an element. */
export function append(target, ...parts) { target.append(nodesOf(parts)); }

/** The items with `separator` between each two (a list to put in a template). */
export const joined = (items, separator) => items.flatMap((item, i) => (i ? [separator, item] : [item]));

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

/** One Idempotency-Key for one intent (a bet slip, a grant of an amount to a wallet, a deal's
 * Stand or Raise): the same on every try until `renew()` begins the next intent, so a retry of
 * a request whose answer was lost is answered once by the server, never applied twice. Pass it
 * as `api(…, {idempotencyKey: intent.value})`. */
export class Intent {
  #value = null;
  get value() { return this.#value || (this.#value = idempotencyKey()); }
  renew() { this.#value = null; }
}

/** Call the API; a POST carries `options.idempotencyKey` (an Intent's value) or the
 * `Idempotency-Key` of `options.headers`, else a fresh one. Throws ApiError with the problem; a
 * request that got no answer (the network) throws the browser's TypeError, and may have been
 * applied: retry it with the same key. */
export async function api(method, path, body, options = {}) {
  const headers = {...(options.headers || {})};
  const key = heldKey();
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  // One intended action, one key: a caller that may send it again passes its own.
  if (method === "POST") {
    headers["Idempotency-Key"] = options.idempotencyKey || headers["Idempotency-Key"] || idempotencyKey();
  }
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

/** The request an answer's `links` name for an action (`{href, method}`), or null where the
 * server offers none: the pages take a table's or deal's actions only from its links. */
export function linkTo(answer, action) {
  const link = answer && answer.links ? answer.links[action] : null;
  return link && link.href && link.method ? link : null;
}

/** Take an action by the request the answer's `links` name for it (its path and method). */
export function follow(answer, action, body, options) {
  const link = linkTo(answer, action);
  if (!link) throw new Error(`the server offers no ${action} here now`);
  return api(link.method, link.href, body, options);
}

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
  const who = me.role === "player" ? `${me.player_id} (player)` : me.role;
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
  render($("#who"), html`
    <nav aria-label="Pages">${joined(links.map(([href, text]) => html`<a href="${href}"
      aria-current="${location.pathname === href.split("?")[0] ? "page" : null}">${text}</a>`), " ")}</nav>
    <p class="signed-in" data-role="${me.role}">Signed in as <strong>${who}</strong>
      <button type="button" id="sign-out" class="link">Sign out</button></p>`);
  $("#sign-out").addEventListener("click", () => { dropKey(); location.assign("/sign-in"); });
  return me;
}

/** Say something in the page's status line (a polite live region), or an error: `error` is
 * true, or the error itself, whose problem's status, rule and field the line then carries as
 * `data-status`, `data-rule` and `data-field` (the words name the rule or field, not the
 * status). */
export function say(message, error = false) {
  const line = $("#status");
  line.textContent = message;
  line.classList.toggle("error", Boolean(error));
  markProblem(line, error);
}

/** What went wrong, in words: the problem's rule and detail, or the error's message. */
export function errorText(error) {
  return error instanceof ApiError ? problemText(error) : String(error.message || error);
}

export function fail(error) { say(errorText(error), error); }

/** A refusal in words, its rule or field named once: "P3: the bet must be from 10 to 195",
 * "amount: must be at least 1"; never the HTTP status (the element showing it carries that:
 * `markProblem`). A problem's detail already starts with its rule (`P3: …`). */
export function problemText(error) {
  const p = error.problem || {};
  return ruleText(p.rule, p.detail || error.message, p.field);
}

/** A rule's (or field's) refusal as the pages word it: the rule once, then the detail. */
export function ruleText(rule, detail, field = null) {
  const text = String(detail || "").trim();
  const name = rule || field;
  if (!name || text.startsWith(`${name}:`) || text.startsWith(`${name} `)) return text;
  return `${name}: ${text}`;
}

/** Put an error's problem on the element that shows it (`data-status`, `data-rule`,
 * `data-field`, `data-problem`: its type), or take them off for anything else. */
export function markProblem(element, error) {
  const p = error instanceof ApiError ? error.problem || {} : {};
  const marks = {status: p.status, rule: p.rule, field: p.field, problem: p.type};
  for (const [name, value] of Object.entries(marks)) {
    if (value === undefined || value === null) delete element.dataset[name];
    else element.dataset[name] = String(value);
  }
}

/** The reads of one list (a search, a feed, a statement), counted, so that the answer of a read
 * a newer list has replaced (asked again while it was in flight) is dropped, not drawn over the
 * newer one. Each read calls the answered function with `more` (a next page of the same list,
 * not a new list) and gets a check: true while its list is still the newest. */
export function listReads() {
  let lists = 0;
  return (more) => {
    const mine = more ? lists : ++lists;
    return () => mine === lists;
  };
}

// Requests that move chips are taken once at a time: while one is in flight its controls are
// disabled, marked `aria-busy`, and described (`aria-describedby`) by a live region saying why.
const inFlightNow = new WeakSet();

/** Whether a control is waiting for its request's answer (`whileInFlight`). */
export const inFlight = (control) => inFlightNow.has(control);

/** Run `work` (a request that moves chips, or anything to take once) with `controls` disabled
 * until it settles; a click while it runs finds them disabled, and a second call naming a
 * control still in flight does nothing (answers undefined). `why` is the live region that says
 * `reason` meanwhile (the page's status line unless told); each control is described by it
 * until the answer, then left as it was before. Answers what `work` answers; throws what it
 * throws. */
export async function whileInFlight(controls, work, {reason = "Waiting for the answer…", why} = {}) {
  const list = (Array.isArray(controls) ? controls : [controls]).filter(Boolean);
  if (list.some(inFlight)) return undefined;
  const region = why === undefined ? $("#status") : why;
  const before = list.map((control) => ({control, disabled: control.disabled,
    described: control.getAttribute("aria-describedby")}));
  for (const control of list) {
    inFlightNow.add(control);
    control.disabled = true;
    control.setAttribute("aria-busy", "true");
    if (region && region.id) control.setAttribute("aria-describedby", region.id);
  }
  if (region) {
    region.textContent = reason;
    region.classList.remove("error");
    markProblem(region, null);
  }
  try {
    return await work();
  } finally {
    for (const {control, disabled, described} of before) {
      inFlightNow.delete(control);
      control.disabled = disabled;
      control.removeAttribute("aria-busy");
      if (described === null) control.removeAttribute("aria-describedby");
      else control.setAttribute("aria-describedby", described);
    }
    if (region && region.textContent === reason) region.textContent = "";
  }
}

/** Take a click on `button` once at a time: `work` runs `whileInFlight` with the button (and
 * `options.with`, more controls to hold) disabled; its error is shown by `fail`. */
export function onceAtATime(button, work, options = {}) {
  button.addEventListener("click", (event) => {
    const controls = [button, ...(options.with ? options.with() : [])];
    whileInFlight(controls, () => work(event), options).catch(fail);
  });
}

// Cards: `7h`, `Td`, `As`, shown as rank and suit with a spoken alternative.
const RANKS = {T: "10", J: "Jack", Q: "Queen", K: "King", A: "Ace"};
const SUITS = {c: ["♣", "clubs"], d: ["♦", "diamonds"], h: ["♥", "hearts"], s: ["♠", "spades"]};

const CARD = /^[2-9TJQKA][cdhs]$/;

export function cardName(card) {
  if (!CARD.test(card)) return String(card);
  const [rank, suit] = [card[0], card[1]];
  return `${RANKS[rank] || rank} of ${SUITS[suit][1]}`;
}

/** A card as the pages draw it; no card is a face-down one, and what is not a card is shown as
 * the text it is. */
export function cardView(card) {
  if (!card) return html`<span class="card down" role="img" aria-label="face-down card"></span>`;
  if (!CARD.test(card)) {
    return html`<span class="card" role="img" aria-label="${cardName(card)}" data-card="${card}">${card}</span>`;
  }
  const [rank, suit] = [card[0], card[1]];
  const red = suit === "d" || suit === "h";
  return html`<span class="card${red ? " red" : ""}" role="img" aria-label="${cardName(card)}"
    data-card="${card}">${rank === "T" ? "10" : rank}${SUITS[suit][0]}</span>`;
}

function confirmDialog(question) {
  let dialog = $("#confirm");
  if (!dialog) {
    dialog = document.createElement("dialog");
    dialog.id = "confirm";
    render(dialog, html`<form method="dialog"><p id="confirm-text"></p>
      <p id="confirm-why" role="status" aria-live="polite"></p>
      <menu><button value="cancel" type="submit" id="confirm-cancel">Cancel</button>
      <button value="ok" type="submit" class="primary" id="confirm-ok">Confirm</button></menu></form>`);
    document.body.append(dialog);
    // The second click of a double click is never a Confirm or a Cancel: the first may have
    // opened the dialog under the pointer.
    for (const button of $$("menu button", dialog)) {
      button.addEventListener("click", (event) => { if (event.detail > 1) event.preventDefault(); });
    }
  }
  $("#confirm-text").textContent = question;
  $("#confirm-why").textContent = "";
  dialog.returnValue = "";
  return dialog;
}

/** Ask before anything that moves chips; resolves true only on Confirm. */
export function confirmed(question) {
  const dialog = confirmDialog(question);
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener(
    "close", () => resolve(dialog.returnValue === "ok"), {once: true}));
}

/** Ask before anything that moves chips, and on Confirm take it (`work`) with the dialog kept
 * open, its buttons disabled and saying why (`whileInFlight`), until the answer: a second click
 * on Confirm finds it disabled, and Escape does not close it meanwhile. Resolves with what
 * `work` answers, or undefined on Cancel; rejects with its error (the dialog closed). */
export function confirmedThen(question, work, reason = "Waiting for the answer…") {
  const dialog = confirmDialog(question);
  const ok = $("#confirm-ok");
  const cancel = $("#confirm-cancel");
  return new Promise((resolve, reject) => {
    let taking = false;
    const onCancel = (event) => { if (taking) event.preventDefault(); };
    const onOk = (event) => {
      event.preventDefault();  // no submission: the dialog stays open until the answer
      if (taking || event.detail > 1) return;
      taking = true;
      whileInFlight([ok, cancel], work, {reason, why: $("#confirm-why")}).then(
        (answer) => { finish(); resolve(answer); },
        (error) => { finish(); reject(error); });
    };
    const onClose = () => { if (!taking) { finish(); resolve(undefined); } };
    const finish = () => {
      ok.removeEventListener("click", onOk);
      dialog.removeEventListener("cancel", onCancel);
      dialog.removeEventListener("close", onClose);
      if (dialog.open) dialog.close(taking ? "ok" : "cancel");
    };
    ok.addEventListener("click", onOk);
    dialog.addEventListener("cancel", onCancel);
    dialog.addEventListener("close", onClose);
    dialog.showModal();
  });
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

/** An account of a transfer taken apart, as the ledger names it (ledger/transfers.py
 * `parse_account`): `wallet:<id>` → {kind: "wallet", owner: "<id>"}, `house` → {kind: "house",
 * owner: null}; `stake:<deal or table>` and `pot:<table>` likewise. The one place a page reads
 * an account's name. */
export function parseAccount(account) {
  const name = String(account ?? "");
  const at = name.indexOf(":");
  if (at < 0) return {kind: name, owner: null};
  return {kind: name.slice(0, at), owner: name.slice(at + 1) || null};
}

/** An account of a transfer, linked where a page shows it (a wallet's statement). */
export function accountView(account) {
  const {kind, owner} = parseAccount(account);
  if (kind === "wallet" && owner) {
    return html`<a href="/pages/wallet?id=${encodeURIComponent(owner)}">wallet ${owner.slice(0, 8)}</a>`;
  }
  return owner ? `${kind} ${owner.slice(0, 8)}` : kind;
}

/** Show a refusal where the answer would have been (its problem marked on it, as `say`
 * marks the status line), and in the status line. */
export function refused(target, error) {
  render(target, html`<span class="error" role="alert">${error instanceof ApiError
    ? `Refused: ${problemText(error)}` : String(error.message || error)}</span>`);
  markProblem(target.firstElementChild, error);
  fail(error);
}

/** The closed sets the API documents for a query parameter (`/openapi.json`). */
export async function documentedChoices(path, name) {
  const doc = await get("/openapi.json");
  const parameter = (doc.paths[path].get.parameters || []).find((p) => p.name === name);
  return (parameter && parameter.schema && parameter.schema.enum) || [];
}
