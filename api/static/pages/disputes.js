// Disputes: staff's queue of open disputes (oldest first) and the resolved ones; one dispute with
// its deal (replay and the in-browser fairness check are one link away) and, for operators, the
// resolution: a finding and, where the ledger owes the player, an adjustment the house pays into
// their wallet citing the dispute. A player sees their own disputes and the findings.
import {$, $$, Intent, append, chips, confirmedThen, fail, get, html, listReads, param, post, render,
  replayHref, say, signedIn, whileInFlight} from "/static/pages/common.js";
import {timeView} from "/static/pages/words.js";

let me = null;
let status = "open";
let next = null;

const short = (id) => String(id).slice(0, 8);

function outcomeText(d) {
  if (d.status === "open") return "open";
  return d.upheld ? `upheld${d.adjustment ? `, ${chips(d.adjustment.amount)} paid` : ""}` : "not upheld";
}

function row(d) {
  return html`<tr data-dispute="${d.dispute_id}">
    <td>${timeView(d.opened_at)}</td><td>${d.player_id}</td>
    <td><a href="${replayHref(d.deal_id)}">deal ${short(d.deal_id)}</a></td>
    <td class="message">${d.message}</td><td class="dispute-status">${outcomeText(d)}</td>
    <td><button type="button" data-open="${d.dispute_id}">Open</button></td></tr>`;
}

const listRead = listReads();

async function list(more = false) {
  if (!more) { next = null; $("#more").hidden = true; }  // the other list's cursor is not this one's
  const newest = listRead(more);
  const page = await get(`/disputes?status=${status}&limit=50${more && next ? `&after=${next}` : ""}`);
  if (!newest()) return;
  const body = $("#disputes tbody");
  const rows = page.disputes.map(row);
  if (more) append(body, rows);
  else render(body, rows.length ? rows : html`<tr><td colspan="6" class="muted">No ${status} disputes.</td></tr>`);
  next = page.next;
  $("#more").hidden = !next;
  const lag = page.projection && page.projection.lag;
  if (lag) say(`The list may be ${lag} events behind the ledger.`);
}

function resolveForm(d) {
  if (me.role !== "operator" || d.status !== "open") return "";
  return html`<form id="resolve"><fieldset><legend>Resolve this dispute</legend>
    <p class="muted">Replay the deal and run its fairness check before you decide.</p>
    <label>Finding (shown to the player)
      <input id="finding" required maxlength="1000" autocomplete="off"></label>
    <label class="inline"><input type="checkbox" id="upheld"> The ledger owes the player (upheld)</label>
    <label>Adjustment in chips, paid by the house
      <input id="adjustment" type="number" min="0" step="1" inputmode="numeric" value="0" disabled></label>
    <button type="submit" class="primary" id="resolve-button">Resolve</button>
  </fieldset></form>`;
}

function show(d) {
  const adjustment = d.adjustment
    ? html`<dt>Adjustment</dt><dd id="adjustment-paid">${chips(d.adjustment.amount)} chips, house → ${d.player_id}'s wallet,
        transfer <code>${short(d.adjustment.id)}</code></dd>`
    : "";
  render($("#detail"), html`<h2>Dispute ${short(d.dispute_id)}</h2>
    <dl class="facts dispute">
      <div><dt>Player</dt><dd>${d.player_id}</dd></div>
      <div><dt>Deal</dt><dd><a id="replay-link" href="${replayHref(d.deal_id)}">Replay deal ${short(d.deal_id)} and check its fairness</a></dd></div>
      <div><dt>Opened</dt><dd>${timeView(d.opened_at)}</dd></div>
      <div><dt>Status</dt><dd id="dispute-status">${outcomeText(d)}</dd></div>
    </dl>
    <p><strong>The player says:</strong> <span id="dispute-message">${d.message}</span></p>
    ${d.status === "resolved" ? html`<dl class="facts"><div><dt>Finding</dt><dd id="dispute-finding">${d.finding}</dd></div>
      <div><dt>Resolved</dt><dd>${timeView(d.resolved_at)}</dd></div>${adjustment ? html`<div>${adjustment}</div>` : ""}</dl>` : ""}
    ${resolveForm(d)}`);
  const form = $("#resolve");
  if (!form) return;
  const upheld = $("#upheld");
  const amount = $("#adjustment");
  upheld.addEventListener("change", () => {
    amount.disabled = !upheld.checked;
    if (!upheld.checked) amount.value = "0";
  });
  const intent = new Intent();  // one resolution, one Idempotency-Key, however often it is sent
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const adjustment = Number(amount.value || 0);
    if (!Number.isInteger(adjustment) || adjustment < 0) { say("The adjustment is a whole number of chips, 0 or more.", true); return; }
    const resolve = () => post(`/disputes/${d.dispute_id}/resolve`,
      {finding: $("#finding").value, upheld: upheld.checked, adjustment}, {idempotencyKey: intent.value});
    // Taken once: Resolve is held until the answer, and a confirmed adjustment's dialog too.
    whileInFlight([$("#resolve-button")], async () => {
      try {
        const resolved = adjustment > 0 ? await confirmedThen(
          `Pay ${chips(adjustment)} chips from the house into ${d.player_id}'s wallet, citing this dispute?`,
          resolve, `Paying ${chips(adjustment)} chips to ${d.player_id}…`) : await resolve();
        if (!resolved) return;  // the adjustment was not confirmed
        say(`Dispute ${String(resolved.dispute_id).slice(0, 8)} resolved: ${outcomeText(resolved)}.`);
        show(resolved);
        await list();
        // The queue is read from the read models, which may not have folded this resolution yet:
        // the page does not list as open a dispute it has just resolved.
        if (status === "open") $(`#disputes tr[data-dispute="${resolved.dispute_id}"]`)?.remove();
      } catch (error) { fail(error); }
    }, {reason: "Resolving the dispute…"});
  });
}

async function openDispute(id) {
  try {
    show(await get(`/disputes/${encodeURIComponent(id)}`));
    $("#detail h2").scrollIntoView({block: "nearest"});
  } catch (error) { fail(error); }
}

async function main() {
  me = await signedIn();
  if (me.role === "player") $("#title").textContent = "Your disputes";
  $$(".tabs button").forEach((button) => button.addEventListener("click", async () => {
    status = button.dataset.status;
    $$(".tabs button").forEach((b) => b.setAttribute("aria-pressed", String(b === button)));
    try { await list(); } catch (error) { fail(error); }
  }));
  $("#more").addEventListener("click", () => list(true).catch(fail));
  $("#disputes").addEventListener("click", (event) => {
    const button = event.target.closest("[data-open]");
    if (button) openDispute(button.dataset.open);
  });
  await list();
  const id = param("id");
  if (id) await openDispute(id);
}

main().catch(fail);
