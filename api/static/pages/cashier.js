// The cashier's console (operators): find or create a player (wallet and sign-in link in one
// step), grant chips, balances and statements, keys, open and close tables. Anything that moves
// chips asks for confirmation first.
import {$, chips, confirmed, fail, follow, get, html, linkTo, listAll, post, render, say, signedIn}
  from "/static/pages/common.js";
import {openTableForm} from "/static/pages/open-table.js";

let wallets = [];

function showLink(playerId, issued) {
  const url = `${location.origin}/sign-in#token=${issued.key}`;
  render($("#link"), html`<fieldset><legend>Sign-in link for ${playerId}</legend>
    <p>Hand this to the player; it works once, until ${issued.expires_at}.</p>
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

async function find(prefix) {
  wallets = await listAll(`/wallets?limit=100${prefix ? `&player_id=${encodeURIComponent(prefix)}` : ""}`, "wallets");
  renderWallets();
}

async function statement(w) {
  const s = await get(`/wallets/${w.id}/statement`);
  render($("#detail"), html`<h3>Statement of ${w.player_id}</h3>
    <p>Opening ${chips(s.opening_balance)}, credits ${chips(s.credits)}, debits ${chips(s.debits)},
      closing <strong>${chips(s.closing_balance)}</strong></p>
    <div class="scroll" tabindex="0" role="region" aria-label="Statement of ${w.player_id}"><table><tr><th>Time (UTC)</th><th>What</th><th class="num">Amount</th><th class="num">Balance</th></tr>
    ${s.transfers.map((t) => html`<tr><td>${t.time}</td><td>${t.type}</td>
      <td class="num">${chips(t.amount)}</td><td class="num">${chips(t.balance)}</td></tr>`)}</table></div>`);
}

async function keys(w) {
  const list = await get(`/keys?player_id=${encodeURIComponent(w.player_id)}&include_inactive=true`);
  render($("#detail"), html`<h3>Keys of ${w.player_id}</h3>
    <div class="scroll" tabindex="0" role="region" aria-label="Keys of ${w.player_id}"><table id="keys"><tr><th>Key id</th><th>Kind</th><th>Label</th><th>Status</th><th>Expires</th><th></th></tr>
    ${list.keys.map((k) => html`<tr data-key="${k.key_id}"><td><code>${k.key_id.slice(0, 8)}</code></td>
      <td>${k.kind}</td><td>${k.label}</td><td class="key-status">${k.status}</td><td>${k.expires_at || "never"}</td>
      <td>${k.status === "active" ? html`<button type="button" class="danger" data-revoke="${k.key_id}">Revoke</button>` : ""}</td></tr>`)}
    </table></div><p class="muted"><small>Listed from the projection (${list.projection.behind} events behind).</small></p>`);
}

$("#find").addEventListener("submit", (event) => {
  event.preventDefault();
  find($("#player").value.trim()).catch(fail);
});
$("#create").addEventListener("click", async () => {
  const playerId = $("#player").value.trim();
  if (!$("#player").reportValidity()) return;
  try {
    const wallet = await post("/wallets", {player_id: playerId});
    await newLink(playerId);
    wallets = [wallet, ...wallets.filter((w) => w.id !== wallet.id)];
    renderWallets();
    say(`Created player ${playerId} with an empty wallet and a sign-in link.`);
  } catch (error) { fail(error); }
});
$("#wallets").addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-do]");
  if (!button) return;
  const row = button.closest("tr");
  const w = wallets.find((x) => x.id === row.dataset.wallet);
  try {
    if (button.dataset.do === "grant") {
      const amount = Number($(".amount", row).value);
      if (!Number.isInteger(amount) || amount < 1) throw new Error("grant a whole number of chips, at least 1");
      if (!await confirmed(`Grant ${chips(amount)} chips to ${w.player_id}?`)) return;
      const updated = await post(`/wallets/${w.id}/grants`, {amount});
      Object.assign(w, updated);
      renderWallets();
      say(`Granted ${chips(amount)} to ${w.player_id}: balance ${chips(updated.balance)}.`);
    } else if (button.dataset.do === "statement") await statement(w);
    else if (button.dataset.do === "keys") await keys(w);
    else if (button.dataset.do === "link") await newLink(w.player_id);
  } catch (error) { fail(error); }
});
$("#detail").addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-revoke]");
  if (!button) return;
  if (!await confirmed(`Revoke key ${button.dataset.revoke.slice(0, 8)}? It stops working at once.`)) return;
  try {
    const key = await post(`/keys/${button.dataset.revoke}/revoke`);
    button.closest("tr").querySelector(".key-status").textContent = key.status;
    button.remove();
    say("Key revoked.");
  } catch (error) { fail(error); }
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
$("#tables").addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-close]");
  if (!button) return;
  if (!await confirmed("Close this table and pay out its pot?")) return;
  try {
    // The list names no actions: the table's own answer links its close while it may close.
    const table = await get(`/tables/${button.dataset.close}`);
    if (!linkTo(table, "close")) { say("This table cannot close now.", true); await loadTables(); return; }
    await follow(table, "close");
    say("Table closed.");
    await loadTables();
  } catch (error) { fail(error); }
});

const me = await signedIn();
if (me.role !== "operator") {
  say("The cashier's console is for operators.", true);
} else {
  openTableForm($("#open"), () => loadTables().catch(fail));
  await find("").catch(fail);
  await loadTables().catch(fail);
}
