// The cashier's console (operators): find or create a player (wallet and sign-in link in one
// step), grant chips, balances and statements, keys, open and close tables. Anything that moves
// chips asks for confirmation first, and is taken once: its button is disabled from the click
// to the answer (`whileInFlight`), and a grant carries one Idempotency-Key per wallet and amount
// until it is answered, so a retry after a lost answer grants once.
import {$, Intent, chips, confirmed, confirmedThen, fail, follow, get, html, linkTo, listAll, post, render, say,
  signedIn, whileInFlight} from "/static/pages/common.js";
import {openTableForm} from "/static/pages/open-table.js";
import {timeView} from "/static/pages/words.js";

let wallets = [];
const grants = new Map();  // wallet id → {amount, intent}: the grant being made there
const creating = {playerId: null, intent: new Intent()};  // the wallet being opened

/** The Idempotency-Key of granting `amount` to the wallet: the same until that grant is answered. */
function grantKey(walletId, amount) {
  let grant = grants.get(walletId);
  if (!grant || grant.amount !== amount) grants.set(walletId, grant = {amount, intent: new Intent()});
  return grant.intent.value;
}

function showLink(playerId, issued) {
  const url = `${location.origin}/sign-in#token=${issued.key}`;
  render($("#link"), html`<fieldset><legend>Sign-in link for ${playerId}</legend>
    <p>Hand this to the player; it works once, until ${timeView(issued.expires_at)}.</p>
    <p><code class="link" id="sign-in-link">${url}</code></p>
    <button type="button" id="copy-link">Copy link</button></fieldset>`);
  $("#copy-link").addEventListener("click", async () => {
    try { await navigator.clipboard.writeText(url); say("Link copied."); } catch { say("Select the link and copy it.", true); }
  });
}

async function newLink(playerId) {
  const issued = await post("/keys", {role: "player", player_id: playerId, kind: "link",
    label: `sign-in link for ${playerId}`});
  showLink(playerId, issued);
}

function renderWallets() {
  render($("#wallets tbody"), wallets.length ? wallets.map((w) => html`<tr data-wallet="${w.id}" data-player="${w.player_id}">
    <td>${w.player_id}</td><td class="num wallet-balance">${chips(w.balance)}</td><td class="num">${chips(w.granted)}</td>
    <td class="actions"><label>Grant <input type="number" min="1" step="1" inputmode="numeric" class="amount"
      aria-label="Chips to grant to ${w.player_id}" size="8"></label>
      <button type="button" data-do="grant" class="primary">Grant</button>
      <button type="button" data-do="statement">Statement</button>
      <button type="button" data-do="keys">Keys</button>
      <button type="button" data-do="link">New sign-in link</button>
      <a href="/pages/wallet?id=${w.id}">Wallet</a>
      <a href="/pages/find?player=${encodeURIComponent(w.player_id)}">Deals</a></td></tr>`)
    : html`<tr><td colspan="4" class="muted">No wallets found.</td></tr>`);
}

let finding = 0;  // the number of the latest find: an answer to an earlier one is dropped

/** Show `list` as the wallets; a find still in flight no longer replaces it. */
function showWallets(list) {
  finding++;
  wallets = list;
  renderWallets();
  $("#wallets").setAttribute("aria-busy", "false");
}

/** List the wallets whose player id starts with `prefix`; the table is `aria-busy` meanwhile. */
async function find(prefix) {
  const mine = ++finding;
  $("#wallets").setAttribute("aria-busy", "true");
  try {
    const found = await listAll(`/wallets?limit=100${prefix ? `&player_id=${encodeURIComponent(prefix)}` : ""}`, "wallets");
    if (mine === finding) showWallets(found);
  } finally {
    if (mine === finding) $("#wallets").setAttribute("aria-busy", "false");
  }
}

async function statement(w) {
  const s = await get(`/wallets/${w.id}/statement`);
  render($("#detail"), html`<h3>Statement of ${w.player_id}</h3>
    <p>Opening ${chips(s.opening_balance)}, credits ${chips(s.credits)}, debits ${chips(s.debits)},
      closing <strong>${chips(s.closing_balance)}</strong></p>
    <div class="scroll" tabindex="0" role="region" aria-label="Statement of ${w.player_id}"><table><tr><th>Time</th><th>What</th><th class="num">Amount</th><th class="num">Balance</th></tr>
    ${s.transfers.map((t) => html`<tr><td>${timeView(t.time)}</td><td>${t.type}</td>
      <td class="num">${chips(t.amount)}</td><td class="num">${chips(t.balance)}</td></tr>`)}</table></div>`);
}

async function keys(w) {
  const list = await get(`/keys?player_id=${encodeURIComponent(w.player_id)}&include_inactive=true`);
  render($("#detail"), html`<h3>Keys of ${w.player_id}</h3>
    <div class="scroll" tabindex="0" role="region" aria-label="Keys of ${w.player_id}"><table id="keys"><tr><th>Key id</th><th>Kind</th><th>Label</th><th>Status</th><th>Expires</th><th></th></tr>
    ${list.keys.map((k) => html`<tr data-key="${k.key_id}"><td><code>${k.key_id.slice(0, 8)}</code></td>
      <td>${k.kind}</td><td>${k.label}</td><td class="key-status">${k.status}</td><td>${k.expires_at ? timeView(k.expires_at) : "never"}</td>
      <td>${k.status === "active" ? html`<button type="button" class="danger" data-revoke="${k.key_id}">Revoke</button>` : ""}</td></tr>`)}
    </table></div><p class="muted"><small>Listed from the projection (${list.projection.behind} events behind).</small></p>`);
}

