// A multi-seat table of any high-card variant, as the server lets this viewer see it: cards
// face up only where the view shows them, sealed six-spot bets sealed, and only this viewer's
// legal actions. It polls `GET /tables/{id}` with If-None-Match twice a second: a 304 while
// nothing this viewer sees has changed, the new view as soon as anyone acts (docs/pages.md).
// Each action is taken by the request the last answer's `links` name for it, never a path of its
// own; an action without a link is not offered. One intended action is one request with one
// Idempotency-Key, and every control that moves chips is disabled while it is in flight.
import {$, cardName, cardView, chips, confirmed, fail, follow, get, html, linkTo, param, post, render as fill,
  replayHref, say, signedIn, when}
  from "/static/pages/common.js";

const POLL_MS = 500;
const RECENT_DEALS = 5;
const tableId = param("table");
let me = null;
let view = null;
let etag = null;
let inFlight = null;  // the action whose request is under way: {name, key}
let dealsFor = null;  // the deal count the list of recent deals was read for
let dealsTries = 0;  // reads of the list for this count, while its newest deal is not in it
let recent = [];
let keepFocus = null;  // what had the keyboard focus when this page's action began

const LABELS = {
  deal: "Deal", fund_bank: "Fund the bank", decline_bank: "Decline the bank", choose: "Choose",
  bet: "Bet", buy: "Buy a centre card", pass: "Pass", split_pot: "Split the pot",
  close: "Close the table", ready: "Ready for the next deal",
};
const STARTS = {
  operator: "an operator (or the dealer, once drawn)", dealer: "the dealer",
  ready: "every seated player saying ready",
};

function newKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return [...crypto.getRandomValues(new Uint8Array(16))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

function mine(action) {
  if (me.role === "operator") return true;
  return me.role === "player" && action.player_id === me.player_id;
}

const viewerSeat = () => (me.role === "player"
  ? (view.seats.find((s) => s.player_id === me.player_id) || {}).seat : undefined);

/** A seat in words: "you (seat 2)" for the viewer, "bob (seat 2)" for anyone else. */
function who(seat) {
  const s = view.seats.find((x) => x.seat === seat);
  if (!s) return `seat ${seat}`;
  return seat === viewerSeat() ? `you (seat ${seat})` : `${s.player_id} (seat ${seat})`;
}

/** Whose a player is, for a target: "your", "bob's". */
function whose(seat) {
  if (seat === viewerSeat()) return "Your";
  const s = view.seats.find((x) => x.seat === seat);
  return s ? `${s.player_id}'s` : `Seat ${seat}'s`;
}

function actionHtml(a, i) {
  const who = a.seat ? html` <span class="badge">seat ${a.seat}</span>` : "";
  const key = `${a.action}-${a.seat ?? "table"}`;
  const busy = inFlight !== null;
  if (a.action === "bet" || a.action === "fund_bank") {
    const id = `amount-${a.action}-${a.seat}`;
    const range = a.max !== undefined ? `${chips(a.min)}–${chips(a.max)}` : `from ${chips(a.min)}`;
    return html`<form class="actions" data-action="${a.action}" data-index="${i}"><label>${LABELS[a.action]} amount (${range})
      <input id="${id}" type="number" inputmode="numeric" min="${a.min}" max="${a.max}"
        step="1" value="${a.min}" required></label>
      <button type="submit" class="primary" data-key="${key}" disabled="${busy ? "" : null}">${LABELS[a.action]}${who}</button></form>`;
  }
  if (a.action === "choose") {
    return a.choices.map((c) => html`<button type="button" data-action="${a.action}" data-index="${i}"
      data-choice="${c}" data-key="${key}-${c}" disabled="${busy ? "" : null}">${c === "pass" ? "Pass the deal" : "Deal a fourth time"}${who}</button>`);
  }
  const price = a.price ? ` (${chips(a.price)})` : "";
  const cls = a.action === "deal" || a.action === "ready" ? "primary" : a.action === "close" ? "danger" : "";
  return html`<button type="button" class="${cls}" data-action="${a.action}" data-index="${i}"
    data-key="${key}" disabled="${busy ? "" : null}">${LABELS[a.action]}${price}${who}</button>`;
}

function handHtml(hand) {
  if (!hand) return "";
  if (hand.cards) return hand.cards.map((c) => cardView(c));
  const down = Math.max(hand.cards_dealt - hand.shown.length, 0);
  return [hand.shown.map((c) => cardView(c)), Array.from({length: down}, () => cardView(null))];
}

/** What a settled turn came to, in words: "won 40", "lost 20", "passed". */
function turnResult(t) {
  if (t.outcome === "win") return `won ${chips(t.winnings)}${t.partly_paid ? " (what the pool held)" : ""}`;
  if (t.outcome === "lose") return `lost ${chips(t.stake)}`;
  if (t.outcome === "passed") return "passed";
  return "sat out the turn";
}

function lastTurnOf(seat) {
  const turns = view.last_deal ? view.last_deal.turns.filter((t) => t.seat === seat) : [];
  return turns.length ? turns[turns.length - 1] : null;
}

function seatHtml(s, d) {
  const hand = d ? d.hands.find((h) => h.seat === s.seat) : null;
  const bet = d && s.seat in d.bets ? d.bets[s.seat] : (d ? d.bets[String(s.seat)] : undefined);
  const you = me.role === "player" && s.player_id === me.player_id;
  const ready = view.starts === "ready" && view.ready.includes(s.seat);
  const badges = [you ? "you" : "", view.dealer === s.seat ? "dealer" : "",
    d && d.turn === s.seat ? "to act" : "", s.sitting_out ? "sitting out" : "",
    ready ? "ready" : ""].filter(Boolean);
  const settled = lastTurnOf(s.seat);
  // The seat's last settled turn in words (its cards are drawn in the results below).
  const result = settled ? html`<p class="seat-result" data-outcome="${settled.outcome}">
      <strong>${settled.seat === viewerSeat() ? "You" : s.player_id} ${turnResult(settled)}</strong>${settled.stake ? ` on a stake of ${chips(settled.stake)}` : ""}${settled.target ? ` against ${whose(s.seat).toLowerCase() === "your" ? "your" : whose(s.seat)} target, the ${cardName(settled.target)}` : ""}.</p>`
    : "";
  return html`<article class="seat${you ? " you" : ""}${d && d.turn === s.seat ? " turn" : ""}"
      data-seat="${s.seat}" aria-label="Seat ${s.seat}, ${s.player_id}">
    <h3>Seat ${s.seat}: ${s.player_id}${badges.map((b) => html`<span class="badge">${b}</span>`)}</h3>
    <div class="hand" role="group" aria-label="Hand of seat ${s.seat}">${handHtml(hand)}</div>
    <p>${s.balance === null || s.balance === undefined ? "" : html`Balance <strong class="seat-balance">${chips(s.balance)}</strong> · `}
      Bet <strong class="seat-bet">${bet === undefined ? "–" : bet === "sealed" ? "sealed" : chips(bet)}</strong></p>
    ${result}
  </article>`;
}

/** What the table waits for now, in words: who starts the next deal, or whose turn it is. */
function waitingFor() {
  const d = view.current_deal;
  const dealer = view.dealer;
  if (view.phase === "closed") return "The table is closed.";
  if (view.phase === "funding") {
    return dealer === viewerSeat() ? "Your turn to fund the bank."
      : `Waiting for ${who(dealer)} to fund the bank.`;
  }
  if (view.phase === "choice") {
    return dealer === viewerSeat() ? "Your choice: pass the deal or deal a fourth time."
      : `Waiting for ${who(dealer)} to pass the deal or deal a fourth time.`;
  }
  if (view.phase === "betting" && d) {
    if (d.turn) {
      return d.turn === viewerSeat() ? "Your turn to bet." : `Waiting for ${who(d.turn)} to bet.`;
    }
    const left = d.order.filter((s) => !d.acted.includes(s));
    return left.length ? `Waiting for sealed bets from ${left.map(who).join(", ")}.` : "Settling.";
  }
  if (view.starts === "ready") {
    const left = view.seats.map((s) => s.seat).filter((s) => !view.ready.includes(s));
    if (!view.seats.length) return "The next deal starts when every seated player is ready; no one is seated.";
    return `The next deal starts when every seated player is ready: waiting for ${left.map(who).join(", ")}.`;
  }
  if (dealer !== null && view.seats.some((s) => s.seat === dealer)) {
    const also = view.starts === "operator" ? " (or an operator)" : "";
    return dealer === viewerSeat() ? `You start the next deal, as the dealer${also}.`
      : `Waiting for ${who(dealer)}, the dealer, to start the next deal${also}.`;
  }
  return view.starts === "dealer" ? "Any seated player may start the draw for the first dealer."
    : "Waiting for an operator to start the draw for the first dealer.";
}

function targetHtml(d) {
  if (!d || !d.target || !d.target.card) return "";
  const label = d.target_seat ? `${whose(d.target_seat)} target (seat ${d.target_seat})`
    : d.target_kind === "low_card" ? "Everyone's target" : "Target";
  return html`<p class="target" data-target-seat="${d.target_seat ?? ""}">${label} ${cardView(d.target.card)}</p>`;
}

/** Everyone's result in a deal, the viewer first: "You won 60", "bob lost 20". */
function summaryOf(turns) {
  const net = new Map();
  for (const t of turns) {
    if (t.outcome !== "win" && t.outcome !== "lose") continue;
    net.set(t.seat, (net.get(t.seat) || 0) + (t.outcome === "win" ? t.winnings : -t.stake));
  }
  const mineFirst = [...net].sort(([a], [b]) => (a === viewerSeat() ? -1 : b === viewerSeat() ? 1 : a - b));
  return mineFirst.map(([seat, n]) => {
    const s = view.seats.find((x) => x.seat === seat);
    const name = seat === viewerSeat() ? "You" : (s ? s.player_id : `Seat ${seat}`);
    return n > 0 ? `${name} won ${chips(n)}` : n < 0 ? `${name} lost ${chips(-n)}` : `${name} broke even`;
  });
}

function resultsHtml() {
  const last = view.last_deal;
  if (!last || !last.turns.length) return html`<p class="muted">No turn has been settled since the last deal started.</p>`;
  const summary = last.finished ? summaryOf(last.turns) : [];
  return html`<h3>${last.finished ? "Last deal" : "This deal so far"}</h3>
    ${summary.length ? html`<p class="deal-summary"><strong>${summary.join(" · ")}</strong></p>` : ""}
    <div class="scroll" tabindex="0" role="region" aria-label="Turns of the deal"><table class="turns"><caption class="muted">Each turn, kept until the next deal starts</caption>
      <thead><tr><th scope="col">Player</th><th scope="col">Target</th><th scope="col">Stake</th><th scope="col">Cards shown</th><th scope="col">Result</th></tr></thead>
      <tbody>${last.turns.map((t) => html`<tr data-seat="${t.seat}" data-outcome="${t.outcome}">
        <th scope="row">${t.seat === viewerSeat() ? `You (seat ${t.seat})` : `${t.player_id} (seat ${t.seat})`}</th>
        <td>${t.target ? html`${whose(t.seat)} target ${cardView(t.target)}` : "–"}</td>
        <td>${t.stake ? chips(t.stake) : "–"}</td>
        <td class="hand">${t.shown.length ? t.shown.map((c) => cardView(c)) : "–"}</td>
        <td class="turn-result">${turnResult(t)}</td></tr>`)}</tbody></table></div>`;
}

function recentHtml() {
  if (!recent.length) return "";
  return html`<h3>Recent deals</h3><ul class="recent-deals">${recent.map((d) => {
    const p = me.role === "player" ? d.players.find((x) => x.player_id === me.player_id) : null;
    const yours = p ? ` · you ${p.returned - p.bets > 0 ? `won ${chips(p.returned - p.bets)}`
      : p.returned - p.bets < 0 ? `lost ${chips(p.bets - p.returned)}` : "broke even"}` : "";
    return html`<li>Deal finished ${when(d.finished_at)}${yours} ·
      <a href="${replayHref(d.deal_id)}">Replay deal ${String(d.deal_id).slice(0, 8)}</a></li>`;
  })}</ul>`;
}

/** The control that has the keyboard focus, by what names it across redraws. */
function focusedKey() {
  const active = document.activeElement;
  if (!active || !$("main").contains(active)) return null;
  return active.dataset.key ? `[data-key="${active.dataset.key}"]` : active.id ? `#${CSS.escape(active.id)}` : null;
}

function render() {
  const d = view.current_deal;
  const focused = focusedKey() || keepFocus;
  const inActions = keepFocus !== null
    || (document.activeElement && $("#actions").contains(document.activeElement));
  if (inFlight === null) keepFocus = null;
  $("#title").textContent = `${view.name} · ${view.title}`;
  document.title = `${view.name} · ${view.title} · Red Dog Ledger`;
  const dealer = view.seats.find((s) => s.seat === view.dealer);
  const turn = d && d.turn ? view.seats.find((s) => s.seat === d.turn) : null;
  const facts = [
    ["Phase", view.phase], ["Pot or bank", chips(view.pot)],
    ["Stake out", view.stake === null ? "sealed" : chips(view.stake)],
    ["Dealer", dealer ? `seat ${dealer.seat}: ${dealer.player_id}` : "not drawn yet"],
    ["Whose turn", turn ? `seat ${turn.seat}: ${turn.player_id}` : d ? (d.turn === null ? "everyone (sealed bets)" : "–") : "–"],
    ["Deals start by", STARTS[view.starts] || view.starts],
    ["Stitch round", view.stitch_round ? "yes" : "no"],
    ["Deals", chips(view.counters.deals)], ["Stitch rounds", chips(view.counters.stitch_rounds)],
    ["Pot splits", chips(view.counters.pot_splits)],
  ];
  fill($("#facts"), facts.map(([k, v]) => html`<div><dt>${k}</dt><dd data-fact="${k}">${v}</dd></div>`));
  $("#waiting").textContent = waitingFor();
  fill($("#target"), targetHtml(d));
  fill($("#seats"), view.seats.length ? view.seats.map((s) => seatHtml(s, d))
    : html`<p class="muted">No one is seated.</p>`);
  fill($("#results"), resultsHtml());
  fill($("#recent"), recentHtml());
  const kept = Object.fromEntries([...document.querySelectorAll("#actions input")].map((i) => [i.id, i.value]));
  const seen = new Set();
  const actions = view.legal_actions.map((a, i) => [a, i])
    .filter(([a]) => mine(a) && linkTo(view, a.action))
    .filter(([a]) => {  // one Deal button, however many seats may start the deal
      if (a.action !== "deal") return true;
      if (seen.has("deal")) return false;
      seen.add("deal");
      return true;
    });
  const own = me.role === "player" && view.seats.find((s) => s.player_id === me.player_id);
  const shown = actions.map(([a, i]) => actionHtml(a, i));
  if (own && view.phase !== "betting") {
    shown.push(html`<button type="button" data-leave="${own.seat}" data-key="leave-${own.seat}"
      disabled="${inFlight ? "" : null}">Leave seat ${own.seat}</button>`);
  }
  fill($("#actions"), shown.length ? shown : html`<p class="muted">Nothing for you to do now.</p>`);
  for (const [id, value] of Object.entries(kept)) { const input = document.getElementById(id); if (input) input.value = value; }
  // Keep the keyboard where it was; if its control went (an action taken), go to the next one.
  const again = focused ? document.querySelector(focused) : null;
  if (again && !again.disabled) again.focus({preventScroll: true});
  else if (inActions) ($("#actions button:not([disabled]), #actions input") || $("#your-turn")).focus({preventScroll: true});
  $("#updated").textContent = `Table version ${view.version}, shown ${new Date().toLocaleTimeString()}`;
}

async function refreshRecent() {
  if (!view || dealsFor === view.counters.deals) return;
  const wanted = view.counters.deals;
  const found = (await get(`/deals?table=${encodeURIComponent(tableId)}&limit=${RECENT_DEALS}`)).deals || [];
  const changed = JSON.stringify(found) !== JSON.stringify(recent);
  recent = found;
  // The list is read from the projection, which may not have folded the newest deal yet.
  const newest = view.last_deal && view.last_deal.finished ? view.last_deal.deal_id : null;
  dealsTries += 1;
  // A deal the viewer was not dealt in (a banker's) is never listed for them: stop asking.
  if (!newest || found.some((x) => x.deal_id === newest) || dealsTries >= 10) {
    dealsFor = wanted;
    dealsTries = 0;
  }
  if (changed) fill($("#recent"), recentHtml());  // unchanged: keep a focused link where it is
}

async function poll() {
  try {
    const answer = await get(`/tables/${tableId}`, {withEtag: true, headers: etag ? {"If-None-Match": etag} : {}});
    if (!answer.notModified) {
      view = answer.data;
      etag = answer.etag;
      render();
    }
    await refreshRecent();
  } catch (error) { fail(error); }
  setTimeout(poll, document.hidden ? POLL_MS * 4 : POLL_MS);
}

async function perform(a, extra, options) {
  switch (a.action) {
    case "deal": return follow(view, a.action, {}, options);
    case "ready": return follow(view, a.action, {seat: a.seat}, options);
    case "fund_bank": return follow(view, a.action, {amount: extra.amount}, options);
    case "decline_bank": return follow(view, a.action, undefined, options);
    case "choose": return follow(view, a.action, {choice: extra.choice}, options);
    case "bet": return follow(view, a.action, {seat: a.seat, amount: extra.amount}, options);
    case "buy": case "pass": return follow(view, a.action, {seat: a.seat}, options);
    case "split_pot":
      if (!await confirmed("Split the pot equally among the seated players?")) return null;
      return follow(view, a.action, undefined, options);
    case "close":
      if (!await confirmed("Close the table and pay out its pot?")) return null;
      return follow(view, a.action, undefined, options);
    default: throw new Error(`unknown action ${a.action}`);
  }
}

/** Take one action: one request, one Idempotency-Key, every chip-moving control disabled until
 * its answer (a second click on a disabled button does nothing; one on a control redrawn
 * meanwhile is refused here). */
async function run(a, extra) {
  if (inFlight !== null) return;
  inFlight = {name: a.action, key: newKey()};
  keepFocus = focusedKey() || "#your-turn";
  for (const control of document.querySelectorAll("#actions button")) control.disabled = true;
  try {
    const answer = await perform(a, extra, {headers: {"Idempotency-Key": inFlight.key}});
    inFlight = null;
    if (answer) {
      view = answer; etag = null;  // the command's answer is this viewer's view now
      say(`${LABELS[a.action]} done.`);
    }
  } catch (error) {
    inFlight = null;
    fail(error);
  }
  render();
}

$("#actions").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.target;
  const a = view.legal_actions[Number(form.dataset.index)];
  run(a, {amount: Number(form.querySelector("input").value)});
});
$("#actions").addEventListener("click", async (event) => {
  const button = event.target.closest("button");
  if (!button || button.type === "submit" || button.disabled) return;
  if (button.dataset.leave) {
    if (inFlight !== null) return;
    inFlight = {name: "leave", key: newKey()};
    button.disabled = true;
    try {
      view = await post(`/tables/${tableId}/seats/${button.dataset.leave}/leave`, undefined,
        {headers: {"Idempotency-Key": inFlight.key}});
      location.assign("/");
    } catch (error) { inFlight = null; fail(error); render(); }
    return;
  }
  const a = view.legal_actions[Number(button.dataset.index)];
  run(a, {choice: button.dataset.choice});
});

me = await signedIn();
poll();
