// Verification (staff): the last run and its figures, a run over a range of the log, the
// recent runs and the checkpoints. Every run, here or `reddog verify`, is recorded in the log,
// unless it finds what the range's newest recorded run found: the answer is then that run.
import {$, chips, fail, get, html, post, render as fill, say, signedIn} from "/static/pages/common.js";
import {localTime, personText, timeView} from "/static/pages/words.js";

const by = (run) => personText(run.by_label, run.by_role, run.by);
const result = (run) => (run.ok ? html`<span class="result-pass">passed</span>`
  : html`<span class="result-fail">FAILED at position ${run.first_bad_position}</span>`);

function renderLast(run) {
  if (!run) { fill($("#last"), html`<p class="muted">No run recorded yet.</p>`); return; }
  const fact = (name, field, text) => html`<div><dt>${name}</dt><dd data-field="${field}">${text}</dd></div>`;
  fill($("#last"), html`<p id="last-result" data-ok="${String(run.ok)}">${result(run)}
      · positions ${run.first.toLocaleString("en")} to ${run.last.toLocaleString("en")} (${run.scope})</p>
    <dl class="facts" id="figures">
      ${fact("Positions", "positions", chips(run.positions))}${fact("Events", "events", chips(run.events))}
      ${fact("Transfers", "transfers", chips(run.transfers))}${fact("Deals checked", "deals_checked", chips(run.deals_checked))}
      ${fact("Checkpoints", "checkpoints", chips(run.checkpoints))}${fact("Took", "seconds", `${run.seconds.toFixed(2)} s`)}
      ${fact("By", "by", by(run))}${fact("Finished", "finished_at", timeView(run.finished_at))}
    </dl>${run.problem ? html`<p class="error" id="problem">${run.problem}</p>` : ""}`);
}

/** How many checkpoints there are, and how many are listed when that is not all of them. */
function checkpointCount(count, listed) {
  if (!count) return "No checkpoint recorded yet.";
  const all = `${chips(count)} checkpoint${count === 1 ? "" : "s"} recorded`;
  return listed < count ? `${all}; the newest ${chips(listed)} are listed.` : `${all}.`;
}

function render(state) {
  renderLast(state.last);
  fill($("#limits"), html`The log ends at position ${state.head.toLocaleString("en")}. A run here checks at most
    ${state.max_positions.toLocaleString("en")} positions; <code>reddog verify</code>, run on the server, checks the whole log.`);
  $("#to").max = state.head;
  $("#from").max = state.head;
  if (!$("#to").value) {
    $("#to").value = state.head;
    $("#from").value = Math.max(1, state.head - state.max_positions + 1);
  }
  fill($("#runs tbody"), state.runs.length ? state.runs.map((r) => html`<tr data-run="${r.id}">
    <td>${timeView(r.finished_at)}</td><td class="by">${by(r)}</td><td>${r.first}–${r.last}</td>
    <td class="num">${chips(r.positions)}</td><td class="num">${chips(r.deals_checked)}</td><td>${result(r)}</td></tr>`)
    : html`<tr><td colspan="6" class="muted">No runs yet.</td></tr>`);
  $("#checkpoint-count").textContent = checkpointCount(state.checkpoint_count, state.checkpoints.length);
  fill($("#checkpoints tbody"), state.checkpoints.length ? state.checkpoints.map((c) => html`<tr data-position="${c.position}">
    <td class="num">${c.position}</td><td>${c.first}–${c.last}</td><td class="num">${chips(c.events)}</td>
    <td>${timeView(c.time)}</td><td><code>${c.digest}</code></td></tr>`)
    : html`<tr><td colspan="5" class="muted">No checkpoint yet: one is written every 1,000 events.</td></tr>`);
}

async function load() { render(await get("/verification")); }

$("#run").addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = $("#run-button");
  button.disabled = true;
  say("Verifying…");
  try {
    const run = await post("/verification", {from: Number($("#from").value), to: Number($("#to").value)});
    const repeated = run.repeats ? ` The same as the run recorded ${localTime(run.finished_at)} by ${by(run)}: nothing new was recorded.` : "";
    say((run.ok ? `Verified positions ${run.first} to ${run.last}: everything holds.`
      : `Verification FAILED at position ${run.first_bad_position}.`) + repeated, !run.ok);
    // The list is read from the projection, which folds the new run a moment later.
    let state = await get("/verification");
    for (let i = 0; i < 10 && !state.runs.some((r) => r.id === run.id); i++) {
      await new Promise((done) => setTimeout(done, 250));
      state = await get("/verification");
    }
    render(state.runs.some((r) => r.id === run.id) ? state : {...state, last: run});
  } catch (error) { fail(error); } finally { button.disabled = false; }
});

signedIn().then(load).catch(fail);
