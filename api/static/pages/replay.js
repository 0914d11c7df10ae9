// The replay viewer: one deal of either family, step by step, from GET /deals/{id}/replay or from
// a hand-history file opened in the page (read in this browser, never sent anywhere). Each step
// shows its operation in words, the chips it moved (from → to, amount, cause), the cards on the
// table, the pot or bank, the stakes and each seat's balance after it; the fairness check runs
// here, with Web Crypto, on the deal's own events. The page holds no game rule: it reads what the
// events record. Its parts: replay-load.js (a deal from the server or from a file),
// replay-words.js (naming seats, accounts and operations), replay-frames.js (the steps),
// replay-step.js (drawing a step), replay-controls.js (buttons, slider and keys),
// replay-fairness.js (the check), replay-disputes.js (the deal's disputes) and replay-receipt.js
// (a receipt checked against the public log: tlog.js, transparency.js).
import {$, download, errorText, heldKey, markProblem, param, say, signedIn} from "/static/pages/common.js";
import {showDisputes} from "/static/pages/replay-disputes.js";
import {stepper} from "/static/pages/replay-controls.js";
import {showFairness} from "/static/pages/replay-fairness.js";
import {buildFrames} from "/static/pages/replay-frames.js";
import {loadDeal, readHistoryFile} from "/static/pages/replay-load.js";
import {checkReceiptFile, checkReceiptText} from "/static/pages/replay-receipt.js";
import {showFacts, showStep} from "/static/pages/replay-step.js";
import {namer} from "/static/pages/replay-words.js";
import {checkNewest, showKept} from "/static/pages/transparency.js";

let me = null;
let record = null;  // the deal shown (replay-load.js)
let name = null;    // its namer (replay-words.js)
let frames = [];

const steps = stepper((at) => showStep(record, name, frames, at, me));

function showRecord() {
  name = namer(record);
  showFacts(record);
  frames = buildFrames(record, name.operation);
  $("#viewer").hidden = false;
  steps.load(frames);
  showFairness(record, steps.stepOf);
}

// A hand-history file: read and shown here, sent nowhere.
$("#file").addEventListener("change", async (event) => {
  const file = event.target.files && event.target.files[0];
  if (!file) return;
  try {
    record = await readHistoryFile(file);
  } catch (error) {
    say(error.message, true);
    return;
  }
  $("#deal-actions").hidden = true;
  say(`Opened ${file.name}: read and checked in this browser only.`);
  showRecord();
});

// The deal's hand history, fetched with this tab's key (never in the address) and saved as a file.
$("#download").addEventListener("click", async () => {
  const line = $("#download-status");
  line.textContent = "";
  line.className = "";
  markProblem(line, null);
  const file = `deal-${record.deal_id}.rdhh`;
  try {
    await download(`/deals/${record.deal_id}/history`, file, "text/plain");
    line.textContent = `Saved ${file}.`;
  } catch (error) {
    line.className = "error";
    line.textContent = `The hand history could not be downloaded: ${errorText(error)}`;
    markProblem(line, error);
  }
});

// The deal's receipt, fetched with this tab's key and saved as a file, then checked here.
$("#download-receipt").addEventListener("click", async () => {
  const line = $("#receipt-status");
  line.textContent = "";
  line.className = "";
  const file = `receipt-${record.deal_id}.json`;
  let text;
  try {
    text = await (await download(`/deals/${record.deal_id}/receipt`, file, "application/json")).text();
    line.textContent = `Saved ${file}; its check is below.`;
  } catch (error) {
    line.className = "error";
    line.textContent = `The receipt could not be downloaded: ${errorText(error)}`;
    return;
  }
  $("#receipt-check").scrollIntoView({block: "nearest"});
  await checkReceiptText(text, file);
});

// A receipt file: read and checked here, sent nowhere.
$("#receipt-file").addEventListener("change", (event) => {
  const file = event.target.files && event.target.files[0];
  if (file) checkReceiptFile(file);
});

$("#log-check").addEventListener("click", async () => {
  try {
    await checkNewest();
  } catch (error) {
    say(`The log's newest checkpoint could not be read: ${errorText(error)}`, true);
  }
});

async function openDeal(id) {
  say("Loading the replay…");
  try {
    record = await loadDeal(id);
  } catch (error) {
    say(`The deal cannot be replayed: ${errorText(error)}`, error);
    return;
  }
  say(record.finished ? "" : "This deal is still in progress: its seed is revealed when it ends.");
  showRecord();
  $("#deal-actions").hidden = false;
  await showDisputes(record, me);
}

showKept();
const dealId = param("deal");
if (dealId) {
  me = await signedIn();
  await openDeal(dealId);
} else {
  if (heldKey()) me = await signedIn();
  say("Open a hand-history file below, or follow a deal's Replay link.");
}
