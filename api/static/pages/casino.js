// The Casino Red Dog table of seed page 002. The bet slip's rules are the server's (C8): every
// control asks `GET /tables/{id}/bet-slip`, which answers the new slip and what each control
// may do next; Deal, Stand and Raise are the table's and deal's commands, each taken by the
// request the table's last answer links for it (`links.deal`, `.stand`, `.raise`), and offered
// only while it does. Each of the last deals links its replay and offers its receipt, saved as a
// file and its checkpoint checked against the one this browser keeps (transparency.js).
import {$, $$, cardView, chips, errorText, fail, follow, get, html, linkTo, param, render as fill, say,
  signedIn} from "/static/pages/common.js";
import {cap, downloadReceipt} from "/static/pages/transparency.js";

const tableId = param("table");
let view = null;     // GET /tables/{id}
let slip = null;     // GET /tables/{id}/bet-slip
let chip = null;     // the chip chosen (a choice on the page, not a rule)
let history = [];

async function askSlip(action, extra = {}) {
  const query = new URLSearchParams();
  for (const c of slip ? slip.chips : []) query.append("chips", c);
  if (action) query.set("action", action);
  for (const [k, v] of Object.entries(extra)) query.set(k, v);
  slip = await get(`/tables/${tableId}/bet-slip?${query}`);
}

function deal() { return view && view.current_deal; }

function renderCards() {
  const d = deal();
  const cards = d ? d.cards : [];
  const slots = [cards[0], cards[2], cards[1]];  // first, third (between), second
  slots.forEach((c, i) => {
    fill($(`#slot-${[1, 3, 2][i]}`), c ? cardView(c.card) : html`<span class="empty"></span>`);
  });
  let spread = "Place a bet and deal";
  if (d && d.opening) {
    const o = d.opening;
    if (o.kind === "spread") spread = `Spread ${o.spread} · pays ${o.odds} to 1`;
    else if (o.kind === "consecutive") spread = "Consecutive: a push";
    else spread = "Pair: three of a kind pays 11 to 1";
  }
  $("#spread").textContent = spread;
  let outcome = "";
  if (d && d.phase === "finished") {
    const net = d.net > 0 ? `+${chips(d.net)}` : chips(d.net);
    outcome = `${d.outcome[0].toUpperCase()}${d.outcome.slice(1)}: stake ${chips(d.stake)}, returned ${chips(d.returned)} (net ${net})`;
  } else if (d && d.awaiting) {
    outcome = "Stand or Raise?";
  }
  $("#outcome").textContent = outcome;
  $("#outcome").dataset.deal = d ? `${d.id} ${d.phase}` : "";
}

function renderControls() {
  const d = deal();
  const deciding = Boolean(d && d.awaiting === "player");
  $$(".betting").forEach((b) => { b.hidden = deciding; });
  $$(".deciding").forEach((b) => { b.hidden = !deciding; });
  $("#raise").disabled = !(deciding && linkTo(view, "raise"));
  $("#raise").title = $("#raise").disabled ? "Your balance cannot cover the raise" : "";
  $("#stand").disabled = !(deciding && linkTo(view, "stand"));
  const allowed = slip ? slip.allowed : {add: {}};
  $$(".chip").forEach((b) => {
    b.setAttribute("aria-pressed", String(Number(b.dataset.chip) === chip));
    b.disabled = deciding || !allowed.add[b.dataset.chip];
  });
  $("#bet").disabled = deciding || chip === null || !allowed.add[String(chip)];
  for (const name of ["undo", "clear", "rebet", "double", "deal"]) {
    $(`#${name}`).disabled = deciding || !allowed[name];
  }
  if (!linkTo(view, "deal")) $("#deal").disabled = true;
  $("#bet-total").textContent = chips(deciding ? d.stake : slip ? slip.total : 0);
  $("#bet-chips").textContent = slip && slip.chips.length ? `(${slip.chips.join(" + ")})` : "";
  $("#balance").textContent = chips(view.balance);
}

