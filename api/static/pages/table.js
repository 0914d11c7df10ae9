// A multi-seat table of any high-card variant, as the server lets this viewer see it: cards
// face up only where the view shows them, sealed six-spot bets sealed, and only this viewer's
// legal actions. It polls `GET /tables/{id}` with If-None-Match twice a second: a 304 while
// nothing this viewer sees has changed, the new view as soon as anyone acts (docs/pages.md).
// Each action is taken by the request the last answer's `links` name for it, never a path of its
// own; an action without a link is not offered.
import {$, cardView, chips, confirmed, fail, follow, get, html, linkTo, param, post, render as fill, say,
  signedIn}
  from "/static/pages/common.js";

const POLL_MS = 500;
const tableId = param("table");
let me = null;
let view = null;
let etag = null;

const LABELS = {
  deal: "Deal", fund_bank: "Fund the bank", decline_bank: "Decline the bank", choose: "Choose",
  bet: "Bet", buy: "Buy a centre card", pass: "Pass", split_pot: "Split the pot",
  close: "Close the table",
};

function mine(action) {
  if (me.role === "operator") return true;
  return me.role === "player" && action.player_id === me.player_id;
}

function actionHtml(a, i) {
  const who = a.seat ? html` <span class="badge">seat ${a.seat}</span>` : "";
  if (a.action === "bet" || a.action === "fund_bank") {
    const id = `amount-${a.action}-${a.seat}`;
    const range = a.max !== undefined ? `${chips(a.min)}–${chips(a.max)}` : `from ${chips(a.min)}`;
    return html`<form class="actions" data-action="${a.action}" data-index="${i}"><label>${LABELS[a.action]} amount (${range})
      <input id="${id}" type="number" inputmode="numeric" min="${a.min}" max="${a.max}"
        step="1" value="${a.min}" required></label>
      <button type="submit" class="primary">${LABELS[a.action]}${who}</button></form>`;
  }
  if (a.action === "choose") {
    return a.choices.map((c) => html`<button type="button" data-action="${a.action}" data-index="${i}"
      data-choice="${c}">${c === "pass" ? "Pass the deal" : "Deal a fourth time"}${who}</button>`);
  }
  const price = a.price ? ` (${chips(a.price)})` : "";
  const cls = a.action === "deal" ? "primary" : a.action === "close" ? "danger" : "";
  return html`<button type="button" class="${cls}" data-action="${a.action}" data-index="${i}">${LABELS[a.action]}${price}${who}</button>`;
}

function handHtml(hand) {
  if (!hand) return "";
  if (hand.cards) return hand.cards.map((c) => cardView(c));
  const down = Math.max(hand.cards_dealt - hand.shown.length, 0);
  return [hand.shown.map((c) => cardView(c)), Array.from({length: down}, () => cardView(null))];
}

function seatHtml(s, d) {
  const hand = d ? d.hands.find((h) => h.seat === s.seat) : null;
  const bet = d && s.seat in d.bets ? d.bets[s.seat] : (d ? d.bets[String(s.seat)] : undefined);
  const you = me.role === "player" && s.player_id === me.player_id;
  const badges = [you ? "you" : "", view.dealer === s.seat ? "dealer" : "",
    d && d.turn === s.seat ? "to act" : "", s.sitting_out ? "sitting out" : ""].filter(Boolean);
  return html`<article class="seat${you ? " you" : ""}${d && d.turn === s.seat ? " turn" : ""}"
      data-seat="${s.seat}" aria-label="Seat ${s.seat}, ${s.player_id}">
    <h3>Seat ${s.seat}: ${s.player_id}${badges.map((b) => html`<span class="badge">${b}</span>`)}</h3>
    <div class="hand" role="group" aria-label="Hand of seat ${s.seat}">${handHtml(hand)}</div>
    <p>${s.balance === null || s.balance === undefined ? "" : html`Balance <strong class="seat-balance">${chips(s.balance)}</strong> · `}
      Bet <strong class="seat-bet">${bet === undefined ? "–" : bet === "sealed" ? "sealed" : chips(bet)}</strong></p>
  </article>`;
}

