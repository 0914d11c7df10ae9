// The replay viewer's disputes: the deal's player may dispute it; everyone sees the deal's
// disputes they may read, in #disputes.
import {$, chips, errorText, fail, get, html, post, render, say} from "/static/pages/common.js";
import {short} from "/static/pages/replay-words.js";
import {timeView} from "/static/pages/words.js";

function dispute(me, d) {
  const resolved = d.status === "resolved";
  const link = me.role === "player" ? "" : html` <a href="/pages/disputes?id=${encodeURIComponent(d.dispute_id)}">Open dispute ${short(d.dispute_id)}…</a>`;
  return html`<li class="dispute" data-dispute="${d.dispute_id}" data-status="${d.status}">
    <strong>${d.player_id}'s dispute is ${d.status}</strong>${link}
    <br><span class="muted">“${d.message}”, opened ${timeView(d.opened_at)}</span>
    ${resolved ? html`<br>Finding: ${d.finding} (${d.upheld ? "upheld" : "not upheld"}${d.adjustment ? `, ${chips(d.adjustment.amount)} paid to the wallet` : ""})` : ""}</li>`;
}

/** The record's disputes, and the form to dispute it where `me` is its player and may. */
export async function showDisputes(record, me) {
  const box = $("#disputes");
  const mine = me.role === "player" && record.seats.some((s) => s.player_id === me.player_id);
  if (me.role === "player" && !mine) { render(box); return; }
  try {
    const {disputes} = await get(`/disputes?deal=${encodeURIComponent(record.deal_id)}`);
    render(box, html`<h3>Disputes</h3>`, disputes.length
      ? html`<ul class="disputes">${disputes.map((d) => dispute(me, d))}</ul>`
      : html`<p class="muted">${me.role === "player" ? "You have not disputed this deal." : "No one has disputed this deal."}</p>`,
    mine && !disputes.length && record.finished ? html`<form id="dispute-form" class="dispute-form">
        <label for="dispute-message">Dispute this deal: what is wrong with it?</label>
        <textarea id="dispute-message" rows="3" maxlength="1000" required></textarea>
        <p><button type="submit" class="primary">Dispute this deal</button></p></form>` : "");
    const form = $("#dispute-form");
    if (form) form.addEventListener("submit", (event) => openDispute(event, record, me));
  } catch (error) {
    render(box, html`<p class="error">The deal's disputes could not be read: ${errorText(error)}</p>`);
  }
}

async function openDispute(event, record, me) {
  event.preventDefault();
  const message = $("#dispute-message").value;
  try {
    const opened = await post(`/deals/${record.deal_id}/disputes`, {message});
    say(`Your dispute ${short(opened.dispute_id)}… is open: staff will review the deal.`);
    await showDisputes(record, me);
  } catch (error) {
    fail(error);
  }
}
