// The auditor's console: where each audit tool is, the size of the disputes queue, the last
// verification. An old link `/pages/audit?deal=<id>` opens that deal's replay.
import {$, fail, get, html, param, render, replayHref, signedIn} from "/static/pages/common.js";
import {localTime, personText, timeView} from "/static/pages/words.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function replay(dealId) { location.assign(replayHref(dealId)); }

async function queue() {
  const page = await get("/disputes?status=open&limit=100");
  const count = page.disputes.length;
  render($("#queue"), count
    ? html`<strong id="open-disputes">${count}${page.next ? "+" : ""}</strong> open, the oldest opened ${timeView(page.disputes[0].opened_at)}.`
    : html`<span id="open-disputes">No open disputes.</span>`);
}

async function verification() {
  try {
    const status = await get("/verification", {noRedirect: true});
    const last = status.last;
    if (last) {
      $("#verification").textContent = `Last run (${last.scope}, positions ${last.first.toLocaleString("en")}–${last.last.toLocaleString("en")}) by ${
        personText(last.by_label, last.by_role, last.by)}, finished ${localTime(last.finished_at)}: ${
        last.ok ? "passed" : `FAILED at position ${last.first_bad_position}`}.`;
    }
  } catch { /* no run yet, or not for this role: the link still says where to go */ }
}

async function main() {
  const dealId = param("deal");
  if (dealId && UUID.test(dealId)) { replay(dealId); return; }
  const me = await signedIn();
  $("#go-replay").addEventListener("submit", (event) => {
    event.preventDefault();
    replay($("#deal-id").value.trim());
  });
  if (me.role !== "player") await Promise.all([queue(), verification()]);
}

main().catch(fail);
