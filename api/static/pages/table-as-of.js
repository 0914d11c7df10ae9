// A table as it stood at a version or an instant (GET /tables/{id}/as-of), drawn as the table
// page draws a table: its name and variant, phase in words, pot or bank, dealer and whose turn,
// the deal then under way (target card, each seat's hand and bet) and the seats; with links to
// its deals and each seat's player. Cards nobody could see then stay face down.
import {$, cardView, chips, fillForm, formQuery, get, html, refused, render, signedIn}
  from "/static/pages/common.js";
import {tableName, timeView} from "/static/pages/words.js";

const FIELDS = ["id", "version", "at"];
// A table's phase (ledger/rules/highcard/state.py `Phase`) as a card room says it.
const PHASES = {
  ready: "between deals", funding: "waiting for the pot or bank to be staked",
  betting: "a deal under way", choice: "the dealer chooses: pass the deal or deal again",
  closed: "closed",
};

const phaseText = (phase) => PHASES[phase] || String(phase || "–").replaceAll("_", " ");
const seatText = (seats, number) => {
  const seat = seats.find((s) => s.seat === number);
  return seat ? `seat ${seat.seat}: ${seat.player_id}` : number ? `seat ${number}` : null;
};

function handHtml(hand) {
  if (!hand) return html`<span class="muted">no cards</span>`;
  if (hand.cards) return hand.cards.map((c) => cardView(c));
  const down = Math.max(hand.cards_dealt - hand.shown.length, 0);
  return [hand.shown.map((c) => cardView(c)), Array.from({length: down}, () => cardView(null))];
}

function seatHtml(t, s, d) {
  const hand = d ? d.hands.find((h) => h.seat === s.seat) : null;
  const bet = d ? d.bets[String(s.seat)] : undefined;
  const badges = [t.dealer === s.seat ? "dealer" : "", d && d.turn === s.seat ? "to act" : "",
    s.sitting_out ? "sitting out" : ""].filter(Boolean);
  return html`<li class="seat${d && d.turn === s.seat ? " turn" : ""}" data-seat="${s.seat}">
    <h3>Seat ${s.seat}: <a href="/pages/find?player=${encodeURIComponent(s.player_id)}">${s.player_id}</a>${
      badges.map((b) => html`<span class="badge">${b}</span>`)}</h3>
    ${d ? html`<div class="hand" role="group" aria-label="Hand of seat ${s.seat}">${handHtml(hand)}</div>
      <p>Bet <strong class="seat-bet">${bet === undefined || bet === null ? "–" : bet === "sealed" ? "sealed" : chips(bet)}</strong></p>` : ""}
  </li>`;
}

function factsOf(t) {
  const d = t.current_deal;
  const fact = (name, key, value) => html`<div><dt>${name}</dt><dd data-fact="${key}">${value}</dd></div>`;
  if (t.variant === "casino") {
    return [fact("Variant", "variant", "Casino Red Dog"), fact("Player", "player_id", t.player_id),
      fact("Deals dealt", "deals", chips(t.deals)), fact("Next deal", "next_nonce", `number ${chips(t.next_nonce)}`)];
  }
  const seats = t.seats || [];
  const turn = d && d.turn ? seatText(seats, d.turn) : d ? (d.turn === null ? "everyone (sealed bets)" : "–") : "–";
  return [
    fact("Variant", "variant", t.title || t.variant), html`<div><dt>Phase</dt><dd data-fact="phase" data-phase="${t.phase}">${phaseText(t.phase)}</dd></div>`,
    fact("Pot or bank", "pot", chips(t.pot)),
    fact("Stake out", "stake", t.stake === null ? "sealed" : chips(t.stake)),
    fact("Dealer", "dealer", seatText(seats, t.dealer) || "not drawn yet"),
    fact("Whose turn", "turn", turn),
    fact("Deals dealt", "deals", chips(t.counters ? t.counters.deals : t.deals)),
    fact("Next deal", "next_nonce", `number ${chips(t.next_nonce)}`),
  ];
}

async function show() {
  const form = $("#as-of");
  const query = formQuery(form, FIELDS);
  history.replaceState(null, "", `?${query}`);
  const id = query.get("id");
  query.delete("id");
  try {
    const past = await get(`/tables/${encodeURIComponent(id)}/as-of?${query}`);
    const t = past.state;
    const d = t.current_deal;
    render($("#as-of-summary"), html`<strong>${tableName(t)}</strong> as it stood at version
      <strong id="as-of-version">${past.as_of_version}</strong>, ${timeView(past.as_of)} ·
      <a href="/pages/find?table=${encodeURIComponent(id)}">Deals at this table</a>`);
    render($("#table"), factsOf(t));
    render($("#target"), d && d.target && d.target.card
      ? html`<p>Target card ${cardView(d.target.card)}</p>` : "");
    const seats = t.seats || [];
    render($("#seats"), t.variant === "casino" ? html`<li class="muted">One player's table: ${t.player_id}.</li>`
      : seats.length ? seats.map((s) => seatHtml(t, s, d)) : html`<li class="muted">No one was seated.</li>`);
    $("#status").textContent = "";
  } catch (error) {
    render($("#table"));
    render($("#target"));
    render($("#seats"));
    refused($("#as-of-summary"), error);
  }
}

await signedIn();
fillForm($("#as-of"), FIELDS);
$("#as-of").addEventListener("submit", (event) => {
  event.preventDefault();
  if ($("#as-of").reportValidity()) show();
});
if ($("#as-of").elements.id.value) await show();