function render() {
  const d = view.current_deal;
  $("#title").textContent = `${view.title} · table ${view.id.slice(0, 8)}`;
  const dealer = view.seats.find((s) => s.seat === view.dealer);
  const turn = d && d.turn ? view.seats.find((s) => s.seat === d.turn) : null;
  const facts = [
    ["Phase", view.phase], ["Pot or bank", chips(view.pot)],
    ["Stake out", view.stake === null ? "sealed" : chips(view.stake)],
    ["Dealer", dealer ? `seat ${dealer.seat}: ${dealer.player_id}` : "not drawn yet"],
    ["Whose turn", turn ? `seat ${turn.seat}: ${turn.player_id}` : d ? (d.turn === null ? "everyone (sealed bets)" : "–") : "–"],
    ["Stitch round", view.stitch_round ? "yes" : "no"],
    ["Deals", chips(view.counters.deals)], ["Stitch rounds", chips(view.counters.stitch_rounds)],
    ["Pot splits", chips(view.counters.pot_splits)],
  ];
  fill($("#facts"), facts.map(([k, v]) => html`<div><dt>${k}</dt><dd data-fact="${k}">${v}</dd></div>`));
  fill($("#target"), d && d.target && d.target.card
    ? html`<p>Target card ${cardView(d.target.card)}</p>` : "");
  fill($("#seats"), view.seats.length ? view.seats.map((s) => seatHtml(s, d))
    : html`<p class="muted">No one is seated.</p>`);
  const kept = Object.fromEntries([...document.querySelectorAll("#actions input")].map((i) => [i.id, i.value]));
  const actions = view.legal_actions.map((a, i) => [a, i])
    .filter(([a]) => mine(a) && linkTo(view, a.action));
  const own = me.role === "player" && view.seats.find((s) => s.player_id === me.player_id);
  const shown = actions.map(([a, i]) => actionHtml(a, i));
  if (own && view.phase !== "betting") {
    shown.push(html`<button type="button" data-leave="${own.seat}">Leave seat ${own.seat}</button>`);
  }
  fill($("#actions"), shown.length ? shown : html`<p class="muted">Nothing for you to do now.</p>`);
  for (const [id, value] of Object.entries(kept)) { const input = document.getElementById(id); if (input) input.value = value; }
  $("#updated").textContent = `Table version ${view.version}, shown ${new Date().toLocaleTimeString()}`;
}

async function poll() {
  try {
    const answer = await get(`/tables/${tableId}`, {withEtag: true, headers: etag ? {"If-None-Match": etag} : {}});
    if (!answer.notModified) {
      view = answer.data;
      etag = answer.etag;
      render();
    }
  } catch (error) { fail(error); }
  setTimeout(poll, document.hidden ? POLL_MS * 4 : POLL_MS);
}

async function perform(a, extra) {
  switch (a.action) {
    case "deal": return follow(view, a.action, {});
    case "fund_bank": return follow(view, a.action, {amount: extra.amount});
    case "decline_bank": return follow(view, a.action);
    case "choose": return follow(view, a.action, {choice: extra.choice});
    case "bet": return follow(view, a.action, {seat: a.seat, amount: extra.amount});
    case "buy": case "pass": return follow(view, a.action, {seat: a.seat});
    case "split_pot":
      if (!await confirmed("Split the pot equally among the seated players?")) return null;
      return follow(view, a.action);
    case "close":
      if (!await confirmed("Close the table and pay out its pot?")) return null;
      return follow(view, a.action);
    default: throw new Error(`unknown action ${a.action}`);
  }
}

async function run(a, extra) {
  try {
    const answer = await perform(a, extra);
    if (answer) {
      view = answer; etag = null;  // the command's answer is this viewer's view now
      say(`${LABELS[a.action]} done.`);
      render();
    }
  } catch (error) { fail(error); }
}

$("#actions").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.target;
  const a = view.legal_actions[Number(form.dataset.index)];
  run(a, {amount: Number(form.querySelector("input").value)});
});
$("#actions").addEventListener("click", async (event) => {
  const button = event.target.closest("button");
  if (!button || button.type === "submit") return;
  if (button.dataset.leave) {
    try {
      view = await post(`/tables/${tableId}/seats/${button.dataset.leave}/leave`);
      location.assign("/");
    } catch (error) { fail(error); }
    return;
  }
  const a = view.legal_actions[Number(button.dataset.index)];
  run(a, {choice: button.dataset.choice});
});

me = await signedIn();
poll();
