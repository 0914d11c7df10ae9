// The lobby: open tables by variant with their limits, seats, pot or bank and dealer; a player
// sits down or leaves; staff open tables. Every action is one API call.
import {$, chips, confirmed, fail, get, html, listAll, post, render, say, signedIn}
  from "/static/pages/common.js";
import {openTableForm} from "/static/pages/open-table.js";

let me = null;
let wallet = null;

function limitsText(t) {
  const l = t.limits;
  if (t.variant === "casino") return `chips ${l.chips.join(", ")}; opening bet ${chips(l.min_bet)}–${chips(l.max_opening_bet)}`;
  const parts = [`bets from ${chips(l.min_bet)}${l.max_bet ? ` to ${chips(l.max_bet)}` : ""}`];
  if (l.ante) parts.push(`ante ${chips(l.ante)}`);
  if (l.bank_fixed) parts.push(`bank ${chips(l.bank_fixed)}`);
  else if (l.bank_min && ["banked_red_dog", "shoot", "slippery_sam", "polish", "six_spot_banking"].includes(t.variant)) {
    parts.push(`bank ${chips(l.bank_min)}${l.bank_max ? `–${chips(l.bank_max)}` : "+"}`);
  }
  parts.push(`${l.hand_size} cards`);
  return parts.join("; ");
}

function mySeat(t) {
  return me.role === "player" ? t.seats.find((s) => s.player_id === me.player_id) : undefined;
}

function tableHtml(t) {
  const seat = mySeat(t);
  const page = t.variant === "casino" ? "/pages/casino" : "/pages/table";
  const taken = t.seats.map((s) => `${s.seat}: ${s.player_id}`).join(", ") || "none";
  const actions = [];
  // Each link and button is named for its table, so a list of them reads apart.
  const named = t.variant === "casino" ? `Casino Red Dog, ${t.name}` : `${t.title} table ${t.name}`;
  if (t.variant === "casino") {
    actions.push(html`<a href="${page}?table=${t.id}">${me.role === "player" ? "Play" : "Watch"} ${named}</a>`);
  } else if (me.role === "player" && t.status === "open") {
    if (seat) {
      actions.push(html`<a href="${page}?table=${t.id}">Play ${named} (seat ${seat.seat})</a>`);
      actions.push(html`<button type="button" data-leave="${t.id}" data-seat="${seat.seat}">Leave seat ${seat.seat} at ${t.name}</button>`);
    } else if (t.seats_free > 0 && wallet) {
      actions.push(html`<button type="button" class="primary" data-sit="${t.id}">Sit down at ${named}</button>`);
    }
  } else if (me.role !== "player") {
    actions.push(html`<a href="${page}?table=${t.id}">Watch ${named}</a>`);
  }
  if (t.deals) actions.push(html`<a class="deals-link" href="/pages/find?table=${t.id}">Deals at ${t.name}</a>`);
  const starts = {operator: "an operator or the dealer", dealer: "the dealer",
    ready: "when every seated player is ready"}[t.starts];
  return html`<article class="table-card" data-table="${t.id}" data-variant="${t.variant}">
    <h3>${t.name} <span class="muted">${t.variant === "casino" ? "" : t.title}</span> <span class="badge">${t.status}</span></h3>
    <dl>
      ${starts ? html`<dt>Deals start</dt><dd class="starts">${t.starts === "ready" ? starts : `by ${starts}`}</dd>` : ""}
      <dt>Limits</dt><dd>${limitsText(t)}</dd>
      <dt>Seats</dt><dd><span class="seats-count">${t.seats.length} taken, ${t.seats_free} free</span>
        <br><small class="muted">${taken}</small></dd>
      ${t.pot === null ? "" : html`<dt>Pot or bank</dt><dd class="pot">${chips(t.pot)}</dd>`}
      ${t.variant === "casino" ? "" : html`<dt>Dealer</dt><dd>${t.dealer === null ? "not drawn yet"
        : `seat ${t.dealer}: ${t.dealer_player_id}`}</dd>`}
      <dt>Deals</dt><dd>${chips(t.deals)} · ${t.phase}</dd>
    </dl>
    <div class="actions">${actions}</div></article>`;
}

let shown = "";

async function load() {
  const status = $("#filter").value;
  const tables = await listAll(`/tables?limit=100${status ? `&status=${status}` : ""}`, "tables");
  const now = JSON.stringify(tables);
  if (now === shown) return;  // unchanged: keep the page (and the keyboard focus) as it is
  shown = now;
  const groups = new Map();
  for (const t of tables) {
    if (!groups.has(t.title)) groups.set(t.title, []);
    groups.get(t.title).push(t);
  }
  render($("#tables"), tables.length ? [...groups].map(([title, list]) =>
    html`<section><h2>${title}</h2><div class="tables">${list.map(tableHtml)}</div></section>`)
    : html`<p class="muted">No tables yet.</p>`);
}

async function sit(tableId) {
  const table = (await listAll("/tables?limit=100", "tables")).find((t) => t.id === tableId);
  const taken = new Set(table.seats.map((s) => s.seat));
  let seat = 1;
  while (taken.has(seat)) seat += 1;
  await post(`/tables/${tableId}/seats`, {seat, wallet_id: wallet.id});
  location.assign(`/pages/table?table=${tableId}`);
}

$("#tables").addEventListener("click", async (event) => {
  const button = event.target.closest("button");
  if (!button) return;
  try {
    if (button.dataset.sit) await sit(button.dataset.sit);
    if (button.dataset.leave) {
      if (!await confirmed(`Leave seat ${button.dataset.seat}?`)) return;
      await post(`/tables/${button.dataset.leave}/seats/${button.dataset.seat}/leave`);
      say(`You left seat ${button.dataset.seat}.`);
      await load();
    }
  } catch (error) { fail(error); }
});

async function loadWallet() {
  const wallets = await listAll(`/wallets?player_id=${encodeURIComponent(me.player_id)}`, "wallets");
  const found = wallets.find((w) => w.player_id === me.player_id) || null;
  const changed = JSON.stringify(found) !== JSON.stringify(wallet);
  wallet = found;
  render($("#wallet"), wallet ? html`Your balance: <strong id="balance">${chips(wallet.balance)}</strong> play credits`
    : "You have no wallet yet: ask the cashier.");
  if (changed) shown = "";  // "Sit down" needs a wallet
}

async function keepCurrent() {  // seats fill, tables open and grants arrive while it is open
  try {
    if (me.role === "player") await loadWallet();
    await load();
  } catch (error) { fail(error); }
  setTimeout(keepCurrent, 2000);
}

me = await signedIn();
$("#filter").addEventListener("change", () => load().catch(fail));  // its tables are drawn for `me`
if (me.role === "operator") openTableForm($("#staff"), () => load().catch(fail));
keepCurrent();
