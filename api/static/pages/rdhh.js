// Reading a hand history (RDHH/1, ledger/history/hands.py) in the browser, from untrusted text:
// the same bounds and much the same checks as `reddog history import`, and events turned into
// what GET /deals/{id}/events answers ({aggregate_id, version, type, timestamp, payload}), so the
// replay page shows a file exactly as it shows a deal read from the server. Nothing is sent.
//
//   RDHH/1
//   variant: polish                  table: <uuid>            deal: <uuid>         nonce: 3
//   client-seed: …                   commitment: <64 hex>     server-seed: <64 hex>
//   started: <UTC time>              seat N: <player id> wallet=<uuid>   (one per seat)
//   table-before: <JSON snapshot>    (multi-seat only)
//   event: <JSON>                    (one per line, in order, as stored)
//   end
// Blank lines and lines starting with # (after the first) are comments.

export const MAGIC = "RDHH/1";
export const MAX_LINE_BYTES = 64 * 1024;
export const MAX_LINES = 5000;
export const MAX_HISTORY_BYTES = 4 * 1024 * 1024;

const HEADERS = ["variant", "table", "deal", "nonce", "client-seed", "commitment", "server-seed",
  "started"];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const CHECKS = {
  variant: /^[a-z][a-z_]{0,39}$/, table: UUID, deal: UUID, nonce: /^[1-9][0-9]{0,14}$/,
  "client-seed": /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, commitment: HEX64, "server-seed": HEX64,
  started: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$/,
};
const PLAYER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const CASINO = "ledger.domain.casino:CasinoDeal.";
const CASINO_EVENTS = new Set(["Committed", "Wagered", "CardDealt", "Stood", "Raised", "Settled",
  "SeedRevealed"]);
const TABLE = "ledger.domain.highcard:HighCardTable.";
const TABLE_EVENTS = new Set(["Seated", "Unseated", "SatOut", "SatIn", "Committed", "CardDealt",
  "CardBurned", "TargetTurned", "CardDiscarded", "CardsReturned", "SeedRevealed", "DealVoided",
  "DealEnded", "DealerChosen", "BankFunded", "Anted", "BankEmptied", "BankCollected",
  "StitchDeclared", "DealerChoiceNeeded", "DealerChose", "DealPassed", "BetPlaced", "BetsUnsealed",
  "CentreBought", "Passed", "TurnSkipped", "HandShown", "PaidOut", "PartiallyPaid", "PotSplit",
  "TableClosed", "ClientSeedChanged"]);
const SNAPSHOT = "eventsourcing.domain:Snapshot";
/** Attributes of a stored event that are not what it records. */
const NOT_PAYLOAD = new Set(["timestamp", "originator_topic", "chain_prev", "chain_mac"]);

export class HistoryError extends Error {
  constructor(line, message) {
    super(`line ${line}: ${message}`);
    this.line = line;
  }
}

/** The event store's JSON encoding, read back: UUIDs with their dashes, times as ISO text. */
function decoded(value) {
  if (Array.isArray(value)) return value.map(decoded);
  if (value && typeof value === "object") {
    const keys = Object.keys(value);
    if (keys.length === 2 && "_type_" in value && "_data_" in value) {
      const data = value._data_;
      if (value._type_ === "uuid_hex" && /^[0-9a-f]{32}$/.test(data)) {
        return `${data.slice(0, 8)}-${data.slice(8, 12)}-${data.slice(12, 16)}-${data.slice(16, 20)}-${data.slice(20)}`;
      }
      return decoded(data);
    }
    return Object.fromEntries(keys.map((k) => [k, decoded(value[k])]));
  }
  return value;
}

function json(number, text, what) {
  let item;
  try {
    item = JSON.parse(text);
  } catch (error) {
    throw new HistoryError(number, `not JSON: ${String(error.message).slice(0, 120)}`);
  }
  const keys = item && typeof item === "object" && !Array.isArray(item) ? Object.keys(item).sort() : [];
  if (keys.join() !== "id,state,topic,version") {
    throw new HistoryError(number, `${what} is a JSON object of topic, id, version and state`);
  }
  if (!Number.isInteger(item.version) || item.version < 1) {
    throw new HistoryError(number, "an event's version is a whole number from 1");
  }
  if (typeof item.id !== "string" || !UUID.test(item.id)) throw new HistoryError(number, "an event's id is a UUID");
  if (!item.state || typeof item.state !== "object" || Array.isArray(item.state)) {
    throw new HistoryError(number, "an event's state is a JSON object");
  }
  return item;
}

