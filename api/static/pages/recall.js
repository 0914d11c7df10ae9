// Game recall (the player, operators, auditors): a player's last deals with cards, bets, outcome
// and the wallet's balance before and after, each linked to its replay; disputes marked.
import {$, cardView, chips, get, html, param, refused, render, replayHref, say, signedIn}
  from "/static/pages/common.js";
import {timeView, variantName} from "/static/pages/words.js";

function disputeHtml(d) {
  if (!d) return "";
  const upheld = d.upheld === null || d.upheld === undefined ? "" : d.upheld ? ", upheld" : ", rejected";
  return html`<a class="badge disputed" href="/pages/disputes?id=${encodeURIComponent(d.dispute_id)}">disputed: ${d.status}${upheld}${
    d.adjustment ? `, +${chips(d.adjustment)}` : ""}</a>`;
}

function dealHtml(d) {
  const cards = (d.cards || []).map((c) => cardView(c));
  return html`<li class="result" data-deal="${d.deal_id}">
    <div class="result-head"><strong>${variantName(d.variant)}</strong> <span>${timeView(d.ended)}</span>
      <span class="badge verdict">${d.outcome || "no bet"}</span> ${disputeHtml(d.dispute)}
      <a class="replay" href="${replayHref(d.deal_id)}">Replay</a></div>
    <dl class="facts">
      <div><dt>Before</dt><dd class="before">${chips(d.balance_before)}</dd></div>
      <div><dt>After</dt><dd class="after">${chips(d.balance_after)}</dd></div>
      <div><dt>Bet</dt><dd>${chips(d.bets)}</dd></div>
      <div><dt>Returned</dt><dd>${chips(d.returned)}</dd></div>
      <div><dt>Seat</dt><dd>${d.seat}</dd></div>
      <div><dt>Table</dt><dd><a href="/pages/find?table=${encodeURIComponent(d.table_id)}">${d.table_id.slice(0, 8)}</a></dd></div>
    </dl>
    ${cards.length || d.target ? html`<p class="hand">${cards}${d.target ? html` <span class="muted">target</span> ${cardView(d.target)}` : ""}</p>` : ""}</li>`;
}

async function recall(player, count) {
  history.replaceState(null, "", `?player=${encodeURIComponent(player)}&count=${count}`);
  try {
    const answer = await get(`/players/${encodeURIComponent(player)}/recall?count=${count}`);
    render($("#recall"), answer.deals.map(dealHtml));
    render($("#recall-summary"), answer.deals.length
      ? html`The last ${answer.deals.length} deals of <a href="/pages/find?player=${encodeURIComponent(player)}">${player}</a>
         (up to log position ${answer.projection.position}).`
      : `No finished deal of ${player} yet.`);
    say("");
  } catch (error) {
    render($("#recall"));
    refused($("#recall-summary"), error);
  }
}

const me = await signedIn();
const form = $("#who-form");
form.elements.player.value = param("player") || (me.role === "player" ? me.player_id : "");
form.elements.count.value = param("count") || "10";
form.addEventListener("submit", (event) => {
  event.preventDefault();
  if (form.reportValidity()) recall(form.elements.player.value.trim(), form.elements.count.value);
});
if (form.elements.player.value) await recall(form.elements.player.value, form.elements.count.value);