function renderHistory() {
  fill($("#history tbody"), history.length ? history.slice(0, 10).map((h) => html`<tr>
    <td>${h.cards.map((c) => cardView(c))}</td><td class="num">${chips(h.stake)}</td>
    <td>${h.outcome}</td><td class="num">${chips(h.returned)}</td>
    <td class="links"><a href="/pages/replay?deal=${h.id}">Replay</a>
      <button type="button" data-receipt="${h.id}">Download receipt</button></td></tr>`)
    : html`<tr><td colspan="5" class="muted">No deals yet.</td></tr>`);
}

// The server's paytable, with runs of spreads that pay the same written as one row (4–11).
function paytableRows(paytable) {
  const rows = [];
  for (const [label, odds] of Object.entries(paytable)) {
    if (label === "trips") { rows.push(["Pair, then three of a kind", odds]); continue; }
    const spread = Number(label.replace("spread_", ""));
    const last = rows[rows.length - 1];
    if (last && last.odds === odds && last.to === spread - 1) { last.to = spread; continue; }
    rows.push(Object.assign([null, odds], {from: spread, to: spread, odds}));
  }
  return rows.map((r) => (r[0] === null ? [r.from === r.to ? `${r.from}` : `${r.from}–${r.to}`, r[1]] : r));
}

function render() { renderCards(); renderControls(); renderHistory(); }

async function refresh() {
  view = await get(`/tables/${tableId}`);
  const d = deal();
  if (d && d.phase === "finished" && !history.some((h) => h.id === d.id)) {
    history.unshift({id: d.id, cards: d.cards.map((c) => c.card), stake: d.stake,
      outcome: d.outcome, returned: d.returned});
  }
}

async function act(work) {
  try { await work(); } catch (error) { fail(error); }
  render();
}

$("#history").addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-receipt]");
  if (!button) return;
  try {
    const {file, seen} = await downloadReceipt(button.dataset.receipt);
    say(seen && !seen.ok ? `Saved ${file}, but its checkpoint does not check out: ${seen.what}`
      : `Saved ${file}.${seen ? ` ${cap(seen.what)}` : ""}`, Boolean(seen && !seen.ok));
  } catch (error) {
    say(`The receipt could not be downloaded: ${errorText(error)}`, true);
  }
});

$$(".chip").forEach((b) => b.addEventListener("click", () => {
  chip = Number(b.dataset.chip);
  say(`Chip of ${chips(chip)} chosen: tap Bet to lay it.`);
  render();
}));
$("#bet").addEventListener("click", () => act(async () => { await askSlip("add", {chip}); say(`Bet ${chips(slip.total)}.`); }));
for (const name of ["undo", "clear", "rebet", "double"]) {
  $(`#${name}`).addEventListener("click", () => act(async () => {
    await askSlip(name);
    say(`${name[0].toUpperCase()}${name.slice(1)}: bet ${chips(slip.total)}.`);
  }));
}
$("#deal").addEventListener("click", () => act(async () => {
  const dealt = await follow(view, "deal", {bet: slip.total});
  slip = null;
  await refresh();
  await askSlip();
  say(dealt.awaiting ? "Your cards are a spread: Stand or Raise." : "Dealt.");
  $(dealt.awaiting ? "#stand" : "#deal").focus();
}));
for (const name of ["stand", "raise"]) {
  $(`#${name}`).addEventListener("click", () => act(async () => {
    await follow(view, name);
    await refresh();
    await askSlip();
    say(name === "raise" ? "Raised." : "Stood.");
    $("#deal").focus();
  }));
}

const me = await signedIn();
try {
  await refresh();
  $("h1").textContent = `Casino Red Dog · ${view.player_id}`;
  fill($("#paytable"), html`<tbody><tr><th>Spread</th><th class="num">Pays</th></tr>${
    paytableRows(view.paytable).map(([label, odds]) => html`<tr><td>${label}</td>
      <td class="num">${odds} to 1</td></tr>`)}</tbody>`);
  await askSlip();
  if (me.role === "player") {
    const recall = await get(`/players/${encodeURIComponent(me.player_id)}/recall?count=10`);
    for (const r of recall.deals) {
      if (r.table_id === tableId && !history.some((h) => h.id === r.deal_id)) {
        history.push({id: r.deal_id, cards: r.cards, stake: r.bets, outcome: r.outcome, returned: r.returned});
      }
    }
  }
} catch (error) { fail(error); }
if (view) render();
