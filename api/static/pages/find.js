// Find a deal (operators, auditors; a player their own deals): search finished deals by player,
// table, variant, outcome, time and dispute, each linked to its replay; and read the event feed
// with its filters, each event shown as type, aggregate, time and transfers. The filters live in
// the page's address, so a search can be linked: /pages/find?player=alice&disputed=true.
import {$, $$, accountView, append, chips, documentedChoices, fillForm, formQuery, get, html,
  joined, listReads, refused, render, replayHref, say, signedIn} from "/static/pages/common.js";
import {timeView, variantName} from "/static/pages/words.js";

const DEAL_FIELDS = ["player", "table", "variant", "outcome", "since", "until", "disputed"];
const EVENT_FIELDS = ["player", "table", "wallet", "type", "since", "until", "after"];
const PAGE = 50;
const state = {deals: null, events: null};
const reads = {deals: listReads(), events: listReads()};

const findHref = (name, value) => `/pages/find?${name}=${encodeURIComponent(value)}`;

function dealHtml(d) {
  const players = d.players.map((p) => html`<li data-player="${p.player_id}">
      <a href="${findHref("player", p.player_id)}">${p.player_id}</a>
      <span class="muted">seat ${p.seat}</span>${p.outcome ? html` <span class="badge verdict">${p.outcome}</span>` : ""}
      ${p.bets === undefined ? "" : html`<span class="muted">bet ${chips(p.bets)}, back ${chips(p.returned)}</span>`}
      ${p.wallet_id ? html` <a href="/pages/wallet?id=${p.wallet_id}">wallet</a>` : ""}</li>`);
  return html`<li class="result" data-deal="${d.deal_id}">
    <div class="result-head"><strong>${variantName(d.variant)}</strong>
      <span>${timeView(d.finished_at)}</span>
      ${d.disputed ? html`<span class="badge disputed">disputed</span>` : ""}
      <a class="replay" href="${replayHref(d.deal_id)}">Replay</a></div>
    <dl class="facts">
      <div><dt>Table</dt><dd><a class="table-link" href="${findHref("table", d.table_id)}">${d.table_id.slice(0, 8)}</a></dd></div>
      <div><dt>Started</dt><dd>${timeView(d.started_at)}</dd></div>
      ${d.handle === null ? "" : html`<div><dt>Handle</dt><dd>${chips(d.handle)}</dd></div>
        <div><dt>Net (bets − returned)</dt><dd>${chips(d.net)}</dd></div>`}
    </dl>
    <ul class="players">${players}</ul>
    <small class="muted deal-id">Deal <code>${d.deal_id}</code></small></li>`;
}

async function findDeals(more = false) {
  const query = formQuery($("#deal-form"), DEAL_FIELDS);
  if (!more) {  // a new search: the last one's cursor and More go
    history.replaceState(null, "", `?${query}`);
    state.deals = null;
    $("#more-deals").hidden = true;
  }
  query.set("limit", PAGE);
  if (more && state.deals) query.set("after", state.deals);
  say("Searching…");
  const newest = reads.deals(more);
  try {
    const page = await get(`/deals?${query}`);
    if (!newest()) return;
    if (!more) render($("#deals"));
    append($("#deals"), page.deals.map(dealHtml));
    state.deals = page.next;
    $("#more-deals").hidden = !page.next;
    const count = $$("#deals > li").length;
    $("#deal-summary").textContent = `${count} deal${count === 1 ? "" : "s"} shown${page.next
      ? "; more may follow" : ""}. Indexed up to log position ${page.projection.position}`
      + (page.projection.behind ? ` (${page.projection.behind} events still to index).` : ".");
    say(count ? "" : "No finished deal matches.");
  } catch (error) {
    if (!newest()) return;
    render($("#deals"));
    $("#more-deals").hidden = true;
    refused($("#deal-summary"), error);
  }
}

function transfersOf(payload) {
  const found = [];
  const add = (t) => { if (t && typeof t === "object" && t.source && t.destination) found.push(t); };
  add(payload.transfer);
  add(payload.adjustment);
  (Array.isArray(payload.transfers) ? payload.transfers : []).forEach(add);
  return found;
}

