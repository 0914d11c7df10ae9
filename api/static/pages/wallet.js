// A wallet (its player, operators, auditors): the statement with the running balance, each
// transfer's cause linked to its deal's replay (and an adjustment to its dispute), a page at a
// time; and the wallet as it stood at a version or an instant.
import {$, $$, accountView, append, chips, fillForm, formQuery, get, html, joined, listReads, param,
  refused, render, replayHref, say, signedIn} from "/static/pages/common.js";
import {timeView} from "/static/pages/words.js";

const id = param("id");
let nextVersion = null;
const statementRead = listReads();

function causeHtml(cause) {
  const links = [];
  if (cause.deal) links.push(html`<a class="cause-deal" href="${replayHref(cause.deal)}">deal ${String(cause.deal).slice(0, 8)}</a>`);
  if (cause.dispute) links.push(html`<a class="cause-dispute" href="/pages/disputes?id=${encodeURIComponent(cause.dispute)}">dispute ${String(cause.dispute).slice(0, 8)}</a>`);
  if (cause.table) links.push(html`<a href="/pages/find?table=${encodeURIComponent(cause.table)}">table ${String(cause.table).slice(0, 8)}</a>`);
  if (cause.event) links.push(html`<span class="muted">${cause.event}</span>`);
  return links.length ? joined(links, " · ") : "–";
}

function rowHtml(t) {
  return html`<li class="result transfer-row" data-version="${t.version}" data-transfer="${t.transfer_id}">
    <div class="result-head"><strong>${t.type}</strong> <span>${timeView(t.time)}</span>
      <span class="muted">v${t.version}</span></div>
    <dl class="facts">
      <div><dt>Amount</dt><dd class="amount ${t.amount < 0 ? "error" : "ok"}">${t.amount > 0 ? "+" : ""}${chips(t.amount)}</dd></div>
      <div><dt>Balance</dt><dd class="balance">${chips(t.balance)}</dd></div>
      <div><dt>${t.amount < 0 ? "To" : "From"}</dt><dd>${accountView(t.counterparty)}</dd></div>
      <div><dt>Cause</dt><dd class="cause">${causeHtml(t.cause || {})}</dd></div>
    </dl></li>`;
}

async function statement(more = false) {
  const query = formQuery($("#period"), ["since", "until"]);
  if (!more) {  // a new statement: the last one's cursor and More go
    history.replaceState(null, "", `?id=${encodeURIComponent(id)}&${query}`);
    nextVersion = null;
    $("#more").hidden = true;
  }
  if (more && nextVersion !== null) query.set("after_version", nextVersion);
  query.set("limit", "100");
  const newest = statementRead(more);
  try {
    const s = await get(`/wallets/${id}/statement?${query}`);
    if (!newest()) return;
    if (!more) render($("#statement"));
    append($("#statement"), s.transfers.map(rowHtml));
    nextVersion = s.next_version;
    $("#more").hidden = nextVersion === null;
    render($("#statement-summary"), s.empty ? "No transfer in this period."
      : html`Opening <strong>${chips(s.opening_balance)}</strong> · closing <strong id="closing">${chips(s.closing_balance)}</strong>
         · ${$$("#statement > li").length} transfers shown`);
  } catch (error) {
    if (newest()) refused($("#statement-summary"), error);
  }
}

async function asOf() {
  const query = formQuery($("#as-of"), ["version", "at"]);
  try {
    const past = await get(`/wallets/${id}/as-of?${query}`);
    render($("#as-of-answer"), html`<div><dt>Version</dt><dd id="as-of-version">${past.as_of_version}</dd></div>
      <div><dt>At</dt><dd>${timeView(past.as_of)}</dd></div>
      <div><dt>Balance</dt><dd id="as-of-balance">${chips(past.state.balance)}</dd></div>
      <div><dt>Granted</dt><dd>${chips(past.state.granted)}</dd></div>`);
    say("");
  } catch (error) { refused($("#as-of-answer"), error); }
}

// Listened to from the start (they need only the wallet's id, from the address): a submit while
// the wallet is read, or after it failed, is never the browser's own, which would drop the id.
$("#period").addEventListener("submit", (event) => { event.preventDefault(); if (id) statement(); });
$("#more").addEventListener("click", () => statement(true));
$("#as-of").addEventListener("submit", (event) => { event.preventDefault(); if (id) asOf(); });
await signedIn();
if (!id) {
  say("Name a wallet: /pages/wallet?id=<wallet id>.", true);
} else {
  try {
    const w = await get(`/wallets/${id}`);
    $("#owner").textContent = `of ${w.player_id}`;
    render($("#wallet"), html`<div><dt>Balance</dt><dd id="balance">${chips(w.balance)}</dd></div>
      <div><dt>Granted</dt><dd>${chips(w.granted)}</dd></div><div><dt>Version</dt><dd>${w.version}</dd></div>
      <div><dt>Wallet</dt><dd><code>${w.id}</code></dd></div>`);
    render($("#wallet-links"), html`<a href="/pages/find?player=${encodeURIComponent(w.player_id)}">Deals of ${w.player_id}</a>
      · <a href="/pages/recall?player=${encodeURIComponent(w.player_id)}">Recall</a>`);
    fillForm($("#period"), ["since", "until"]);
    await statement();
  } catch (error) { refused($("#wallet"), error); }
}
