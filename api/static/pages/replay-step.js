// The replay viewer's drawing: the deal's facts (its seeds and where it was read from) and one
// step: its operation in words, the chips it moved (from → to, amount, cause), the cards on the
// table, the pot or bank, the stakes and each seat's balance after it.
import {$, cardView, chips, html, render} from "/static/pages/common.js";
import {short, words} from "/static/pages/replay-words.js";
import {timeView} from "/static/pages/words.js";

function facts(pairs) {
  return pairs.map(([key, label, value]) => html`<div><dt>${label}</dt><dd data-fact="${key}">${value}</dd></div>`);
}

const hex = (value) => html`<code class="hex">${value}</code>`;

/** The deal's title and facts, in #title and #facts. */
export function showFacts(record) {
  $("#title").textContent = record.source === "file"
    ? `Hand history: ${record.title} deal ${short(record.deal_id)}`
    : `Replay: ${record.title} deal ${short(record.deal_id)}`;
  document.title = `Replay ${short(record.deal_id)} · Red Dog Ledger`;
  render($("#facts"), facts([
    ["source", "Read from", record.source === "file" ? `the file ${record.file} (in this browser only)` : "the server's replay"],
    ["variant", "Variant", html`${record.title}${record.title !== record.variant ? html` <small class="muted">(${record.variant})</small>` : ""}`],
    ["deal", "Deal", hex(record.deal_id)],
    ["table", "Table", hex(record.table_id)],
    ["started", "Committed at", timeView(record.started)],
    ["nonce", "Nonce", record.nonce],
    ["client_seed", "Client seed", hex(record.client_seed)],
    ["commitment", "Commitment (SHA-256 of the server seed)", hex(record.commitment)],
    ["server_seed", "Server seed, revealed", record.server_seed ? hex(record.server_seed) : "not revealed until the deal ends"],
  ]));
}

function hand(cards) {
  return cards && cards.length
    ? cards.map((c) => html`<span class="held${c.returned ? " returned" : ""}">${cardView(c.card)}</span>`)
    : html`<span class="muted">no cards</span>`;
}

function balance(record, frame, seat) {
  const value = frame.balance[seat];
  const net = frame.net[seat] || 0;
  const shown = value === null || value === undefined
    ? html`<strong class="seat-balance" data-hidden="true">${record.source === "file" ? "not in the file" : "hidden"}</strong>`
    : html`<strong class="seat-balance">${chips(value)}</strong>`;
  return html`Balance ${shown} · this deal <strong class="seat-net">${net > 0 ? "+" : net < 0 ? "−" : ""}${chips(Math.abs(net))}</strong>`;
}

function transfers(name, frame) {
  if (!frame.moved.length) return html`<p class="muted">No chips moved in this step.</p>`;
  return html`<ul class="transfers">${frame.moved.map((t) => html`<li data-transfer="${t.id ?? ""}">
    <span>${name.account(t.source)} → ${name.account(t.destination)}</span>
    <strong class="amount">${chips(t.amount)}</strong>
    <small class="muted">cause: ${name.cause(t.cause)}</small></li>`)}</ul>`;
}

function casino(record, frame) {
  const slot = (position, label) => {
    const c = frame.cards.find((x) => x.position === position);
    return html`<div class="slot" data-slot="${position}">${c ? cardView(c.card) : html`<span class="empty"></span>`}<small>${label}</small></div>`;
  };
  const [s] = record.seats;
  const outcome = frame.outcome ? `${frame.outcome}${frame.odds ? ` (pays ${frame.odds} to 1)` : ""}` : "–";
  return html`<section class="felt" aria-label="The cards">
      <div class="slots">${slot(0, "First card")}${slot(2, "Third card")}${slot(1, "Second card")}</div>
    </section>
    <dl class="facts">${facts([
      ["bank", "Bank", "the house"], ["bet", "Opening bet", chips(frame.bet)],
      ["raised", "Raised", frame.raised ? "yes" : "no"], ["stake", "Stake", chips(frame.stake)],
      ["outcome", "Outcome", outcome], ["returned", "Returned", chips(frame.returned)],
      ...(frame.state && frame.state.phase ? [["phase", "Phase", frame.state.phase]] : []),
    ])}</dl>
    <div class="seats"><article class="seat" data-seat="${s.seat}" aria-label="Seat ${s.seat}, ${s.player_id}">
      <h3>Seat ${s.seat}: ${s.player_id}</h3><p>${balance(record, frame, s.seat)}</p></article></div>`;
}

function table(record, name, frame, me) {
  const centre = [];
  if (frame.target) centre.push(html`<div class="centre-cards" id="target">Target${frame.target.seat ? ` for seat ${frame.target.seat}` : ""} ${cardView(frame.target.card)}</div>`);
  if (frame.burned.length) centre.push(html`<div class="centre-cards" id="burned">Burned ${frame.burned.map((c) => cardView(c.card))}</div>`);
  if (frame.discarded.length) centre.push(html`<div class="centre-cards" id="discarded">Set aside ${frame.discarded.map((c) => cardView(c.card))}</div>`);
  const seats = record.seats.map((s) => {
    const bet = frame.bets[s.seat];
    const badges = [frame.dealer === s.seat ? "dealer" : "", me && me.role === "player" && s.player_id === me.player_id ? "you" : ""].filter(Boolean);
    return html`<article class="seat" data-seat="${s.seat}" aria-label="Seat ${s.seat}, ${s.player_id}">
      <h3>Seat ${s.seat}: ${s.player_id}${badges.map((b) => html`<span class="badge">${b}</span>`)}</h3>
      <div class="hand" role="group" aria-label="Hand of seat ${s.seat}">${hand(frame.hands[s.seat])}</div>
      <p>Bet <strong class="seat-bet">${bet === undefined ? "–" : bet === null ? "sealed" : chips(bet)}</strong></p>
      <p>${balance(record, frame, s.seat)}</p></article>`;
  });
  return html`<dl class="facts">${facts([
      ["pot", "Pot or bank", chips(frame.pot)], ["stake", "Stake out (bets not settled)", chips(frame.stake)],
      ["dealer", "Dealer", frame.dealer ? name.seat(frame.dealer) : "–"],
      ...(frame.state && frame.state.phase ? [["phase", "Phase", frame.state.phase]] : []),
    ])}</dl>
    ${centre.length ? html`<div class="centre">${centre}</div>` : ""}
    <div class="seats">${seats}</div>`;
}

/** Step `at` (from 0) of the frames, in #step; `name` is the record's namer (replay-words.js). */
export function showStep(record, name, frames, at, me) {
  const frame = frames[at];
  const e = frame.event;
  render($("#step"), html`<div class="step" data-step="${at + 1}" data-version="${e.version}" data-type="${e.type}">
    <p class="step-head"><span class="badge">v${e.version}</span> <strong>${words(e.type)}</strong>
      <small class="muted">${timeView(e.timestamp)}</small></p>
    <p class="operation" id="operation">${frame.words}</p>
    <h3>Chips moved</h3>${transfers(name, frame)}
    <h3>After this step</h3>${record.casino ? casino(record, frame) : table(record, name, frame, me)}</div>`);
}
