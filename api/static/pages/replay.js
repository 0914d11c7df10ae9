// The replay viewer: one deal of either family, step by step, from GET /deals/{id}/replay or from
// a hand-history file opened in the page (read with FileReader, never sent anywhere). Each step
// shows its operation in words, the chips it moved (from → to, amount, cause), the cards on the
// table, the pot or bank, the stakes and each seat's balance after it; the fairness check runs
// here, with Web Crypto (fairness.js), on the deal's own events. The page holds no game rule: it
// reads what the events record.
import {$, cardHtml, chips, download, errorText, esc, fail, get, heldKey, param, post, say,
  signedIn} from "/static/pages/common.js";
import {checkDeal} from "/static/pages/fairness.js";
import {MAX_HISTORY_BYTES, parseHistory} from "/static/pages/rdhh.js";

let me = null;
let record = null;  // the deal shown: see fromReplay and fromHistory
let frames = [];
let at = 0;

// What a deal looks like to the viewer, whichever way it came.
function fromReplay(replay) {
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

function fromHistory(history, name) {
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

// Naming things in words.
const short = (id) => String(id ?? "").slice(0, 8);
const words = (type) => type.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();

function seatName(seat) {
  if (seat === null || seat === undefined) return "no one";
  const s = record.seats.find((x) => x.seat === Number(seat));
  return s ? `seat ${s.seat} (${esc(s.player_id)})` : `seat ${esc(seat)}`;
}

function accountName(account) {
  if (account === "house") return "the house";
  if (account === "operator") return "the operator";
  const [kind, id] = [account.slice(0, account.indexOf(":")), account.slice(account.indexOf(":") + 1)];
  if (kind === "wallet") {
    const s = record.seats.find((x) => x.wallet_id === id);
    return s ? `${esc(s.player_id)}'s wallet (seat ${s.seat})` : `wallet ${short(id)}…`;
  }
  if (kind === "stake") return record.casino ? "the deal's stake" : "the table's stake";
  if (kind === "pot") return "the pot or bank";
  return esc(account);
}

function causeText(cause) {
  if (!cause) return "";
  const parts = [cause.event ? words(cause.event) : "unnamed"];
  if (cause.deal && cause.deal !== record.deal_id) parts.push(`deal ${short(cause.deal)}…`);
  if (cause.dispute) parts.push(`dispute ${short(cause.dispute)}…`);
  return parts.join(", ");
}

const rule = (p) => (p.rule ? ` <span class="badge">rule ${esc(p.rule)}</span>` : "");
const positionNote = (p) => (p.position !== undefined && p.position !== null ? ` <small class="muted">(pack position ${esc(p.position)})</small>` : "");

/** The step's operation in words (HTML: cards drawn as cards). */
function operation(event) {
  const p = event.payload || {};
  const seat = seatName(p.seat);
  switch (event.type) {
    case "Committed":
      return record.casino || p.purpose !== "first_dealer"
        ? `The deal is committed (nonce ${esc(p.nonce)}, client seed <code>${esc(p.client_seed)}</code>, commitment <code>${esc(short(p.commitment))}…</code>): the pack is fixed before any card leaves it.${p.order && p.order.length ? ` Turn order: ${p.order.map(seatName).join(", ")}.` : ""}`
        : `A shuffle is committed to draw the first dealer (nonce ${esc(p.nonce)}, commitment <code>${esc(short(p.commitment))}…</code>).`;
    case "Wagered": return `The player bets ${chips(p.transfer?.amount)}.`;
    case "Stood": return "The player stands on the opening bet.";
    case "Raised": return `The player raises by ${chips(p.transfer?.amount)}.`;
    case "Settled":
      return `The deal settles: the player ${esc(p.outcome === "push" ? "pushes" : p.outcome === "win" ? "wins" : "loses")}${p.trips ? " with three of a kind" : ""}${p.odds ? ` (pays ${esc(p.odds)} to 1)` : ""}; ${chips(p.returned)} returned.`;
    case "CardDealt":
      if (record.casino) return `A card is dealt face up: ${cardHtml(p.card)}${positionNote(p)}.`;
      return p.face_up ? `A card is dealt face up to ${seat}: ${cardHtml(p.card)}${positionNote(p)}.`
        : `A card is dealt face down to ${seat}${positionNote(p)}.`;
    case "CardBurned": return `A card is burned: ${cardHtml(p.card)}${positionNote(p)}, shown, then put at the bottom of the pack.`;
    case "TargetTurned": return `The target card is turned${p.seat ? ` for ${seat}` : ""}: ${cardHtml(p.card)}${positionNote(p)}.`;
    case "CardDiscarded": return `A centre card is set aside: ${cardHtml(p.card)}${positionNote(p)}.`;
    case "CardsReturned": return `The hand of ${seat} goes to the bottom of the pack (positions ${esc((p.positions || []).join(", "))}).`;
    case "HandShown": return `${cap(seat)} shows ${(p.cards || []).map((c) => cardHtml(c.card)).join("")}.`;
    case "SeedRevealed": return `The deal is over and its server seed is revealed: <code>${esc(short(p.server_seed))}…</code>.`;
    case "DealVoided": return `The deal is void and is dealt again: ${esc(p.reason)}${rule(p)}.`;
    case "DealEnded": return "The deal ends.";
    case "DealerChosen": return `${cap(seat)} is the first dealer${rule(p)}.`;
    case "BankFunded": return `${cap(seat)} stakes the pot or bank with ${chips(p.transfer?.amount)}.`;
    case "Anted": return `${cap(seat)} antes ${chips(p.transfer?.amount)}${rule(p)}.`;
    case "BankEmptied": return `The pot or bank has run out (${chips(p.left)} left)${rule(p)}.`;
    case "BankCollected": return `${cap(seat)} takes back what is left of the bank: ${chips(p.transfer?.amount)}${rule(p)}.`;
    case "StitchDeclared": return `Stitch: the bank (${chips(p.bank)}) reached three times its start (${chips(p.banker_start)}); one more round${rule(p)}.`;
    case "DealerChoiceNeeded": return `${cap(seat)} must choose: pass the deal or deal a fourth time${rule(p)}.`;
    case "DealerChose": return `${cap(seat)} chooses to ${p.choice === "pass" ? "pass the deal" : "deal a fourth time"}${rule(p)}.`;
    case "DealPassed": return `The deal passes from ${seatName(p.from_seat)} to ${seatName(p.to_seat)}${rule(p)}.`;
    case "BetPlaced":
      if (p.amount === null || p.amount === undefined) return `${cap(seat)} seals a bet (the amount is shown when everyone has bet).`;
      return `${cap(seat)} ${p.sealed ? "seals a bet of" : "bets"} ${chips(p.amount)}.`;
    case "BetsUnsealed": return `Everyone has bet: the sealed bets are shown (${Object.entries(p.bets || {}).map(([s, a]) => `${seatName(s)}: ${chips(a)}`).join(", ")})${rule(p)}.`;
    case "CentreBought": return `${cap(seat)} buys a centre card for ${chips(p.price)}.`;
    case "Passed": return `${cap(seat)} passes${rule(p)}.`;
    case "TurnSkipped": return `The turn of ${seat} goes by: ${esc(p.reason)}${rule(p)}.`;
    case "PaidOut": case "PartiallyPaid":
      return `${cap(seat)} ${p.outcome === "win" ? "wins" : "loses"} a bet of ${chips(p.stake)} against ${cardHtml(p.target)}${p.winning_card ? ` with ${cardHtml(p.winning_card)}` : ""}: ${chips(p.returned)} returned${event.type === "PartiallyPaid" ? ", what was left of the pool" : ""}.`;
    case "PotSplit": return `The pot is split: ${chips(p.share)} to each seat, ${chips(p.remainder)} stays${rule(p)}.`;
    case "TableClosed": return `The table closes; the pot goes back to its owners${rule(p)}.`;
    case "Seated": return `${esc(p.player_id)} sits down in seat ${esc(p.seat)}.`;
    case "Unseated": return `${cap(seat)} leaves.`;
    case "SatOut": return `${cap(seat)} sits out: ${esc(p.reason)}${rule(p)}.`;
    case "SatIn": return `${cap(seat)} plays again.`;
    case "ClientSeedChanged": return `The client seed becomes <code>${esc(p.client_seed)}</code>.`;
    default: return `${esc(words(event.type))}.`;
  }
}

const cap = (text) => text.charAt(0).toUpperCase() + text.slice(1);

function transfersOf(payload) {
  const list = [];
  if (payload && payload.transfer && typeof payload.transfer === "object") list.push(payload.transfer);
  if (payload && Array.isArray(payload.transfers)) list.push(...payload.transfers.filter((t) => t && typeof t === "object"));
  return list;
}

// Every step as the viewer shows it, built from the events alone (the same for a file and for a
// deal read from the server), and the server's balances where it gave them.
function buildFrames() {
  const potAccount = `pot:${record.table_id}`;
  const stakeAccount = `stake:${record.table_id}`;
  const bySeatWallet = new Map(record.seats.map((s) => [`wallet:${s.wallet_id}`, s.seat]));
  const m = {
    pot: record.start.pot ?? null, stake: record.casino ? 0 : (record.start.stake ?? 0),
    dealer: record.start.dealer ?? null, hands: {}, bets: {}, target: null, burned: [],
    discarded: [], cards: [], bet: null, raised: false, outcome: null, returned: null, odds: null,
    net: Object.fromEntries(record.seats.map((s) => [s.seat, 0])),
  };
  return record.steps.map((step, index) => {
    const {event} = step;
    const p = event.payload || {};
    const moved = transfersOf(p);
    for (const t of moved) {
      for (const [account, sign] of [[t.source, -1], [t.destination, 1]]) {
        if (account === potAccount && m.pot !== null) m.pot += sign * t.amount;
        if (account === stakeAccount && !record.casino) m.stake += sign * t.amount;
        const seat = bySeatWallet.get(account);
        if (seat !== undefined) m.net[seat] += sign * t.amount;
      }
    }
    switch (event.type) {
      case "CardDealt":
        if (record.casino) m.cards.push({card: p.card, position: p.position});
        else (m.hands[p.seat] ||= []).push({position: p.position, card: p.face_up ? p.card : null, returned: false});
        break;
      case "HandShown":
        for (const c of p.cards || []) {
          const hand = (m.hands[p.seat] ||= []);
          const held = hand.find((h) => h.position === c.position);
          if (held) held.card = c.card; else hand.push({position: c.position, card: c.card, returned: false});
        }
        break;
      case "CardsReturned":
        for (const h of m.hands[p.seat] || []) if ((p.positions || []).includes(h.position)) h.returned = true;
        break;
      case "TargetTurned": m.target = {card: p.card, position: p.position, seat: p.seat ?? null}; break;
      case "CardBurned": m.burned.push({card: p.card, position: p.position}); break;
      case "CardDiscarded": m.discarded.push({card: p.card, position: p.position}); break;
      case "BetPlaced": m.bets[p.seat] = p.amount; break;
      case "PaidOut": case "PartiallyPaid": delete m.bets[p.seat]; break;
      case "DealerChosen": m.dealer = p.seat; break;
      case "DealPassed": m.dealer = p.to_seat; break;
      // A casino deal's stake is what the player put down: the opening bet and any raise.
      case "Wagered": m.bet = p.transfer?.amount ?? null; m.stake += m.bet ?? 0; break;
      case "Raised": m.raised = true; m.stake += p.transfer?.amount ?? 0; break;
      case "Settled": m.outcome = p.outcome; m.returned = p.returned; m.odds = p.odds; break;
      default: break;
    }
    const balances = Object.fromEntries((step.balances || []).map((b) => [b.seat, b.balance]));
    return {
      index, event, words: operation(event), moved, state: step.state,
      pot: m.pot, stake: m.stake, dealer: m.dealer, target: m.target,
      burned: [...m.burned], discarded: [...m.discarded], bets: {...m.bets},
      hands: Object.fromEntries(Object.entries(m.hands).map(([s, h]) => [s, h.map((c) => ({...c}))])),
      cards: [...m.cards], bet: m.bet, raised: m.raised, outcome: m.outcome, returned: m.returned,
      odds: m.odds, net: {...m.net},
      balance: Object.fromEntries(record.seats.map((s) => [s.seat, s.seat in balances ? balances[s.seat] : null])),
    };
  });
}

// Drawing.
function factsHtml(pairs) {
  return pairs.map(([key, label, value]) => `<div><dt>${label}</dt><dd data-fact="${key}">${value}</dd></div>`).join("");
}

function showRecord() {
  $("#title").textContent = record.source === "file"
    ? `Hand history: ${record.title} deal ${short(record.deal_id)}`
    : `Replay: ${record.title} deal ${short(record.deal_id)}`;
  document.title = `Replay ${short(record.deal_id)} · Red Dog Ledger`;
  const seed = record.server_seed
    ? `<code class="hex">${esc(record.server_seed)}</code>` : "not revealed until the deal ends";
  $("#facts").innerHTML = factsHtml([
    ["source", "Read from", record.source === "file" ? `the file ${esc(record.file)} (in this browser only)` : "the server's replay"],
    ["variant", "Variant", `${esc(record.title)}${record.title !== record.variant ? ` <small class="muted">(${esc(record.variant)})</small>` : ""}`],
    ["deal", "Deal", `<code class="hex">${esc(record.deal_id)}</code>`],
    ["table", "Table", `<code class="hex">${esc(record.table_id)}</code>`],
    ["started", "Committed at", esc(record.started)],
    ["nonce", "Nonce", esc(record.nonce)],
    ["client_seed", "Client seed", `<code class="hex">${esc(record.client_seed)}</code>`],
    ["commitment", "Commitment (SHA-256 of the server seed)", `<code class="hex">${esc(record.commitment)}</code>`],
    ["server_seed", "Server seed, revealed", seed],
  ]);
  frames = buildFrames();
  const slider = $("#slider");
  slider.max = String(frames.length);
  $("#viewer").hidden = false;
  go(0);
  checkFairness();
}

function handHtml(hand) {
  return (hand || []).map((c) => `<span class="held${c.returned ? " returned" : ""}">${cardHtml(c.card)}</span>`).join("")
    || `<span class="muted">no cards</span>`;
}

function balanceHtml(frame, seat) {
  const balance = frame.balance[seat];
  const net = frame.net[seat] || 0;
  const shown = balance === null || balance === undefined
    ? `<strong class="seat-balance" data-hidden="true">${record.source === "file" ? "not in the file" : "hidden"}</strong>`
    : `<strong class="seat-balance">${chips(balance)}</strong>`;
  return `Balance ${shown} · this deal <strong class="seat-net">${net > 0 ? "+" : net < 0 ? "−" : ""}${chips(Math.abs(net))}</strong>`;
}

function transfersHtml(frame) {
  if (!frame.moved.length) return `<p class="muted">No chips moved in this step.</p>`;
  return `<ul class="transfers">${frame.moved.map((t) => `<li data-transfer="${esc(t.id)}">
    <span>${accountName(t.source)} → ${accountName(t.destination)}</span>
    <strong class="amount">${chips(t.amount)}</strong>
    <small class="muted">cause: ${esc(causeText(t.cause))}</small></li>`).join("")}</ul>`;
}

function casinoHtml(frame) {
  const slot = (position, label) => {
    const c = frame.cards.find((x) => x.position === position);
    return `<div class="slot" data-slot="${position}">${c ? cardHtml(c.card) : `<span class="empty"></span>`}<small>${label}</small></div>`;
  };
  const [s] = record.seats;
  const outcome = frame.outcome ? `${frame.outcome}${frame.odds ? ` (pays ${frame.odds} to 1)` : ""}` : "–";
  return `<section class="felt" aria-label="The cards">
      <div class="slots">${slot(0, "First card")}${slot(2, "Third card")}${slot(1, "Second card")}</div>
    </section>
    <dl class="facts">${factsHtml([
      ["bank", "Bank", "the house"], ["bet", "Opening bet", chips(frame.bet)],
      ["raised", "Raised", frame.raised ? "yes" : "no"], ["stake", "Stake", chips(frame.stake)],
      ["outcome", "Outcome", esc(outcome)], ["returned", "Returned", chips(frame.returned)],
      ...(frame.state && frame.state.phase ? [["phase", "Phase", esc(frame.state.phase)]] : []),
    ])}</dl>
    <div class="seats"><article class="seat" data-seat="${s.seat}" aria-label="Seat ${s.seat}, ${esc(s.player_id)}">
      <h3>Seat ${s.seat}: ${esc(s.player_id)}</h3><p>${balanceHtml(frame, s.seat)}</p></article></div>`;
}

function tableHtml(frame) {
  const centre = [];
  if (frame.target) centre.push(`<div class="centre-cards" id="target">Target${frame.target.seat ? ` for seat ${esc(frame.target.seat)}` : ""} ${cardHtml(frame.target.card)}</div>`);
  if (frame.burned.length) centre.push(`<div class="centre-cards" id="burned">Burned ${frame.burned.map((c) => cardHtml(c.card)).join("")}</div>`);
  if (frame.discarded.length) centre.push(`<div class="centre-cards" id="discarded">Set aside ${frame.discarded.map((c) => cardHtml(c.card)).join("")}</div>`);
  const seats = record.seats.map((s) => {
    const bet = frame.bets[s.seat];
    const badges = [frame.dealer === s.seat ? "dealer" : "", me && me.role === "player" && s.player_id === me.player_id ? "you" : ""].filter(Boolean);
    return `<article class="seat" data-seat="${s.seat}" aria-label="Seat ${s.seat}, ${esc(s.player_id)}">
      <h3>Seat ${s.seat}: ${esc(s.player_id)}${badges.map((b) => `<span class="badge">${b}</span>`).join("")}</h3>
      <div class="hand" aria-label="Hand of seat ${s.seat}">${handHtml(frame.hands[s.seat])}</div>
      <p>Bet <strong class="seat-bet">${bet === undefined ? "–" : bet === null ? "sealed" : chips(bet)}</strong></p>
      <p>${balanceHtml(frame, s.seat)}</p></article>`;
  }).join("");
  return `<dl class="facts">${factsHtml([
      ["pot", "Pot or bank", chips(frame.pot)], ["stake", "Stake out (bets not settled)", chips(frame.stake)],
      ["dealer", "Dealer", frame.dealer ? seatName(frame.dealer) : "–"],
      ...(frame.state && frame.state.phase ? [["phase", "Phase", esc(frame.state.phase)]] : []),
    ])}</dl>
    ${centre.length ? `<div class="centre">${centre.join("")}</div>` : ""}
    <div class="seats">${seats}</div>`;
}

function go(index) {
  at = Math.max(0, Math.min(frames.length - 1, index));
  const frame = frames[at];
  const e = frame.event;
  $("#slider").value = String(at + 1);
  $("#slider").setAttribute("aria-valuetext", `Step ${at + 1} of ${frames.length}: ${words(e.type)}`);
  $("#position").textContent = `Step ${at + 1} of ${frames.length}`;
  for (const [id, off] of [["#first", at === 0], ["#back", at === 0],
    ["#forward", at === frames.length - 1], ["#last", at === frames.length - 1]]) {
    $(id).setAttribute("aria-disabled", String(off));
  }
  $("#step").innerHTML = `<div class="step" data-step="${at + 1}" data-version="${e.version}" data-type="${esc(e.type)}">
    <p class="step-head"><span class="badge">v${esc(e.version)}</span> <strong>${esc(words(e.type))}</strong>
      <small class="muted">${esc(e.timestamp)}</small></p>
    <p class="operation" id="operation">${frame.words}</p>
    <h3>Chips moved</h3>${transfersHtml(frame)}
    <h3>After this step</h3>${record.casino ? casinoHtml(frame) : tableHtml(frame)}</div>`;
}

// The fairness check, here: the deal's own events (a multi-seat table's carry its deal_id).
async function checkFairness() {
  const box = $("#fairness");
  box.removeAttribute("data-result");
  if (!record.server_seed) {
    box.innerHTML = `<p class="muted">The server seed is revealed, and the deal checkable, when the deal ends.</p>`;
    box.dataset.result = "unfinished";
    return;
  }
  box.innerHTML = `<p class="muted">Checking…</p>`;
  const shown = record;
  const events = record.steps.map((s) => s.event)
    .filter((e) => record.casino || e.payload?.deal_id === record.deal_id);
  const [committed, ...rest] = events;
  const result = await checkDeal({
    serverSeed: record.server_seed, commitment: committed.payload.commitment,
    clientSeed: committed.payload.client_seed, nonce: committed.payload.nonce,
    commitmentVersion: committed.version, events: rest,
  });
  if (shown !== record) return;  // another deal was opened meanwhile
  const c = result.commitment;
  const lines = [`<li id="check-commitment" data-ok="${c.ok}" class="${c.ok ? "ok" : "error"}">
    <strong>Commitment ${c.ok ? "matches" : "does not match"}</strong>: SHA-256 of the server seed is
    <code class="hex">${esc(c.computed ?? "not computable")}</code>; the deal committed to
    <code class="hex">${esc(c.committed)}</code>.</li>`];
  if (result.packError) {
    lines.push(`<li id="check-pack" class="error"><strong>No pack</strong>: ${esc(result.packError)}.</li>`);
  }
  const f = result.first;
  if (!f) {
    lines.push(`<li id="check-cards" data-ok="true" class="ok"><strong>Every card matches</strong>:
      the ${result.cardsChecked} cards the log shows are the recomputed pack's, each taken from the
      top in turn, all after the commitment.</li>`);
  } else if (f.kind === "card") {
    lines.push(`<li id="first-difference" data-ok="false" class="error" data-position="${esc(f.position)}"
      data-expected="${esc(f.expected ?? "")}" data-logged="${esc(f.logged)}" data-version="${f.version}">
      <strong>First difference, pack position ${esc(f.position)}</strong>: the pack has
      ${f.expected ? cardHtml(f.expected) : "no card"}, the log shows ${cardHtml(f.logged)}
      (step v${esc(f.version)}, ${esc(words(f.type))}). ${goto(f.version)}</li>`);
  } else {
    lines.push(`<li id="first-difference" data-ok="false" class="error" data-position="${esc(f.position)}"
      data-version="${f.version}"><strong>First difference</strong>: ${esc(f.detail)}. ${goto(f.version)}</li>`);
  }
  box.dataset.result = result.passes ? "passes" : "fails";
  box.innerHTML = `<p class="verdict ${result.passes ? "ok" : "error"}" id="verdict">${result.passes
    ? "Passes: the pack is the one committed to, and every card the log shows is that pack's."
    : "Fails: this deal's log is not the committed shuffle."}</p>
    <ul class="checks">${lines.join("")}</ul>
    ${result.pack ? `<details><summary>The recomputed pack, top first</summary>
      <div class="pack">${result.pack.map((card, i) => `<span title="position ${i}">${cardHtml(card)}</span>`).join("")}</div></details>` : ""}`;
}

/** A button that shows the step of an event version. */
function goto(version) {
  const index = frames.findIndex((f) => f.event.version === version);
  return index < 0 ? "" : `<button type="button" class="link" data-goto="${index}">Show that step</button>`;
}

// Moving through the steps: buttons, slider, keys.
$("#fairness").addEventListener("click", (event) => {
  const button = event.target.closest("button[data-goto]");
  if (!button) return;
  go(Number(button.dataset.goto));
  $("#step").scrollIntoView({block: "start"});
});
$("#first").addEventListener("click", () => go(0));
$("#back").addEventListener("click", () => go(at - 1));
$("#forward").addEventListener("click", () => go(at + 1));
$("#last").addEventListener("click", () => go(frames.length - 1));
$("#slider").addEventListener("input", (event) => go(Number(event.target.value) - 1));
document.addEventListener("keydown", (event) => {
  if (!frames.length || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
  const target = event.target;
  if (target.closest && target.closest("input, textarea, select, [contenteditable]")) return;
  const moves = {ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: frames.length - 1};
  if (!(event.key in moves)) return;
  event.preventDefault();
  go(moves[event.key]);
});

// A hand-history file: read and shown here, sent nowhere.
$("#file").addEventListener("change", (event) => {
  const file = event.target.files && event.target.files[0];
  if (!file) return;
  if (file.size > MAX_HISTORY_BYTES) {
    say(`${file.name} is larger than ${MAX_HISTORY_BYTES} bytes, the most a hand history may be.`, true);
    return;
  }
  const reader = new FileReader();
  reader.addEventListener("load", () => {
    try {
      record = fromHistory(parseHistory(String(reader.result)), file.name);
    } catch (error) {
      say(`${file.name} is not a hand history this page can read: ${error.message}`, true);
      return;
    }
    $("#deal-actions").hidden = true;
    say(`Opened ${file.name}: read and checked in this browser only.`);
    showRecord();
  });
  reader.addEventListener("error", () => say(`Could not read ${file.name}.`, true));
  reader.readAsText(file);
});

// The deal's hand history, fetched with this tab's key (never in the address) and saved as a file.
$("#download").addEventListener("click", async () => {
  const line = $("#download-status");
  line.textContent = "";
  line.className = "";
  const name = `deal-${record.deal_id}.rdhh`;
  try {
    await download(`/deals/${record.deal_id}/history`, name, "text/plain");
    line.textContent = `Saved ${name}.`;
  } catch (error) {
    line.className = "error";
    line.textContent = `The hand history could not be downloaded: ${errorText(error)}`;
  }
});

// Disputes: the deal's player may dispute it; everyone sees the deal's disputes they may read.
function disputeHtml(d) {
  const resolved = d.status === "resolved";
  const link = me.role === "player" ? "" : ` <a href="/pages/disputes?id=${encodeURIComponent(d.dispute_id)}">Open dispute ${esc(short(d.dispute_id))}…</a>`;
  return `<li class="dispute" data-dispute="${esc(d.dispute_id)}" data-status="${esc(d.status)}">
    <strong>${esc(d.player_id)}'s dispute is ${esc(d.status)}</strong>${link}
    <br><span class="muted">“${esc(d.message)}”, opened ${esc(d.opened_at)}</span>
    ${resolved ? `<br>Finding: ${esc(d.finding)} (${d.upheld ? "upheld" : "not upheld"}${d.adjustment ? `, ${chips(d.adjustment.amount)} paid to the wallet` : ""})` : ""}</li>`;
}

async function showDisputes() {
  const box = $("#disputes");
  const mine = me.role === "player" && record.seats.some((s) => s.player_id === me.player_id);
  if (me.role === "player" && !mine) { box.innerHTML = ""; return; }
  try {
    const {disputes} = await get(`/disputes?deal=${encodeURIComponent(record.deal_id)}`);
    let html = `<h3>Disputes</h3>`;
    html += disputes.length ? `<ul class="disputes">${disputes.map(disputeHtml).join("")}</ul>`
      : `<p class="muted">${me.role === "player" ? "You have not disputed this deal." : "No one has disputed this deal."}</p>`;
    if (mine && !disputes.length && record.finished) {
      html += `<form id="dispute-form" class="dispute-form">
        <label for="dispute-message">Dispute this deal: what is wrong with it?</label>
        <textarea id="dispute-message" rows="3" maxlength="1000" required></textarea>
        <p><button type="submit" class="primary">Dispute this deal</button></p></form>`;
    }
    box.innerHTML = html;
    const form = $("#dispute-form");
    if (form) form.addEventListener("submit", openDispute);
  } catch (error) {
    box.innerHTML = `<p class="error">The deal's disputes could not be read: ${esc(errorText(error))}</p>`;
  }
}

async function openDispute(event) {
  event.preventDefault();
  const message = $("#dispute-message").value;
  try {
    const dispute = await post(`/deals/${record.deal_id}/disputes`, {message});
    say(`Your dispute ${short(dispute.dispute_id)}… is open: staff will review the deal.`);
    await showDisputes();
  } catch (error) {
    fail(error);
  }
}

async function openDeal(id) {
  say("Loading the replay…");
  try {
    record = fromReplay(await get(`/deals/${encodeURIComponent(id)}/replay`));
  } catch (error) {
    say(`The deal cannot be replayed: ${errorText(error)}`, true);
    return;
  }
  say(record.finished ? "" : "This deal is still in progress: its seed is revealed when it ends.");
  showRecord();
  $("#deal-actions").hidden = false;
  await showDisputes();
}

const dealId = param("deal");
if (dealId) {
  me = await signedIn();
  await openDeal(dealId);
} else {
  if (heldKey()) me = await signedIn();
  say("Open a hand-history file below, or follow a deal's Replay link.");
}
