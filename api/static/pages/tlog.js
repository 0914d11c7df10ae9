// The public log's formats and the check of a deal's receipt, in this browser with Web Crypto
// (SHA-256 and Ed25519): what `ledger/core/tlog.py` does, with the same algorithms and the same
// words, so a receipt checked here and by `python tlog.py check-receipt` gets the same findings.
//
// - the Merkle tree of RFC 9162 2.1 (SHA-256): leaf hash H(0x00 || entry), node hash
//   H(0x01 || left || right), the root an inclusion proof leads to (2.1.3.2) and the check of a
//   consistency proof (2.1.4.2);
// - signed notes (c2sp.org/signed-note) with Ed25519 keys: a verifier key
//   `name+hex key ID+base64(0x01 || public key)`, the key ID SHA-256(name || "\n" || 0x01 ||
//   public key)[:4], the signature over the note's text; checkpoints (c2sp.org/tlog-checkpoint);
// - the ledger's commitment to one stored event, SHA-256("reddog-event-commitment/1\0" || salt ||
//   u16be(len oid) || oid || u64be(version) || u16be(len topic) || topic || u32be(len state) ||
//   state), and the receipt `reddog-receipt/1`.
// Tree sizes and indexes are BigInts here: a size may be up to 2^63 - 1.

export const HASH_SIZE = 32;
export const RECEIPT_FORMAT = "reddog-receipt/1";
const MAX_INT63 = 2n ** 63n - 1n;
const ALG_ED25519 = 0x01;
const MAX_SIGNATURES = 100;
const SIGNATURE_PREFIX = "\u2014 ";  // em dash, space
const COMMITMENT_DOMAIN = new TextEncoder().encode("reddog-event-commitment/1\u0000");
const FAIRNESS_FIELDS = ["commitment", "server_seed", "client_seed", "nonce"];
// What Python's str.isspace() and the Unicode space separators hold (tlog.py `_is_space`).
// eslint-disable-next-line no-control-regex
const NAME_FORBIDS = /[\u0000-\u0020+\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;
const HEX_KEY_ID = /^[0-9a-f]{8}$/;
const DECIMAL = /^(0|[1-9][0-9]*)$/;
const HEX = /^(?:[0-9a-fA-F]{2})*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export class ProofError extends Error {}
export class NoteError extends Error {}

const utf8 = new TextEncoder();

// Values written as tlog.py's messages write them, so that both say the same sentences: Python's
// repr() of a string (or None), and json.dumps() of a JSON value.
const REPR_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"};
export function pyRepr(value) {
  if (value === null || value === undefined) return "None";
  if (typeof value !== "string") return pyDumps(value);
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  // eslint-disable-next-line no-control-regex
  const body = value.replace(/[\\\n\r\t\u0000-\u001f\u007f-\u00a0]/g, (c) => REPR_ESCAPES[c]
    || `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  return quote + (quote === "'" ? body.replaceAll("'", "\\'") : body) + quote;
}

export function pyDumps(value) {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map(pyDumps).join(", ")}]`;
  if (typeof value === "object") {
    return `{${Object.entries(value).map(([k, v]) => `${pyDumps(k)}: ${pyDumps(v)}`).join(", ")}}`;
  }
  if (typeof value === "string") {
    return JSON.stringify(value).replace(/[\u007f-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  }
  return JSON.stringify(value);
}

const quoted = pyRepr;
const pyStr = (value) => (value === null || value === undefined ? "None" : String(value));

// Bytes.

export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) { out.set(part, at); at += part.length; }
  return out;
}

export const equalBytes = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

export async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

export function b64(bytes) {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text);
}

/** Standard padded base64 in its one canonical spelling (as tlog.py `_unb64`); Error otherwise. */
export function unb64(text) {
  let bytes = null;
  if (typeof text === "string" && BASE64.test(text)) {
    try {
      bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    } catch { bytes = null; }
  }
  if (bytes === null) throw new Error(`${quoted(text)} is not base64`);
  if (b64(bytes) !== text) throw new Error(`${quoted(text)} is not base64 in its canonical form`);
  return bytes;
}

export const hex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

function bitLength(n) { return n === 0n ? 0 : n.toString(2).length; }
function bitCount(n) { return [...n.toString(2)].filter((c) => c === "1").length; }

// The Merkle tree (RFC 9162, section 2.1).

export const leafHash = (entry) => sha256(concat(Uint8Array.of(0), entry));
export const nodeHash = (left, right) => sha256(concat(Uint8Array.of(1), left, right));
export const emptyRoot = () => sha256(new Uint8Array(0));

/** How many hashes the inclusion proof of leaf `index` in a tree of `size` leaves has. */
export function inclusionProofSize(index, size) {
  const inner = bitLength(index ^ (size - 1n));
  return inner + bitCount(index >> BigInt(inner));
}

/** How many hashes the consistency proof from `oldSize` to `newSize` has. */
export function consistencyProofSize(oldSize, newSize) {
  if (oldSize === newSize) return 0;
  const shift = bitLength(oldSize & -oldSize) - 1;
  return inclusionProofSize(oldSize - 1n, newSize) - shift + (oldSize !== 1n << BigInt(shift) ? 1 : 0);
}

function checkHash(what, h) {
  if (!(h instanceof Uint8Array) || h.length !== HASH_SIZE) {
    throw new ProofError(`the ${what} is ${h instanceof Uint8Array ? `${h.length} bytes` : "not bytes"}, not ${HASH_SIZE} bytes`);
  }
}

function checkHashes(what, hashes) {
  hashes.forEach((h, i) => {
    if (!(h instanceof Uint8Array) || h.length !== HASH_SIZE) {
      throw new ProofError(`hash ${i} of the ${what} is ${h instanceof Uint8Array ? `${h.length} bytes` : "not bytes"}, not ${HASH_SIZE} bytes`);
    }
  });
}

/** The root that leaf hash `leaf` at `index` and its proof lead to in a tree of `size` leaves
 * (RFC 9162 2.1.3.2, as tlog.py `root_from_inclusion`); ProofError naming why it cannot. */
export async function rootFromInclusion(index, size, leaf, proof) {
  index = BigInt(index);
  size = BigInt(size);
  if (!(index >= 0n && index < size)) {
    throw new ProofError(`leaf index ${index} is not below the tree size ${size}`);
  }
  checkHash("leaf hash", leaf);
  checkHashes("inclusion proof", proof);
  const want = inclusionProofSize(index, size);
  if (proof.length !== want) {
    throw new ProofError(`the inclusion proof of leaf ${index} in a tree of size ${size} has `
      + `${proof.length} hashes; it takes ${want}`);
  }
  let fn = index;
  let sn = size - 1n;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) throw new ProofError(`the inclusion proof of leaf ${index} in a tree of size ${size} is too long`);
    if ((fn & 1n) || fn === sn) {
      r = await nodeHash(p, r);
      if (!(fn & 1n)) {
        while (fn && !(fn & 1n)) { fn >>= 1n; sn >>= 1n; }
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new ProofError(`the inclusion proof of leaf ${index} in a tree of size ${size} is too short`);
  return r;
}

/** Check that leaf hash `leaf` is at `index` in the tree of `size` leaves with `root`. */
export async function verifyInclusion(index, size, leaf, proof, root) {
  checkHash("root", root);
  const calculated = await rootFromInclusion(index, size, leaf, proof);
  if (!equalBytes(calculated, root)) {
    throw new ProofError(`the inclusion proof of leaf ${index} in a tree of size ${size} leads to `
      + `the root ${b64(calculated)}, not ${b64(root)}`);
  }
}

/** Check that the tree of `newSize` leaves with `newRoot` extends the tree of `oldSize` leaves
 * with `oldRoot` (RFC 9162 2.1.4.2, as tlog.py `verify_consistency`); ProofError naming why not. */
export async function verifyConsistency(oldSize, newSize, oldRoot, newRoot, proof) {
  oldSize = BigInt(oldSize);
  newSize = BigInt(newSize);
  checkHash("old root", oldRoot);
  checkHash("new root", newRoot);
  checkHashes("consistency proof", proof);
  if (oldSize < 0n || newSize < 0n) throw new ProofError(`a tree size is negative (${oldSize}, ${newSize})`);
  if (oldSize > newSize) throw new ProofError(`the old size ${oldSize} is above the new size ${newSize}: the log shrank`);
  if (oldSize === 0n) throw new ProofError("a consistency proof from the empty tree proves nothing (old size 0)");
  if (oldSize === newSize) {
    if (proof.length) throw new ProofError(`the proof between two trees of size ${oldSize} must be empty; it has ${proof.length} hashes`);
    if (!equalBytes(oldRoot, newRoot)) {
      throw new ProofError(`the two trees of size ${oldSize} have different roots (${b64(oldRoot)}, ${b64(newRoot)})`);
    }
    return;
  }
  const want = consistencyProofSize(oldSize, newSize);
  if (proof.length !== want) {
    throw new ProofError(`the consistency proof from size ${oldSize} to ${newSize} has ${proof.length} hashes; it takes ${want}`);
  }
  const path = [...proof];
  if ((oldSize & (oldSize - 1n)) === 0n) path.unshift(oldRoot);
  let fn = oldSize - 1n;
  let sn = newSize - 1n;
  while (fn & 1n) { fn >>= 1n; sn >>= 1n; }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0n) throw new ProofError(`the consistency proof from size ${oldSize} to ${newSize} is too long`);
    if ((fn & 1n) || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      if (!(fn & 1n)) {
        while (fn && !(fn & 1n)) { fn >>= 1n; sn >>= 1n; }
      }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new ProofError(`the consistency proof from size ${oldSize} to ${newSize} is too short`);
  if (!equalBytes(fr, oldRoot)) {
    throw new ProofError(`the consistency proof from size ${oldSize} to ${newSize} leads to the old root ${b64(fr)}, not ${b64(oldRoot)}`);
  }
  if (!equalBytes(sr, newRoot)) {
    throw new ProofError(`the consistency proof from size ${oldSize} to ${newSize} leads to the new root ${b64(sr)}, not ${b64(newRoot)}`);
  }
}

// Keys and signed notes (c2sp.org/signed-note).

function nameProblem(name) {
  if (!name) return "a key name is empty";
  if (NAME_FORBIDS.test(name) || /\p{Cs}/u.test(name)) {
    return `the key name ${quoted(name)} has a space, a plus or a control character`;
  }
  return null;
}

function textProblem(text) {
  if (/\p{Cs}/u.test(text)) return "it is not valid UTF-8";
  // eslint-disable-next-line no-control-regex
  const control = text.match(/[\u0000-\u0009\u000b-\u001f]/);
  return control ? `it holds the control character ${pyRepr(control[0])}` : null;
}

/** The key ID of c2sp.org/signed-note: SHA-256(name || 0x0A || alg || public key)[:4]. */
export async function keyId(name, alg, publicKey) {
  return (await sha256(concat(utf8.encode(name), Uint8Array.of(0x0a, alg), publicKey))).slice(0, 4);
}

/** A log's verifier key, `<name>+<key ID hex>+<base64(0x01 || public key)>`: {name, keyId,
 * publicKey, text, label}; NoteError naming why it is not one. */
export async function parseVerifier(vkey) {
  const text = String(vkey).trim();
  const plus = text.indexOf("+");
  const name = plus < 0 ? text : text.slice(0, plus);
  const rest = plus < 0 ? "" : text.slice(plus + 1);
  const plus2 = rest.indexOf("+");
  const idHex = plus2 < 0 ? rest : rest.slice(0, plus2);
  const key64 = plus2 < 0 ? "" : rest.slice(plus2 + 1);
  const problem = nameProblem(name);
  if (problem) throw new NoteError(problem);
  if (!HEX_KEY_ID.test(idHex)) throw new NoteError(`the key ID of the verifier key ${quoted(text)} is not 8 lowercase hex digits`);
  let key;
  try { key = unb64(key64); } catch (error) { throw new NoteError(`the verifier key ${quoted(text)}: ${error.message}`); }
  if (!key.length) throw new NoteError(`the verifier key ${quoted(text)} holds no key`);
  if (hex(await keyId(name, key[0], key.slice(1))) !== idHex) {
    throw new NoteError(`the key ID ${idHex} is not the one of the key ${quoted(name)} holds`);
  }
  if (key[0] !== ALG_ED25519 || key.length !== 33) {
    throw new NoteError(`the verifier key ${quoted(text)} is not an Ed25519 note key (type 0x01)`);
  }
  return {name, keyId: idHex, publicKey: key.slice(1), text, label: `${name}+${idHex}`};
}

async function ed25519Verify(publicKey, message, signature) {
  try {
    const key = await crypto.subtle.importKey("raw", publicKey, {name: "Ed25519"}, false, ["verify"]);
    return await crypto.subtle.verify({name: "Ed25519"}, key, signature, message);
  } catch (error) {
    if (error instanceof DOMException && error.name === "NotSupportedError") {
      throw new NoteError("this browser cannot check Ed25519 signatures (Web Crypto has no Ed25519)");
    }
    return false;
  }
}

function parseSignatureLine(line) {
  if (!line.startsWith(SIGNATURE_PREFIX)) {
    throw new NoteError(`malformed note: the line ${quoted(line)} is not a signature line (em dash, space, key name, space, base64)`);
  }
  const body = line.slice(SIGNATURE_PREFIX.length);
  const space = body.indexOf(" ");
  const name = space < 0 ? body : body.slice(0, space);
  const problem = nameProblem(name);
  if (problem || space < 0) {
    throw new NoteError(`malformed note: the signature line ${quoted(line)}: ${problem || "no space after the key name"}`);
  }
  let raw;
  try { raw = unb64(body.slice(space + 1)); } catch (error) {
    throw new NoteError(`malformed note: the signature of ${name}: ${error.message}`);
  }
  if (raw.length < 5) {
    throw new NoteError(`malformed note: the signature of ${name} is ${raw.length} bytes, shorter than a key ID and a signature`);
  }
  return {name, keyId: hex(raw.slice(0, 4)), payload: raw.slice(4)};
}

/** The text of a signed note and its signatures ({name, keyId, payload}), checked for form. */
export function noteParts(note) {
  const problem = textProblem(note);
  if (problem) throw new NoteError(`malformed note: ${problem}`);
  const split = note.lastIndexOf("\n\n");
  if (split < 0) throw new NoteError("malformed note: no blank line separates the text from the signatures");
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2);
  if (!lines) throw new NoteError("malformed note: it has no signature lines");
  if (!lines.endsWith("\n")) throw new NoteError("malformed note: the last signature line does not end with a newline");
  const signatures = lines.slice(0, -1).split("\n");
  if (signatures.length > MAX_SIGNATURES) {
    throw new NoteError(`malformed note: it has ${signatures.length} signature lines, more than ${MAX_SIGNATURES}`);
  }
  return {text, signatures: signatures.map(parseSignatureLine)};
}

/** The text of the note if `verifier`'s signature on it holds; NoteError naming why not. */
export async function openNote(note, verifier) {
  const {text, signatures} = noteParts(note);
  for (const s of signatures) {
    if (s.name === verifier.name && s.keyId === verifier.keyId) {
      if (!await ed25519Verify(verifier.publicKey, utf8.encode(text), s.payload)) {
        throw new NoteError(`invalid signature for key ${verifier.label}`);
      }
      return text;
    }
  }
  throw new NoteError(`no signature by key ${verifier.label}`);
}

/** The checkpoint of a note text: {origin, size (BigInt), root (bytes), extensions}. */
export function parseCheckpoint(text) {
  if (!text.endsWith("\n")) throw new NoteError("the checkpoint does not end with a newline");
  const problem = textProblem(text);
  if (problem) throw new NoteError(`the checkpoint is not note text: ${problem}`);
  const lines = text.slice(0, -1).split("\n");
  if (lines.length < 3) {
    throw new NoteError(`a checkpoint has at least three lines (origin, tree size, root hash); this has ${lines.length}`);
  }
  const [origin, size, root, ...extensions] = lines;
  if (!origin) throw new NoteError("the checkpoint's origin line is empty");
  if (!DECIMAL.test(size) || BigInt(size) > MAX_INT63) {
    throw new NoteError(`the checkpoint's tree size ${quoted(size)} is not a decimal number without leading zeros, at most 2^63-1`);
  }
  let rootHash;
  try { rootHash = unb64(root); } catch (error) { throw new NoteError(`the checkpoint's root hash: ${error.message}`); }
  if (rootHash.length !== HASH_SIZE) {
    throw new NoteError(`the checkpoint's root hash is ${rootHash.length} bytes, not ${HASH_SIZE}`);
  }
  extensions.forEach((line, i) => {
    if (!line) throw new NoteError(`extension line ${i + 1} of the checkpoint is empty`);
  });
  return {origin, size: BigInt(size), root: rootHash, extensions};
}

/** The checkpoint of a note signed by the log's key, whose name is its origin. */
export async function openCheckpoint(note, verifier) {
  const checkpoint = parseCheckpoint(await openNote(note, verifier));
  if (checkpoint.origin !== verifier.name) {
    throw new NoteError(`the checkpoint's origin ${quoted(checkpoint.origin)} is not the name of the log's key ${quoted(verifier.name)}`);
  }
  return checkpoint;
}

/** The size a note claims, unchecked (to ask for the right proof), or null. */
export function sizeOfNote(note) {
  try { return parseCheckpoint(noteParts(note).text).size; } catch { return null; }
}

// The ledger's entries and receipts.

/** The ledger's 32-byte commitment to one stored event, an entry of its tree. */
export async function commitment(salt, originatorId, originatorVersion, topic, state) {
  if (salt.length !== 32) throw new Error(`the salt is ${salt.length} bytes, not 32`);
  const oid = utf8.encode(originatorId);
  const top = utf8.encode(topic);
  if (oid.length > 0xffff || top.length > 0xffff || state.length > 0xffffffff) {
    throw new Error("the originator ID or topic is over 65535 bytes, or the state over 2^32-1");
  }
  const header = (n, bytes) => {
    const out = new Uint8Array(n);
    const view = new DataView(out.buffer);
    if (n === 2) view.setUint16(0, bytes);
    else if (n === 4) view.setUint32(0, bytes);
    else view.setBigUint64(0, bytes);
    return out;
  };
  return sha256(concat(COMMITMENT_DOMAIN, salt, header(2, oid.length), oid,
    header(8, BigInt(originatorVersion)), header(2, top.length), top, header(4, state.length), state));
}

const isInt = (value) => typeof value === "number" && Number.isInteger(value);

/** One event of a receipt, read from its JSON; Error naming the first field that is wrong. */
function readEvent(event) {
  if (!event || typeof event !== "object" || Array.isArray(event)) throw new Error("it is not a JSON object");
  const opening = event.opening;
  if (!opening || typeof opening !== "object" || Array.isArray(opening)) throw new Error("its opening is missing or not an object");
  const {leaf, position, proof} = event;
  const {originator_id: oid, originator_version: version, topic, state, salt} = opening;
  if (!isInt(leaf) || leaf < 0) throw new Error("its leaf is not a whole number");
  if (!isInt(position)) throw new Error("its position is not a whole number");
  if (typeof oid !== "string" || typeof topic !== "string") throw new Error("its originator_id or topic is not text");
  if (!isInt(version) || version < 0 || version >= 2 ** 64) throw new Error("its originator_version is not a 64-bit whole number");
  if (typeof state !== "string" || typeof salt !== "string") throw new Error("its state or salt is not base64 text");
  if (!Array.isArray(proof) || !proof.every((h) => typeof h === "string")) throw new Error("its proof is not a list of base64 hashes");
  return {leaf, position, originatorId: oid, originatorVersion: version, topic,
    state: unb64(state), salt: unb64(salt), proof: proof.map(unb64)};
}

const eventLabel = (e) => `the event at leaf ${e.leaf} (position ${e.position}, ${e.originatorId} version ${e.originatorVersion})`;
const eventOf = (e) => ({leaf: e.leaf, position: e.position, aggregate: e.originatorId, version: e.originatorVersion});

/** A JSON value written with its objects' keys sorted: two values are the same JSON when these
 * are equal (tlog.py `_same_json`). */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

async function checkEvents(events, checkpoint, findings) {
  if (!Array.isArray(events) || !events.length) {
    findings.push({ok: false, what: "the receipt lists no events"});
    return [];
  }
  const states = [];
  const leaves = new Set();
  const decoder = new TextDecoder("utf-8", {fatal: true});
  for (const [i, raw] of events.entries()) {
    let event;
    let entry;
    try {
      event = readEvent(raw);
      entry = await commitment(event.salt, event.originatorId, event.originatorVersion, event.topic, event.state);
    } catch (error) {
      findings.push({ok: false, what: `event ${i + 1} of the receipt is malformed: ${error.message}`, n: i + 1});
      continue;
    }
    const where = eventOf(event);
    if (leaves.has(event.leaf)) {
      findings.push({ok: false, what: `two events of the receipt claim leaf ${event.leaf}`, event: where});
      continue;
    }
    leaves.add(event.leaf);
    if (BigInt(event.leaf) >= checkpoint.size) {
      findings.push({ok: false, what: `${eventLabel(event)} is beyond the checkpoint's tree size ${checkpoint.size}`, event: where});
      continue;
    }
    try {
      await verifyInclusion(event.leaf, checkpoint.size, await leafHash(entry), event.proof, checkpoint.root);
    } catch (error) {
      if (!(error instanceof ProofError)) throw error;
      findings.push({ok: false, event: where, what: `${eventLabel(event)}: its opening and proof do not lead `
        + `to the checkpoint's root: the opening was altered, or the event is not in the log (${error.message})`});
      continue;
    }
    findings.push({ok: true, event: where, what: `${eventLabel(event)} is in the log: its opening and proof lead to the checkpoint's root`});
    let state;
    try { state = JSON.parse(decoder.decode(event.state)); } catch { continue; }
    if (state && typeof state === "object" && !Array.isArray(state)) states.push(state);
  }
  return states;
}

function* places(states) {
  for (const state of states) {
    yield state;
    const data = state.data;
    if (data && typeof data === "object" && !Array.isArray(data)) yield data;
  }
}

async function checkFairness(fairness, states, findings) {
  if (!fairness || typeof fairness !== "object" || Array.isArray(fairness)) {
    findings.push({ok: false, what: "the receipt has no fairness object"});
    return;
  }
  const committed = fairness.commitment;
  const seed = fairness.server_seed;
  if (typeof committed !== "string") findings.push({ok: false, what: "the fairness commitment is missing or not text", field: "commitment"});
  if (seed !== null && seed !== undefined) {
    if (typeof seed !== "string" || !HEX.test(seed)) {
      findings.push({ok: false, what: "the fairness server seed is not hex", field: "server_seed"});
    } else {
      const bytes = Uint8Array.from(seed.match(/../g) || [], (h) => parseInt(h, 16));
      const digest = hex(await sha256(bytes));
      findings.push(digest === committed
        ? {ok: true, what: "the fairness server seed matches its commitment", field: "server_seed"}
        : {ok: false, field: "server_seed", what: `the fairness server seed does not match its commitment: SHA-256(server seed) is ${digest}, the commitment ${pyStr(committed)}`});
    }
  }
  for (const name of FAIRNESS_FIELDS) {
    if (!Object.hasOwn(fairness, name)) {
      findings.push({ok: false, what: `the fairness field ${name} is missing`, field: name});
      continue;
    }
    const value = fairness[name];
    if (name === "server_seed" && value === null) continue;  // not revealed yet
    const shown = pyDumps(value);
    const want = canonical(value);
    const found = [...places(states)].some((place) => Object.hasOwn(place, name) && canonical(place[name]) === want);
    findings.push(found
      ? {ok: true, field: name, what: `the fairness field ${name} (${shown}) is in an event in the log`}
      : {ok: false, field: name, what: `the fairness field ${name} (${shown}) is in none of the receipt's events in the log`});
  }
}

/** Every check of a `reddog-receipt/1` against the log's key (tlog.py `receipt_findings`), each
 * {ok, what} and, where it is about one, the event ({leaf, position, aggregate, version}) or the
 * fairness field; with the receipt's checkpoint ({origin, size, root, note}) when it verifies. */
export async function receiptFindings(receipt, verifier) {
  const findings = [];
  if (!receipt || typeof receipt !== "object" || Array.isArray(receipt)) {
    return {findings: [{ok: false, what: "the receipt is not a JSON object"}], checkpoint: null};
  }
  if (receipt.format !== RECEIPT_FORMAT) {
    return {findings: [{ok: false, what: `the receipt's format is ${pyRepr(receipt.format)}, not ${pyRepr(RECEIPT_FORMAT)}`}],
      checkpoint: null};
  }
  if (receipt.origin !== verifier.name) {
    findings.push({ok: false, what: `the receipt's origin ${pyRepr(receipt.origin)} is not the name of the log's key ${pyRepr(verifier.name)}`});
  }
  if (typeof receipt.deal !== "string") findings.push({ok: false, what: "the receipt's deal is missing or not text"});
  const note = receipt.checkpoint;
  if (typeof note !== "string") {
    findings.push({ok: false, what: "the receipt's checkpoint is missing or not text", part: "checkpoint"});
    return {findings, checkpoint: null};
  }
  let checkpoint;
  try {
    checkpoint = await openCheckpoint(note, verifier);
  } catch (error) {
    if (!(error instanceof NoteError)) throw error;
    findings.push({ok: false, part: "checkpoint", what: `the receipt's checkpoint is not a checkpoint signed by the log's key ${verifier.label}: ${error.message}`});
    return {findings, checkpoint: null};
  }
  findings.push({ok: true, part: "checkpoint", what: `the receipt's checkpoint is signed by the log's key ${verifier.label}: size ${checkpoint.size}, root ${b64(checkpoint.root)}`});
  const states = await checkEvents(receipt.events, checkpoint, findings);
  await checkFairness(receipt.fairness, states, findings);
  return {findings, checkpoint: {origin: checkpoint.origin, size: checkpoint.size, root: b64(checkpoint.root), note}};
}

/** Each failed check of a receipt as a sentence; [] if it holds (tlog.py `check_receipt`). */
export async function checkReceipt(receipt, verifier) {
  return (await receiptFindings(receipt, verifier)).findings.filter((f) => !f.ok).map((f) => f.what);
}