function eventHtml(e) {
  const p = e.payload || {};
  const deal = p.deal_id || (e.aggregate_type === "CasinoDeal" ? e.aggregate_id : null);
  const links = [];
  if (deal) links.push(html`<a class="replay" href="${replayHref(deal)}">Replay deal ${String(deal).slice(0, 8)}</a>`);
  if (e.aggregate_type === "Dispute") links.push(html`<a href="/pages/disputes?id=${e.aggregate_id}">Dispute</a>`);
  if (e.aggregate_type === "Wallet") links.push(html`<a href="/pages/wallet?id=${e.aggregate_id}">Wallet</a>`);
  const moves = transfersOf(p).map((t) => html`<li class="transfer">${accountView(t.source)} → ${accountView(t.destination)}
    <strong>${chips(t.amount)}</strong></li>`);
  const facts = ["player_id", "seat", "outcome", "card", "amount", "variant", "status"]
    .filter((k) => p[k] !== undefined && p[k] !== null && typeof p[k] !== "object")
    .map((k) => `${k.replace("_id", "")} ${p[k]}`).join(" · ");
  return html`<li class="result" data-position="${e.position}" data-type="${e.type}">
    <div class="result-head"><strong>${e.type}</strong>
      <span>${e.aggregate_type} <code>${e.aggregate_id.slice(0, 8)}</code> v${e.version}</span>
      <span>${timeView(e.timestamp)}</span> <span class="muted">#${e.position}</span></div>
    ${facts ? html`<p class="muted">${facts}</p>` : ""}
    ${moves.length ? html`<ul class="transfers">${moves}</ul>` : ""}
    ${links.length ? html`<p class="links">${joined(links, " ")}</p>` : ""}</li>`;
}

async function readFeed(more = false) {
  const query = formQuery($("#event-form"), EVENT_FIELDS);
  if (!more) {  // a new read: the last one's position and More go
    history.replaceState(null, "", `?view=events&${query}`);
    state.events = null;
    $("#more-events").hidden = true;
  }
  query.set("limit", PAGE);
  if (more && state.events !== null) query.set("after", state.events);
  say("Reading the feed…");
  const newest = reads.events(more);
  try {
    const page = await get(`/events?${query}`);
    if (!newest()) return;
    if (!more) render($("#events"));
    append($("#events"), page.entries.map(eventHtml));
    state.events = page.next;
    $("#more-events").hidden = page.end;
    const count = $$("#events > li").length;
    $("#event-summary").textContent = `${count} event${count === 1 ? "" : "s"} shown, up to log position ${page.next}`
      + (page.end ? "; the end." : "; more may follow.");
    say(count || !page.end ? "" : "No event matches.");
  } catch (error) {
    if (!newest()) return;
    render($("#events"));
    $("#more-events").hidden = true;
    refused($("#event-summary"), error);
  }
}

function show(view) {
  for (const name of ["deals", "events"]) {
    $(`#tab-${name}`).setAttribute("aria-selected", String(name === view));
    $(`#${name}-view`).hidden = name !== view;
  }
}

async function fillChoices() {
  for (const name of ["variant", "outcome"]) {
    const values = await documentedChoices("/deals", name);
    append($(`#deal-form [name=${name}]`),
      values.map((v) => html`<option value="${v}">${v.replaceAll("_", " ")}</option>`));
  }
}

const me = await signedIn();
await fillChoices().catch((error) => refused($("#deal-summary"), error));
const staff = me.role !== "player";
$("#tab-events").hidden = !staff;
$("#tab-deals").addEventListener("click", () => show("deals"));
$("#tab-events").addEventListener("click", () => show("events"));
$("#deal-form").addEventListener("submit", (event) => { event.preventDefault(); findDeals(); });
$("#event-form").addEventListener("submit", (event) => { event.preventDefault(); readFeed(); });
$("#more-deals").addEventListener("click", () => findDeals(true));
$("#more-events").addEventListener("click", () => readFeed(true));
const params = new URLSearchParams(location.search);
if (params.get("view") === "events" && staff) {
  fillForm($("#event-form"), EVENT_FIELDS, params);
  show("events");
  await readFeed();
} else {
  fillForm($("#deal-form"), DEAL_FIELDS, params);
  if (me.role === "player" && !params.has("player")) $("#deal-form [name=player]").value = me.player_id;
  await findDeals();
}
