// The replay viewer's fairness check, here, with Web Crypto (fairness.js), on the deal's own
// events (a multi-seat table's carry its deal_id), shown in #fairness: the verdict, each check,
// the first difference with a button to its step, and the recomputed pack.
import {$, cardView, html, render} from "/static/pages/common.js";
import {checkDeal} from "/static/pages/fairness.js";
import {words} from "/static/pages/replay-words.js";

let shown = null;  // the record whose check is running or shown

/** Check the record's deal and show the result; `stepOf(version)` is the index of the step of an
 * event version, or -1. */
export async function showFairness(record, stepOf) {
  shown = record;
  const box = $("#fairness");
  box.removeAttribute("data-result");
  if (!record.server_seed) {
    render(box, html`<p class="muted">The server seed is revealed, and the deal checkable, when the deal ends.</p>`);
    box.dataset.result = "unfinished";
    return;
  }
  render(box, html`<p class="muted">Checking…</p>`);
  const events = record.steps.map((s) => s.event)
    .filter((e) => record.casino || e.payload?.deal_id === record.deal_id);
  const [committed, ...rest] = events;
  const result = await checkDeal({
    serverSeed: record.server_seed, commitment: committed.payload.commitment,
    clientSeed: committed.payload.client_seed, nonce: committed.payload.nonce,
    commitmentVersion: committed.version, events: rest,
  });
  if (shown !== record) return;  // another deal was opened meanwhile
  const goto = (version) => {
    const index = stepOf(version);
    return index < 0 ? "" : html`<button type="button" class="link" data-goto="${index}">Show that step</button>`;
  };
  const c = result.commitment;
  const lines = [html`<li id="check-commitment" data-ok="${String(c.ok)}" class="${c.ok ? "ok" : "error"}">
    <strong>Commitment ${c.ok ? "matches" : "does not match"}</strong>: SHA-256 of the server seed is
    <code class="hex">${c.computed ?? "not computable"}</code>; the deal committed to
    <code class="hex">${c.committed}</code>.</li>`];
  if (result.packError) {
    lines.push(html`<li id="check-pack" class="error"><strong>No pack</strong>: ${result.packError}.</li>`);
  }
  const f = result.first;
  if (!f) {
    lines.push(html`<li id="check-cards" data-ok="true" class="ok"><strong>Every card matches</strong>:
      the ${result.cardsChecked} cards the log shows are the recomputed pack's, each taken from the
      top in turn, all after the commitment.</li>`);
  } else if (f.kind === "card") {
    lines.push(html`<li id="first-difference" data-ok="false" class="error" data-position="${f.position ?? ""}"
      data-expected="${f.expected ?? ""}" data-logged="${f.logged ?? ""}" data-version="${f.version}">
      <strong>First difference, pack position ${f.position}</strong>: the pack has
      ${f.expected ? cardView(f.expected) : "no card"}, the log shows ${cardView(f.logged)}
      (step v${f.version}, ${words(f.type)}). ${goto(f.version)}</li>`);
  } else {
    lines.push(html`<li id="first-difference" data-ok="false" class="error" data-position="${f.position ?? ""}"
      data-version="${f.version}"><strong>First difference</strong>: ${f.detail}. ${goto(f.version)}</li>`);
  }
  box.dataset.result = result.passes ? "passes" : "fails";
  render(box, html`<p class="verdict ${result.passes ? "ok" : "error"}" id="verdict">${result.passes
    ? "Passes: the pack is the one committed to, and every card the log shows is that pack's."
    : "Fails: this deal's log is not the committed shuffle."}</p>
    <ul class="checks">${lines}</ul>
    ${result.pack ? html`<details><summary>The recomputed pack, top first</summary>
      <div class="pack">${result.pack.map((card, i) => html`<span title="position ${i}">${cardView(card)}</span>`)}</div></details>` : ""}`);
}
