// The provably fair shuffle of docs/fairness.md, recomputed in this browser with Web Crypto, and
// the check of one deal's log against it. Nothing here asks the server anything: the inputs are
// the deal's own events (from the replay, or from a hand-history file opened in the page).
//
// The recipe (docs/fairness.md, "The shuffle"): for counter = 0, 1, 2, …
//   block = HMAC-SHA256(key = the 32 seed bytes, message = ASCII "{client_seed}:{nonce}:{counter}"),
// read as eight big-endian unsigned 32-bit integers. From the canonical pack (2c 3c … Ac 2d … As),
// for i from 51 down to 1: n = i + 1, limit = 2**32 - (2**32 mod n), take the next integer r
// (skipping any r >= limit), j = r mod n, swap positions i and j. Position 0 is the top.
// The commitment is SHA-256 of the 32 seed bytes.

export const RANKS = "23456789TJQKA";
export const SUITS = "cdhs";
export const CANONICAL_PACK = Object.freeze([...SUITS].flatMap((s) => [...RANKS].map((r) => r + s)));

const SERVER_SEED = /^[0-9a-f]{64}$/;
const CLIENT_SEED = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const TWO_32 = 2 ** 32;
/** Events that take the top card of the pack (a burn takes it too, then puts it at the bottom). */
export const TAKES = new Set(["CardDealt", "TargetTurned", "CardDiscarded"]);

export class FairnessInputError extends Error {}

function checkInputs(serverSeed, clientSeed, nonce) {
  if (typeof serverSeed !== "string" || !SERVER_SEED.test(serverSeed)) {
    throw new FairnessInputError("the server seed must be 64 lowercase hex characters");
  }
  if (typeof clientSeed !== "string" || !CLIENT_SEED.test(clientSeed)) {
    throw new FairnessInputError("the client seed must be 1 to 64 characters of A-Z a-z 0-9 _ -, "
      + "the first a letter or digit");
  }
  if (!Number.isSafeInteger(nonce) || nonce < 1) {
    throw new FairnessInputError("the nonce must be a whole number from 1");
  }
}

export function bytesOfHex(hex) {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

export function hexOf(buffer) {
  return [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** SHA-256 of the seed's 32 bytes, as 64 lowercase hex characters: what the deal committed to. */
export async function commitmentOf(serverSeed) {
  if (typeof serverSeed !== "string" || !SERVER_SEED.test(serverSeed)) {
    throw new FairnessInputError("the server seed must be 64 lowercase hex characters");
  }
  return hexOf(await crypto.subtle.digest("SHA-256", bytesOfHex(serverSeed)));
}

/** The 52 cards of the pack for (server seed, client seed, nonce), top first. */
export async function shuffledPack(serverSeed, clientSeed, nonce) {
  checkInputs(serverSeed, clientSeed, nonce);
  const key = await crypto.subtle.importKey(
    "raw", bytesOfHex(serverSeed), {name: "HMAC", hash: "SHA-256"}, false, ["sign"]);
  const ascii = new TextEncoder();  // the message is ASCII: the client seed's characters are
  let counter = 0;
  let block = [];
  let at = 0;
  async function next() {
    if (at === block.length) {
      const mac = await crypto.subtle.sign("HMAC", key, ascii.encode(`${clientSeed}:${nonce}:${counter}`));
      counter += 1;
      const view = new DataView(mac);
      block = Array.from({length: 8}, (_, k) => view.getUint32(4 * k, false));  // big-endian
      at = 0;
    }
    return block[at++];
  }
  const pack = [...CANONICAL_PACK];
  for (let i = 51; i >= 1; i--) {
    const n = i + 1;
    const limit = TWO_32 - (TWO_32 % n);
    let r = await next();
    while (r >= limit) r = await next();
    const j = r % n;
    [pack[i], pack[j]] = [pack[j], pack[i]];
  }
  return pack;
}

/**
 * Check one finished deal against its commitment, as docs/fairness.md "Check a deal by hand"
 * says: SHA-256 of the revealed seed is the commitment; replaying the pack steps (each card taken
 * or burned is the one then on top; a burned card goes to the bottom; returned hands go to the
 * bottom, in order), every card the log shows is the recomputed pack's card at its position; and
 * every card event comes after the commitment.
 *
 * `deal`: {serverSeed, commitment, clientSeed, nonce, commitmentVersion, events}, where `events`
 * are the deal's own ({version, type, payload}) after its commitment, in order.
 * Answers {passes, commitment: {ok, computed, committed}, packError, pack, checks, cardsChecked,
 * first}: `first` is the first check that failed, in log order (a card: its position, the card
 * expected and the card logged), or null.
 */
export async function checkDeal(deal) {
  const {serverSeed, commitment, clientSeed, nonce, commitmentVersion, events} = deal;
  let computed = null;
  try {
    computed = await commitmentOf(serverSeed);
  } catch (error) {
    if (!(error instanceof FairnessInputError)) throw error;
  }
  const result = {
    commitment: {ok: computed !== null && computed === commitment, computed, committed: commitment},
    packError: null, pack: null, checks: [], cardsChecked: 0, first: null, passes: false,
  };
  try {
    result.pack = await shuffledPack(serverSeed, clientSeed, nonce);
  } catch (error) {
    if (!(error instanceof FairnessInputError)) throw error;
    result.packError = error.message;
  }
  const pack = result.pack || [];
  const remaining = Array.from({length: 52}, (_, i) => i);
  const add = (check) => {
    result.checks.push(check);
    if (!check.ok && result.first === null) result.first = check;
  };
  for (const event of events) {
    const p = event.payload || {};
    const at = {version: event.version, type: event.type};
    const moves = TAKES.has(event.type) || event.type === "CardBurned";
    if (moves) {
      const top = remaining.length ? remaining.shift() : null;
      add({...at, kind: "order", ok: p.position === top, position: p.position, top,
        detail: `v${event.version} ${event.type} takes position ${p.position}; the top of the pack is ${top}`});
      if (event.type === "CardBurned" && top !== null) remaining.push(top);
    }
    if (event.type === "CardsReturned") {
      remaining.push(...(p.positions || []));
      continue;
    }
    const shown = event.type === "HandShown" ? (p.cards || [])
      : (moves && p.card ? [{position: p.position, card: p.card}] : []);
    for (const c of shown) {
      const expected = Number.isInteger(c.position) && c.position >= 0 && c.position < pack.length
        ? pack[c.position] : null;
      result.cardsChecked += 1;
      add({...at, kind: "card", ok: expected !== null && expected === c.card, position: c.position,
        expected, logged: c.card,
        detail: `pack position ${c.position} is ${expected ?? "not computed"}; the log shows ${c.card} (v${event.version} ${event.type})`});
    }
    if (moves || shown.length) {
      add({...at, kind: "after", ok: event.version > commitmentVersion, position: p.position,
        detail: `v${event.version} ${event.type} comes ${event.version > commitmentVersion ? "after" : "before"} the commitment (v${commitmentVersion})`});
    }
  }
  result.passes = result.commitment.ok && result.packError === null
    && result.checks.every((c) => c.ok);
  return result;
}