/** The lines of the text, each checked against the bounds before the next is looked at. */
function* linesOf(text) {
  const encoder = new TextEncoder();
  let total = 0;
  let start = 0;
  for (let number = 1; start < text.length || number === 1; number++) {
    if (number > MAX_LINES) throw new HistoryError(number, `a hand history has at most ${MAX_LINES} lines`);
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    let line = text.slice(start, end);
    start = end + 1;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.length > MAX_LINE_BYTES) throw new HistoryError(number, `longer than ${MAX_LINE_BYTES} bytes`);
    const bytes = encoder.encode(line).length;
    if (bytes > MAX_LINE_BYTES) throw new HistoryError(number, `longer than ${MAX_LINE_BYTES} bytes`);
    total += bytes + 1;
    if (total > MAX_HISTORY_BYTES + 1) throw new HistoryError(number, `a hand history is at most ${MAX_HISTORY_BYTES} bytes`);
    if (CONTROL.test(line)) throw new HistoryError(number, "a control character; a hand history is printable text");
    yield [number, line];
  }
}

/**
 * Read an RDHH/1 document. Answers {variant, deal_id, table_id, nonce, client_seed, commitment,
 * server_seed, started, seats: [{seat, player_id, wallet_id}], before (multi-seat: {version, pot,
 * stake, dealer}), events: [{aggregate_id, version, type, timestamp, payload}]}; throws
 * HistoryError naming the line at the first thing that is not a hand history.
 */