$("#find").addEventListener("submit", (event) => {
  event.preventDefault();
  find($("#player").value.trim()).catch(fail);
});
$("#create").addEventListener("click", () => {
  const playerId = $("#player").value.trim();
  if (!$("#player").reportValidity()) return;
  if (creating.playerId !== playerId) { creating.playerId = playerId; creating.intent.renew(); }
  whileInFlight([$("#create")], async () => {
    const wallet = await post("/wallets", {player_id: playerId}, {idempotencyKey: creating.intent.value});
    creating.intent.renew();
    creating.playerId = null;
    await newLink(playerId);
    showWallets([wallet, ...wallets.filter((w) => w.id !== wallet.id)]);
    say(`Created player ${playerId} with an empty wallet and a sign-in link.`);
  }, {reason: `Opening a wallet for ${playerId}…`}).catch(fail);
});

async function grant(w, row) {
  const amount = Number($(".amount", row).value);
  if (!Number.isInteger(amount) || amount < 1) throw new Error("amount: grant a whole number of chips, at least 1");
  const updated = await confirmedThen(`Grant ${chips(amount)} chips to ${w.player_id}?`,
    () => post(`/wallets/${w.id}/grants`, {amount}, {idempotencyKey: grantKey(w.id, amount)}),
    `Granting ${chips(amount)} chips to ${w.player_id}…`);
  if (!updated) { say("Nothing was granted."); return; }
  grants.delete(w.id);
  Object.assign(w, updated);
  renderWallets();
  say(`Granted ${chips(amount)} to ${w.player_id}: balance ${chips(updated.balance)}.`);
}

$("#wallets").addEventListener("click", (event) => {
  const button = event.target.closest("button[data-do]");
  if (!button || (event.detail > 1 && button.dataset.do === "grant")) return;
  const row = button.closest("tr");
  const w = wallets.find((x) => x.id === row.dataset.wallet);
  const work = {grant: () => grant(w, row), statement: () => statement(w),
    keys: () => keys(w), link: () => newLink(w.player_id)}[button.dataset.do];
  // The row's grant and link buttons are held while any of its requests is in flight.
  const held = button.dataset.do === "grant" || button.dataset.do === "link"
    ? [...row.querySelectorAll("button[data-do='grant'], button[data-do='link']"), $(".amount", row)] : [button];
  whileInFlight(held, work, {reason: button.dataset.do === "grant" ? "Waiting for the confirmation…"
    : "Waiting for the answer…"}).catch(fail);
});
$("#detail").addEventListener("click", (event) => {
  const button = event.target.closest("button[data-revoke]");
  if (!button) return;
  whileInFlight([button], async () => {
    if (!await confirmed(`Revoke key ${button.dataset.revoke.slice(0, 8)}? It stops working at once.`)) return;
    const key = await post(`/keys/${button.dataset.revoke}/revoke`);
    button.closest("tr").querySelector(".key-status").textContent = key.status;
    button.remove();
    say("Key revoked.");
  }).catch(fail);
});

async function loadTables() {
  const tables = await listAll("/tables?limit=100", "tables");
  render($("#tables tbody"), tables.map((t) => html`<tr data-table="${t.id}">
    <td><a href="${t.variant === "casino" ? "/pages/casino" : "/pages/table"}?table=${t.id}">${t.title}</a>
      <small class="muted">${t.id.slice(0, 8)}</small></td>
    <td>${t.seats.map((s) => s.player_id).join(", ") || "–"}</td><td class="num">${chips(t.pot)}</td>
    <td>${t.status}</td><td><a href="/pages/find?table=${t.id}">Deals</a> ${t.variant !== "casino" && t.status === "open"
      ? html`<button type="button" class="danger" data-close="${t.id}">Close</button>` : ""}</td></tr>`));
}
$("#tables").addEventListener("click", (event) => {
  const button = event.target.closest("button[data-close]");
  if (!button) return;
  whileInFlight([button], async () => {
    const closed = await confirmedThen("Close this table and pay out its pot?", async () => {
      // The list names no actions: the table's own answer links its close while it may close.
      const table = await get(`/tables/${button.dataset.close}`);
      if (!linkTo(table, "close")) return "cannot";
      await follow(table, "close");
      return "closed";
    }, "Closing the table…");
    if (closed === "cannot") say("This table cannot close now.", true);
    else if (closed) say("Table closed.");
    if (closed) await loadTables();
  }, {reason: "Waiting for the confirmation…"}).catch(fail);
});

const me = await signedIn();
if (me.role !== "operator") {
  say("The cashier's console is for operators.", true);
} else {
  openTableForm($("#open"), () => loadTables().catch(fail));
  await find("").catch(fail);
  await loadTables().catch(fail);
}
