// The public log as this browser has seen it: the log's key, trusted on first use, and the newest
// checkpoint this browser has checked, kept in localStorage (per log origin) across pages and
// visits. Every checkpoint a page fetches (a receipt's, or GET /log/checkpoint) is checked here
// with tlog.js: signed by the kept key, then compared with the kept checkpoint. A newer one
// replaces it only once GET /log/proof/consistency proves it extends the kept one; an older one
// (a receipt kept from before) must be proved to be a prefix of it. Anything else (a fork: the
// same size with another root; the log's newest checkpoint smaller than the kept one; a proof
// that does not hold; a bad signature; a changed key) is shown in #log-alarm, in words, and the
// kept checkpoint stays as it was.
import {$, ApiError, append, download, get, html, render} from "/static/pages/common.js";
import {NoteError, ProofError, b64, emptyRoot, openCheckpoint, parseVerifier, unb64, verifyConsistency}
  from "/static/pages/tlog.js";

const KEY = "reddog.log.key";
const CHECKPOINT = "reddog.log.checkpoint:";

let keyPromise = null;  // this page's one look at GET /log/key
let queue = Promise.resolve();  // checkpoints are compared one at a time
let last = null;  // what the last comparison found: {ok, state, what, kept}

function read(name) {
  try { return JSON.parse(localStorage.getItem(name)); } catch { return null; }
}

/** The checkpoint this browser keeps for the log `origin`: {origin, size, root, note, seen}, or
 * null. */
export function kept(origin) { return read(CHECKPOINT + origin); }

/** The log key this browser trusts: {text, since}, or null. */
export function keptKey() { return read(KEY); }

/** A sentence of this module's, begun with a capital. */
export const cap = (text) => String(text).charAt(0).toUpperCase() + String(text).slice(1);
const shortRoot = (root) => `${String(root).slice(0, 12)}…`;
const at = (instant) => String(instant || "").slice(0, 19).replace("T", " ");

/** Say a failure loudly: in #log-alarm (made at the top of the page's main if it has none), a
 * live region that says it at once, and that stays. */
export function alarm(kind, what) {
  let box = $("#log-alarm");
  if (!box) {
    box = document.createElement("section");
    box.id = "log-alarm";
    box.className = "alarm";
    box.setAttribute("role", "alert");
    box.setAttribute("aria-labelledby", "log-alarm-h");
    render(box, html`<h2 id="log-alarm-h">Warning: the public log does not check out</h2>
      <p>What this browser saw of the log is not what an honest log shows. Keep the files and
        tell the card room's auditor; the checkpoint kept in this browser stays as it was.</p>
      <ul id="log-alarms"></ul>`);
    ($("main") || document.body).prepend(box);
  }
  box.hidden = false;
  append($("#log-alarms"), html`<li data-kind="${kind}">${cap(what)}</li>`);
}

/** The text of a public answer (no key is sent for the log); an ApiError for a refusal. */
async function textOf(response) {
  if (!response.ok) {
    let problem = {status: response.status, detail: response.statusText};
    try { problem = await response.json(); } catch { /* keep the plain problem */ }
    throw new ApiError(problem);
  }
  return response.text();
}

async function loadKey() {
  const text = (await textOf(await fetch("/log/key", {cache: "no-store"}))).trim();
  const verifier = await parseVerifier(text);
  const trusted = keptKey();
  if (!trusted) {
    localStorage.setItem(KEY, JSON.stringify({text, since: new Date().toISOString()}));
    return {verifier, firstUse: true, since: null};
  }
  if (trusted.text !== text) {
    alarm("key", `The log's key changed. This browser first trusted ${trusted.text} (on `
      + `${at(trusted.since)} UTC); the server now gives ${text}. Checkpoints are still checked `
      + "with the first key, so those of the new key fail.");
    return {verifier: await parseVerifier(trusted.text), firstUse: false, since: trusted.since, changed: text};
  }
  return {verifier, firstUse: false, since: trusted.since};
}

/** The log's verifier key (tlog.js `parseVerifier`) as this browser trusts it: the first one it
 * read from GET /log/key; {verifier, firstUse, since, changed}. */
export function logKey() {
  keyPromise ||= loadKey().catch((error) => { keyPromise = null; throw error; });
  return keyPromise;
}

function keep(checkpoint) {
  const entry = {origin: checkpoint.origin, size: Number(checkpoint.size), root: b64(checkpoint.root),
    note: checkpoint.note, seen: new Date().toISOString()};
  localStorage.setItem(CHECKPOINT + entry.origin, JSON.stringify(entry));
  return entry;
}

async function proof(from, to) {
  const answer = await get(`/log/proof/consistency?from=${from}&to=${to}`, {noRedirect: true});
  if (answer.from !== from || answer.to !== to || !Array.isArray(answer.proof)) {
    throw new ProofError(`the server answered a proof from ${answer.from} to ${answer.to}, not from ${from} to ${to}`);
  }
  return answer.proof.map((h) => {
    try { return unb64(h); } catch (error) { throw new ProofError(`a hash of the proof: ${error.message}`); }
  });
}

