// The replay viewer's receipt check, in #receipt-result: a deal's receipt (`reddog-receipt/1`,
// downloaded from the page or opened from a file) checked in this browser with Web Crypto by
// tlog.js, as `python tlog.py check-receipt` checks it: the checkpoint signed by the log's key,
// each event's opening, leaf and inclusion proof leading to the checkpoint's root, the server
// seed matching its commitment and each fairness value in an event of the log. Then its
// checkpoint is compared with the one this browser keeps (transparency.js). The receipt itself
// is sent nowhere; the log's key and a consistency proof are read from the server.
import {$, errorText, html, render} from "/static/pages/common.js";
import {receiptFindings} from "/static/pages/tlog.js";
import {logKey, observe} from "/static/pages/transparency.js";

const MAX_RECEIPT_BYTES = 8 * 1024 * 1024;
let shown = 0;  // the check drawn last: a later one wins

const cap = (text) => text.charAt(0).toUpperCase() + text.slice(1);

function finding(f) {
  const e = f.event || {};
  return html`<li class="${f.ok ? "ok" : "error"}" data-ok="${String(f.ok)}" data-leaf="${e.leaf}"
    data-position="${e.position}" data-aggregate="${e.aggregate}" data-version="${e.version}"
    data-field="${f.field}" data-part="${f.part}"><strong>${f.ok ? "Holds" : "Fails"}</strong>: ${cap(f.what)}.</li>`;
}

function draw(result) {
  const {findings, name} = result;
  const failed = findings.filter((f) => !f.ok);
  const held = findings.filter((f) => f.ok);
  const box = $("#receipt-result");
  box.dataset.result = failed.length ? "fails" : "passes";
  render(box, html`<p id="receipt-verdict" class="verdict ${failed.length ? "error" : "ok"}">${failed.length
    ? `Fails: ${failed.length} of the ${findings.length} checks of ${name} fail.`
    : `Passes: all ${findings.length} checks of ${name} hold. Every event it opens is in the public log under a checkpoint signed by the log's key, and its fairness values are the ones logged.`}</p>
    ${failed.length ? html`<ul class="checks" id="receipt-failures">${failed.map(finding)}</ul>` : ""}
    ${held.length ? html`<details><summary>The ${held.length} checks that hold</summary>
      <ul class="checks" id="receipt-holds">${held.map(finding)}</ul></details>` : ""}`);
}

/** Check a receipt given as its text, named `name` in what the page says ("receipt-….json"). */
export async function checkReceiptText(text, name) {
  const mine = ++shown;
  const box = $("#receipt-result");
  box.removeAttribute("data-result");
  render(box, html`<p class="muted">Checking ${name}…</p>`);
  let findings;
  try {
    let receipt;
    try { receipt = JSON.parse(text); } catch (error) {
      findings = [{ok: false, what: `the receipt is not JSON: ${error.message}`}];
    }
    if (!findings) {
      const {verifier, firstUse} = await logKey();
      const checked = await receiptFindings(receipt, verifier);
      findings = checked.findings;
      if (firstUse) {
        findings.unshift({ok: true, what: `the log's key ${verifier.label} was read from this server and is trusted from now on (first use)`});
      }
      if (checked.checkpoint) {
        const seen = await observe(checked.checkpoint.note, "the receipt's checkpoint");
        findings.push({ok: seen.ok, what: seen.what.replace(/\.$/, ""), part: "kept-checkpoint"});
      }
    }
  } catch (error) {
    findings = [{ok: false, what: `the receipt could not be checked: ${errorText(error)}`}];
  }
  if (mine === shown) draw({findings, name});
}

/** Check a receipt file picked in the page (read here, sent nowhere). */
export async function checkReceiptFile(file) {
  $("#receipt-result").removeAttribute("data-result");
  const refuse = (what) => { shown += 1; draw({findings: [{ok: false, what}], name: file.name}); };
  if (file.size > MAX_RECEIPT_BYTES) {
    refuse(`${file.name} is larger than ${MAX_RECEIPT_BYTES} bytes, more than a receipt holds`);
    return;
  }
  let text;
  try { text = await file.text(); } catch (error) {
    refuse(`${file.name} could not be read: ${error.message}`);
    return;
  }
  await checkReceiptText(text, file.name);
}
