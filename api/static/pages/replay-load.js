// The replay viewer's deal, whichever way it came: GET /deals/{id}/replay, or a hand-history
// file opened in the page (read with FileReader and parsed by rdhh.js, never sent anywhere).
// Both become one record: {source, deal_id, table_id, variant, title, casino, finished, nonce,
// client_seed, commitment, server_seed, started, seats, start, steps: [{event, state, balances}]}.
import {get} from "/static/pages/common.js";
import {MAX_HISTORY_BYTES, parseHistory} from "/static/pages/rdhh.js";

/** The record of a deal from the server's replay. */
export function fromReplay(replay) {
  const events = replay.steps.map((s) => s.event);
  const committed = events[0].payload;
  const revealed = events.find((e) => e.type === "SeedRevealed");
  const first = replay.steps[0].state;
  const casino = replay.variant === "casino";
  return {
    source: "server", deal_id: replay.deal_id, table_id: replay.table_id, variant: replay.variant,
    title: casino ? "Casino Red Dog" : first.title, casino, finished: replay.finished,
    nonce: committed.nonce, client_seed: committed.client_seed, commitment: committed.commitment,
    server_seed: revealed ? revealed.payload.server_seed : null, started: events[0].timestamp,
    seats: replay.seats,
    // Committed moves no chips and names no dealer: the state after it is the state before.
    start: casino ? {} : {pot: first.pot, stake: first.stake, dealer: first.dealer},
    steps: replay.steps.map((s) => ({event: s.event, state: s.state, balances: s.balances})),
  };
}

/** The record of a deal from a hand history read by rdhh.js, from the file `name`. */
export function fromHistory(history, name) {
  const casino = history.variant === "casino";
  return {
    source: "file", file: name, deal_id: history.deal_id, table_id: history.table_id,
    variant: history.variant, title: casino ? "Casino Red Dog" : history.variant, casino,
    finished: true, nonce: history.nonce, client_seed: history.client_seed,
    commitment: history.commitment, server_seed: history.server_seed, started: history.started,
    seats: history.seats.map((s) => ({...s, balance_before: null})),
    start: casino ? {} : {pot: history.before.pot, stake: history.before.stake,
      dealer: history.before.dealer},
    steps: history.events.map((event) => ({event, state: null, balances: null})),
  };
}

/** The record of the deal `id`, from the server. */
export async function loadDeal(id) {
  return fromReplay(await get(`/deals/${encodeURIComponent(id)}/replay`));
}

/** The record of a hand-history file, read in this browser; rejects with an Error whose message
 * says, in words, why the file cannot be shown. */
export function readHistoryFile(file) {
  return new Promise((resolve, reject) => {
    if (file.size > MAX_HISTORY_BYTES) {
      reject(new Error(`${file.name} is larger than ${MAX_HISTORY_BYTES} bytes, the most a hand history may be.`));
      return;
    }
    const reader = new FileReader();
    reader.addEventListener("load", () => {
      try {
        resolve(fromHistory(parseHistory(String(reader.result)), file.name));
      } catch (error) {
        reject(new Error(`${file.name} is not a hand history this page can read: ${error.message}`));
      }
    });
    reader.addEventListener("error", () => reject(new Error(`Could not read ${file.name}.`)));
    reader.readAsText(file);
  });
}
