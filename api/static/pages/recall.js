// Game recall (the player, operators, auditors): a player's last deals with cards, bets, outcome
// and the wallet's balance before and after, each linked to its replay; disputes marked.
import {$, cardHtml, chips, esc, get, param, refused, replayHref, say, signedIn, when}
  from "/static/pages/common.js";

function disputeHtml(d) {
  if (!d) return "";
  const upheld = d.upheld === null || d.upheld === undefined ? "" : d.upheld ? ", upheld" : ", rejected";
  return `<a class="badge disputed" href="/pages/disputes?id=${encodeURIComponent(d.dispute_id)}">disputed: ${esc(d.status)}${upheld}${
    d.adjustment ? `, +${chips(d.adjustment)}` : ""}</a>`;
}

function dealHtml(d) {
  const cards = (d.cards || []).map(cardHtml).join("");
  return `<li class="result" data-deal="${esc(d.deal_id)}">
    <div class="result-head"><strong>${esc(d.variant)}</strong> <span>${when(d.ended)}</span>
      <span class="badge verdict">${esc(d.outcome || "no bet")}</span> ${disputeHtml(d.dispute)}
      <a class="replay" href="${replayHref(d.deal_id)}">Replay</a></div>
    <dl class="facts">
      <div><dt>Before</dt><dd class="before">${chips(d.balance_before)}</dd></div>
      <div><dt>After</dt><dd class="after">${chips(d.balance_after)}</dd></div>
      <div><dt>Bet</dt><dd>${chips(d.bets)}</dd></div>
      <div><dt>Returned</dt><dd>${chips(d.returned)}</dd></div>
      <div><dt>Seat</dt><dd>${d.seat}</dd></div>
      <div><dt>Table</dt><dd><a href="/pages/find?table=${encodeURIComponent(d.table_id)}">${esc(d.table_id.slice(0, 8))}</a></dd></div>
    </dl>
    ${cards || d.target ? `<p class="hand">${cards}${d.target ? ` <span class="muted">target</span> ${cardHtml(d.target)}` : ""}</p>` : ""}</li>`;
}

async function recall(player, count) {
  history.replaceState(null, "", `?player=${encodeURIComponent(player)}&count=${count}`);
  try {
    const answer = await get(`/players/${encodeURIComponent(player)}/recall?count=${count}`);
    $("#recall").innerHTML = answer.deals.map(dealHtml).join("");
    $("#recall-summary").innerHTML = answer.deals.length
      ? `The last ${answer.deals.length} deals of <a href="/pages/find?player=${encodeURIComponent(player)}">${esc(player)}</a>
         (up to log position ${answer.projection.position}).`
      : `No finished deal of ${esc(player)} yet.`;
    say("");
  } catch (error) {
    $("#recall").innerHTML = "";
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