export function parseHistory(text) {
  if (typeof text !== "string") throw new HistoryError(1, "a hand history is text");
  const lines = linesOf(text);
  const first = lines.next();
  if (first.done || first.value[1] !== MAGIC) throw new HistoryError(1, `a hand history starts with the line ${MAGIC}`);
  const header = {};
  const seats = new Map();
  let before = null;
  let events = null;
  let number = 1;
  let line = "";
  let ended = false;
  let owner = null;
  let version = 0;
  let casino = false;
  for ([number, line] of lines) {
    if (!line || line.startsWith("#")) continue;
    if (ended) throw new HistoryError(number, "nothing but comments may follow 'end'");
    if (line === "end") { ended = true; continue; }
    const at = line.indexOf(": ");
    if (at < 0) throw new HistoryError(number, "a line is 'name: value', a comment or 'end'");
    const key = line.slice(0, at);
    const value = line.slice(at + 2);
    if (key === "event") {
      if (events === null) {
        for (const name of HEADERS) {
          if (!(name in header)) throw new HistoryError(number, `the header has no ${name} line before the first event`);
        }
        if (!seats.size) throw new HistoryError(number, "the header has no seat line before the first event");
        casino = header.variant === "casino";
        if (casino && before) throw new HistoryError(number, "a casino deal has no table-before");
        if (!casino && !before) throw new HistoryError(number, "a multi-seat deal needs table-before before its events");
        owner = casino ? header.deal : header.table;
        version = casino ? 0 : before.version;
        events = [];
      }
      const item = json(number, value, "an event");
      const prefix = casino ? CASINO : TABLE;
      const type = typeof item.topic === "string" && item.topic.startsWith(prefix)
        ? item.topic.slice(prefix.length) : null;
      if (!type || !(casino ? CASINO_EVENTS : TABLE_EVENTS).has(type)) {
        throw new HistoryError(number, `unknown event type: ${String(item.topic).slice(0, 80)}`);
      }
      if (item.id !== owner) throw new HistoryError(number, `an event of ${item.id}, not of the ${casino ? "deal" : "table"} ${owner} the header names`);
      if (item.version !== version + 1) throw new HistoryError(number, `event version ${item.version}, expected ${version + 1}`);
      version = item.version;
      const state = decoded(item.state);
      const payload = "data" in state && !casino ? state.data
        : Object.fromEntries(Object.entries(state).filter(([k]) => !NOT_PAYLOAD.has(k)));
      if (!payload || typeof payload !== "object") throw new HistoryError(number, "an event records an object");
      if (typeof state.timestamp !== "string") throw new HistoryError(number, "an event has a timestamp");
      const event = {aggregate_id: item.id, version: item.version, type, timestamp: state.timestamp, payload};
      if ((type === "Committed") !== (events.length === 0)) {
        throw new HistoryError(number, "a deal's first event, and only its first, is its commitment");
      }
      if (!casino && "deal_id" in payload && payload.deal_id !== header.deal) {
        throw new HistoryError(number, `an event of deal ${String(payload.deal_id).slice(0, 40)}, not the header's ${header.deal}`);
      }
      if (type === "Committed") {
        for (const [name, field] of [["nonce", "nonce"], ["client-seed", "client_seed"], ["commitment", "commitment"]]) {
          const expected = name === "nonce" ? Number(header.nonce) : header[name];
          if (payload[field] !== expected) throw new HistoryError(number, `the commitment's ${field} is not the header's`);
        }
      }
      if (type === "SeedRevealed" && payload.server_seed !== header["server-seed"]) {
        throw new HistoryError(number, "the seed revealed is not the header's server-seed");
      }
      events.push(event);
    } else if (events !== null) {
      throw new HistoryError(number, "only events follow the first event");
    } else if (key === "table-before") {
      if (before) throw new HistoryError(number, "a second table-before");
      const item = json(number, value, "table-before");
      if (item.topic !== SNAPSHOT) throw new HistoryError(number, "table-before is not a snapshot of a multi-seat table");
      const engine = decoded(item.state)?.state?.state;
      if (!engine || typeof engine !== "object" || !engine.seats) throw new HistoryError(number, "table-before holds no table state");
      before = {version: item.version, table_id: item.id, pot: engine.pot, stake: engine.stake,
        dealer: engine.dealer, seats: engine.seats, variant: engine.variant_name};
    } else if (key.startsWith("seat ")) {
      const seat = key.slice(5);
      if (!/^[1-9][0-9]?$/.test(seat)) throw new HistoryError(number, "a seat number from 1 to 99");
      const sep = value.indexOf(" wallet=");
      const player = sep < 0 ? "" : value.slice(0, sep);
      const wallet = sep < 0 ? "" : value.slice(sep + 8);
      if (!PLAYER_ID.test(player) || !UUID.test(wallet)) throw new HistoryError(number, "a seat line is 'seat N: <player id> wallet=<uuid>'");
      if (seats.has(Number(seat))) throw new HistoryError(number, `seat ${seat} again`);
      seats.set(Number(seat), {seat: Number(seat), player_id: player, wallet_id: wallet});
    } else if (HEADERS.includes(key)) {
      if (key in header) throw new HistoryError(number, `a second ${key} line`);
      if (!CHECKS[key].test(value)) throw new HistoryError(number, `${key} is not well formed`);
      header[key] = value;
    } else {
      throw new HistoryError(number, `not a header of a hand history: ${key.slice(0, 40)}`);
    }
  }
  if (!ended) throw new HistoryError(number, "a hand history ends with the line 'end'");
  if (!events || !events.length) throw new HistoryError(number, "a hand history holds at least one event");
  if (!events.some((e) => e.type === "SeedRevealed")) throw new HistoryError(number, "the deal never reveals the header's server-seed");
  if (before) {
    if (before.table_id !== header.table) throw new HistoryError(number, "table-before is not of the header's table");
    const named = [...seats.values()].map((s) => `${s.seat}:${s.player_id}:${s.wallet_id}`).sort().join();
    const held = Object.entries(before.seats).map(([seat, info]) => `${seat}:${info.player}:${info.wallet}`).sort().join();
    if (named !== held) throw new HistoryError(number, "the seats of table-before are not the header's seats");
  }
  return {
    variant: header.variant, deal_id: header.deal, table_id: header.table,
    nonce: Number(header.nonce), client_seed: header["client-seed"], commitment: header.commitment,
    server_seed: header["server-seed"], started: header.started,
    seats: [...seats.values()].sort((a, b) => a.seat - b.seat), before, events,
  };
}