async function compare(note, source, newest) {
  const {verifier} = await logKey();
  let checkpoint;
  try {
    checkpoint = {...await openCheckpoint(note, verifier), note};
  } catch (error) {
    if (!(error instanceof NoteError)) throw error;
    const what = `${source} is not a checkpoint signed by the log's key ${verifier.label}: ${error.message}. It is not trusted.`;
    alarm("signature", what);
    return {ok: false, state: "signature", what, kept: kept(verifier.name)};
  }
  const old = kept(checkpoint.origin);
  const size = Number(checkpoint.size);
  const root = b64(checkpoint.root);
  const failed = (state, what) => {
    alarm(state, what);
    return {ok: false, state, what, kept: old};
  };
  if (!old) {
    return {ok: true, state: "first", kept: keep(checkpoint),
      what: `${source} (size ${size}) is the first checkpoint of ${checkpoint.origin} this browser has checked: it is kept, and later ones must extend it.`};
  }
  const was = `the checkpoint this browser kept (size ${old.size}, root ${old.root}, checked ${at(old.seen)} UTC)`;
  if (size === old.size) {
    if (root !== old.root) {
      return failed("fork", `Fork: ${source} has size ${size}, as ${was} has, but another root (${root}). Both are signed by the log's key: the log has shown two different histories.`);
    }
    return {ok: true, state: "same", kept: old, what: `${source} is the checkpoint this browser kept (size ${size}, the same root).`};
  }
  if (size < old.size && newest) {
    return failed("shrink", `The log shrank: its newest checkpoint has size ${size}, smaller than ${was}. A log only grows.`);
  }
  const [from, to] = size > old.size ? [old, {size, root}] : [{size, root}, old];
  try {
    const hashes = from.size === 0 ? [] : await proof(from.size, to.size);
    if (from.size === 0) {
      if (from.root !== b64(await emptyRoot())) throw new ProofError("a checkpoint of size 0 has not the empty tree's root");
    } else {
      await verifyConsistency(from.size, to.size, unb64(from.root), unb64(to.root), hashes);
    }
  } catch (error) {
    const why = error instanceof ApiError ? `the consistency proof could not be read (${error.message})` : error.message;
    return failed("proof", size > old.size
      ? `${source} (size ${size}) is not shown to extend ${was}: ${why}. The log may have forked or been rewritten.`
      : `${source} (size ${size}) is not shown to be an earlier state of ${was}: ${why}. The log may have forked or been rewritten.`);
  }
  if (size > old.size) {
    return {ok: true, state: "newer", kept: keep(checkpoint),
      what: `${source} (size ${size}) extends the checkpoint this browser kept (size ${old.size}): the consistency proof holds, and it is kept now.`};
  }
  return {ok: true, state: "older", kept: old,
    what: `${source} (size ${size}) is an earlier state of the checkpoint this browser kept (size ${old.size}): the consistency proof holds.`};
}

/** Check a signed checkpoint against what this browser has seen of the log, and keep it if it is
 * the newest: {ok, state ("first", "same", "newer", "older"; or "signature", "fork", "shrink",
 * "proof"), what (a sentence), kept}. `source` names it in the sentences ("the receipt's
 * checkpoint"); `newest` says it is the log's own newest checkpoint (so smaller is a shrink). */
export function observe(note, source, {newest = false} = {}) {
  const run = queue.then(() => compare(note, source, newest));
  queue = run.catch(() => null);
  return run.then((result) => {
    last = result;
    showKept();
    return result;
  });
}

/** Fetch the log's newest checkpoint (GET /log/checkpoint) and observe it. */
export async function checkNewest() {
  const note = await textOf(await fetch("/log/checkpoint", {cache: "no-store"}));
  return observe(note, "the log's newest checkpoint", {newest: true});
}

/** Download a finished deal's receipt with this tab's key (GET /deals/{id}/receipt, saved from a
 * Blob as receipt-<id>.json) and observe its checkpoint: {file, receipt, seen}. */
export async function downloadReceipt(dealId) {
  const file = `receipt-${dealId}.json`;
  const blob = await download(`/deals/${encodeURIComponent(dealId)}/receipt`, file, "application/json");
  const receipt = JSON.parse(await blob.text());
  const seen = typeof receipt.checkpoint === "string"
    ? await observe(receipt.checkpoint, `the checkpoint of the receipt of deal ${String(dealId).slice(0, 8)}`)
    : null;
  return {file, receipt, seen};
}

/** What this browser keeps of the log, in #log-seen where the page has it. */
export function showKept() {
  const box = $("#log-seen");
  if (!box) return;
  const trusted = keptKey();
  const origin = trusted ? trusted.text.split("+")[0] : null;
  const entry = origin ? kept(origin) : null;
  box.dataset.state = last ? last.state : entry ? "kept" : "none";
  box.dataset.size = entry ? String(entry.size) : "";
  render(box, html`${last ? html`<p id="log-last" class="${last.ok ? "ok" : "error"}"
      data-ok="${String(last.ok)}"><strong>${last.ok ? "Checked" : "Does not check out"}</strong>: ${cap(last.what)}</p>` : ""}
    ${entry ? html`<dl class="facts seeds">
      <div><dt>Log</dt><dd>${entry.origin}</dd></div>
      <div><dt>Checkpoint kept</dt><dd data-fact="log-size">size ${entry.size}</dd></div>
      <div><dt>Root</dt><dd><code class="hex" data-fact="log-root" title="${entry.root}">${shortRoot(entry.root)}</code></dd></div>
      <div><dt>Checked</dt><dd>${at(entry.seen)} UTC</dd></div>
      <div><dt>Log key (trusted on first use, ${at(trusted.since)} UTC)</dt><dd><code class="hex">${trusted.text}</code></dd></div>
    </dl>` : html`<p class="muted">This browser has not checked a checkpoint of the log yet.</p>`}`);
}
