// The Casino Red Dog table of seed page 002. The bet slip's rules are the server's (C8): every
// control asks `GET /tables/{id}/bet-slip`, which answers the new slip, what each control may do
// next and why each refused one is refused; Deal, Stand and Raise are the table's and deal's
// commands, each taken by the request the table's last answer links for it (`links.deal`,
// `.stand`, `.raise`), and offered only while it does. One slip is one deal: the slip carries
// one Idempotency-Key from its first chip to Deal's answer, and every control is disabled while
// a request is in flight. Each of the last deals links its replay and offers its receipt, saved
// as a file and its checkpoint checked against the one this browser keeps (transparency.js).
import {$, $$, ApiError, Intent, cardView, chips, errorText, fail, follow, get, html, inFlight, linkTo,
  param, render as fill, ruleText, say, signedIn, whileInFlight} from "/static/pages/common.js";
import {cap, downloadReceipt} from "/static/pages/transparency.js";

const tableId = param("table");
let view = null;     // GET /tables/{id}
let slip = null;     // GET /tables/{id}/bet-slip
let chip = null;     // the chip chosen (a choice on the page, not a rule)
let watching = false;  // staff: the table is its player's, the page only shows it
let history = [];
const slipIntent = new Intent();      // the slip's Idempotency-Key, from its first chip to Deal's answer
const decisionIntent = new Intent();  // the current deal's Stand or Raise: one of them, once
let decisionFor = null;               // the deal decisionIntent is for
let whyShown = "";                    // what the reasons list says now (redrawn only on a change)

const CONTROLS = ["bet", "undo", "clear", "rebet", "double", "deal", "stand", "raise"];
const NAMES = {bet: "Bet", undo: "Undo", clear: "Clear", rebet: "Rebet", double: "Double",
  deal: "Deal", stand: "Stand", raise: "Raise"};
const allControls = () => [...$$(".chip"), ...CONTROLS.map((name) => $(`#${name}`))];

async function askSlip(action, extra = {}) {
  const query = new URLSearchParams();
  for (const c of slip ? slip.chips : []) query.append("chips", c);
  if (action) query.set("action", action);
  for (const [k, v] of Object.entries(extra)) query.set(k, v);
  slip = await get(`/tables/${tableId}/bet-slip?${query}`);
  if (!slip.chips.length) slipIntent.renew();  // an empty slip: the next chip begins another
}

function deal() { return view && view.current_deal; }
const deciding = () => Boolean(deal() && deal().awaiting === "player");

function renderCards() {
  const d = deal();
  const cards = d ? d.cards : [];
  const slots = [cards[0], cards[2], cards[1]];  // first, third (between), second
  slots.forEach((c, i) => {
    fill($(`#slot-${[1, 3, 2][i]}`), c ? cardView(c.card) : html`<span class="empty"></span>`);
  });
  let spread = "Place a bet and deal";
  if (d && d.opening) {
    const o = d.opening;
    if (o.kind === "spread") spread = `Spread ${o.spread} · pays ${o.odds} to 1`;
    else if (o.kind === "consecutive") spread = "Consecutive: a push";
    else spread = "Pair: three of a kind pays 11 to 1";
  }
  $("#spread").textContent = spread;
  let outcome = "";
  if (d && d.phase === "finished") {
    const net = d.net > 0 ? `+${chips(d.net)}` : chips(d.net);
    outcome = `${d.outcome[0].toUpperCase()}${d.outcome.slice(1)}: stake ${chips(d.stake)}, returned ${chips(d.returned)} (net ${net})`;
  } else if (d && d.awaiting) {
    outcome = "Stand or Raise?";
  }
  $("#outcome").textContent = outcome;
  $("#outcome").dataset.deal = d ? `${d.id} ${d.phase}` : "";
}

/** Why each disabled control is disabled: [[control ids], words], the same words once. */
function reasons() {
  const found = new Map();
  const because = (id, words) => found.set(words, [...(found.get(words) || []), id]);
  const d = deal();
  if (watching) {
    for (const id of [...$$(".chip").map((b) => b.id), ...CONTROLS]) {
      because(id, `Only ${view.player_id} plays at this table: you are watching it.`);
    }
    return [...found].map(([words, ids]) => [ids, words]);
  }
  if (deciding()) {
    for (const b of $$(".chip")) because(b.id, "The deal waits for Stand or Raise.");
    if (!linkTo(view, "raise") && linkTo(view, "stand")) {
      because("raise", `C6: a raise adds the opening bet, ${chips(d.bet)}: the balance ${chips(view.balance)} cannot cover it.`);
    }
    return [...found].map(([words, ids]) => [ids, words]);
  }
  const refused = slip && slip.refused ? slip.refused : {add: {}};
  for (const b of $$(".chip")) {
    const why = refused.add[b.dataset.chip];
    if (why) because(b.id, ruleText(why.rule, why.detail));
  }
  if (chip === null) because("bet", "Choose a chip first.");
  else if (refused.add[String(chip)]) because("bet", ruleText(refused.add[String(chip)].rule, refused.add[String(chip)].detail));
  for (const name of ["undo", "clear", "rebet", "double", "deal"]) {
    if (refused[name]) because(name, ruleText(refused[name].rule, refused[name].detail));
  }
  return [...found].map(([words, ids]) => [ids, words]);
}

function controlName(id) {
  return id.startsWith("chip-") ? `${chips(Number(id.slice(5)))}` : NAMES[id];
}

/** "500 and 1,000 chips, Double": the controls a reason holds, chips first. */
function namesOf(ids) {
  const chipIds = ids.filter((id) => id.startsWith("chip-"));
  const names = [];
  if (chipIds.length) {
    const values = chipIds.map(controlName);
    const list = values.length > 1 ? `${values.slice(0, -1).join(", ")} and ${values.at(-1)}` : values[0];
    names.push(`${list} chip${values.length > 1 ? "s" : ""}`);
  }
  names.push(...ids.filter((id) => !id.startsWith("chip-")).map(controlName));
  return names.join(", ");
}

function renderControls() {
  const d = deal();
  const choosing = deciding();
  $$(".betting").forEach((b) => { b.hidden = choosing; });
  $$(".deciding").forEach((b) => { b.hidden = !choosing; });
  $("#raise").disabled = watching || !(choosing && linkTo(view, "raise"));
  $("#stand").disabled = watching || !(choosing && linkTo(view, "stand"));
  const allowed = slip ? slip.allowed : {add: {}};
  $$(".chip").forEach((b) => {
    b.setAttribute("aria-pressed", String(Number(b.dataset.chip) === chip));
    b.disabled = watching || choosing || !allowed.add[b.dataset.chip];
  });
  $("#bet").disabled = watching || choosing || chip === null || !allowed.add[String(chip)];
  $("#bet").textContent = chip === null ? "Bet" : `Bet ${chips(chip)}`;
  for (const name of ["undo", "clear", "rebet", "double", "deal"]) {
    $(`#${name}`).disabled = watching || choosing || !allowed[name];
  }
  if (!linkTo(view, "deal")) $("#deal").disabled = true;
  $("#bet-total").textContent = chips(choosing ? d.stake : slip ? slip.total : 0);
  $("#bet-chips").textContent = slip && slip.chips.length ? `(${slip.chips.join(" + ")})` : "";
  $("#balance").textContent = chips(view.balance);
  renderReasons();
}

/** Each disabled control's reason, in words beside the controls and tied to the control
 * (`aria-describedby`); the list is a polite live region, redrawn only when it changes. */
function renderReasons() {
  const shown = reasons().filter(([ids]) => ids.some((id) => {
    const control = $(`#${id}`);
    return control && control.disabled && !control.hidden;
  }));
  const words = JSON.stringify(shown);
  if (words !== whyShown) {
    whyShown = words;
    fill($("#why-not"), shown.map(([ids, text], i) => html`<li id="why-${i}" data-for="${ids.join(" ")}"><strong>${namesOf(ids)}</strong>: ${text}</li>`));
  }
  for (const control of allControls()) control.removeAttribute("aria-describedby");
  shown.forEach(([ids], i) => {
    for (const id of ids) {
      const control = $(`#${id}`);
      if (control.disabled) control.setAttribute("aria-describedby", `why-${i}`);
    }
  });
}

/** What the player may do next, in words naming only enabled controls. */
function nextStep() {
  if (watching) return "";
  const enabled = (name) => !$(`#${name}`).disabled && !$(`#${name}`).hidden;
  if (deciding()) return enabled("raise") ? "Stand or Raise." : "Stand: the balance cannot cover a Raise.";
  const steps = [];
  if (enabled("bet")) steps.push(`tap Bet to lay the ${chips(chip)} chip`);
  if (enabled("deal")) steps.push(`Deal ${chips(slip.total)}`);
  if (!steps.length && $$(".chip").some((b) => !b.disabled)) steps.push("choose a chip, then tap Bet");
  if (!steps.length && enabled("rebet")) steps.push(`Rebet ${chips(slip.last_opening)}`);
  if (!steps.length) return "No chip can be laid now: the reasons are beside the controls.";
  const sentence = steps.join(", or ");
  return `${sentence[0].toUpperCase()}${sentence.slice(1)}.`;
}

/** The control to move focus to after a deal's answer: the next action there is. */
function nextAction() {
  const candidates = deciding() ? ["raise", "stand"] : ["deal", "rebet", "bet"];
  for (const name of candidates) {
    const control = $(`#${name}`);
    if (!control.disabled && !control.hidden) return control;
  }
  return $$(".chip").find((b) => !b.disabled) || null;
}

function renderHistory() {
  const focused = document.activeElement && document.activeElement.closest
    ? document.activeElement.closest("#history [data-receipt], #history a[href]") : null;
  const again = focused ? (focused.dataset.receipt ? `[data-receipt="${focused.dataset.receipt}"]`
    : `a[href="${focused.getAttribute("href")}"]`) : null;
  fill($("#history tbody"), history.length ? history.slice(0, 10).map((h) => html`<tr>
    <td>${h.cards.map((c) => cardView(c))}</td><td class="num">${chips(h.stake)}</td>
    <td>${h.outcome}</td><td class="num">${chips(h.returned)}</td>
    <td class="links"><a href="/pages/replay?deal=${h.id}">Replay</a>
      <button type="button" data-receipt="${h.id}">Download receipt</button></td></tr>`)
    : html`<tr><td colspan="5" class="muted">No deals yet.</td></tr>`);
  if (again) {  // a redraw keeps the focus where it was
    const back = $(`#history ${again}`);
    if (back) back.focus();
  }
}

// The server's paytable, with runs of spreads that pay the same written as one row (4–11).
function paytableRows(paytable) {
  const rows = [];
  for (const [label, odds] of Object.entries(paytable)) {
    if (label === "trips") { rows.push(["Pair, then three of a kind", odds]); continue; }
    const spread = Number(label.replace("spread_", ""));
    const last = rows[rows.length - 1];
    if (last && last.odds === odds && last.to === spread - 1) { last.to = spread; continue; }
    rows.push(Object.assign([null, odds], {from: spread, to: spread, odds}));
  }
  return rows.map((r) => (r[0] === null ? [r.from === r.to ? `${r.from}` : `${r.from}–${r.to}`, r[1]] : r));
}

function render() { renderCards(); renderControls(); renderHistory(); }

async function refresh() {
  view = await get(`/tables/${tableId}`);
  const d = deal();
  if (d && d.phase === "finished" && !history.some((h) => h.id === d.id)) {
    history.unshift({id: d.id, cards: d.cards.map((c) => c.card), stake: d.stake,
      outcome: d.outcome, returned: d.returned});
  }
}

/** Take one control's request with every control held until its answer (`whileInFlight`):
 * `work` answers what happened in words; then the page is drawn again, the status says what
 * happened and what may come next, and focus goes to `focus()` when the clicked control can no
 * longer take it. */
async function act(clicked, work, {reason = "Updating the bet slip…", focus = nextAction} = {}) {
  if (allControls().some(inFlight)) return;
  let done = "";
  let failed = null;
  try {
    done = await whileInFlight(allControls(), work, {reason}) || "";
  } catch (error) { failed = error; }
  render();
  if (failed) fail(failed);
  else say(`${done} ${nextStep()}`.trim());
  if (clicked.disabled || clicked.hidden || document.activeElement === document.body) {
    const next = focus();
    if (next) next.focus();
  }
}

/** The deal's Stand or Raise carries one Idempotency-Key per deal: a retry of either, or the
 * other after a lost answer, is answered once. */
function decisionKey(d) {
  if (decisionFor !== d.id) { decisionIntent.renew(); decisionFor = d.id; }
  return decisionIntent.value;
}

/** After a request with no answer, or a 409: read the table again; a deal it shows that was not
 * there before answered the slip. */
async function recover(error, before) {
  if (error instanceof ApiError && error.status !== 409) return;
  try {
    await refresh();
    if (deal() && deal().id !== before) { slipIntent.renew(); slip = null; await askSlip(); }
  } catch { /* the next control asks again */ }
}

$("#history").addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-receipt]");
  if (!button) return;
  try {
    const {file, seen} = await downloadReceipt(button.dataset.receipt);
    say(seen && !seen.ok ? `Saved ${file}, but its checkpoint does not check out: ${seen.what}`
      : `Saved ${file}.${seen ? ` ${cap(seen.what)}` : ""}`, Boolean(seen && !seen.ok));
  } catch (error) {
    say(`The receipt could not be downloaded: ${errorText(error)}`, error);
  }
});

// Every control is disabled in the page's HTML until the table has been read (`render`).
$$(".chip").forEach((b) => b.addEventListener("click", () => {
  if (!view) return;
  chip = Number(b.dataset.chip);
  render();
  say(`${chips(chip)} chip chosen. ${nextStep()}`);
}));
/** A control's click, taken by `act`; the second and third clicks of a double or triple click
 * are not clicks of their own (the first's answer may have put another control under them). */
function onClick(control, work, options) {
  control.addEventListener("click", (event) => {
    if (event.detail > 1) return;
    act(control, work, options);
  });
}

onClick($("#bet"), async () => {
  await askSlip("add", {chip});
  return `Bet ${chips(slip.total)}.`;
});
for (const name of ["undo", "clear", "rebet", "double"]) {
  onClick($(`#${name}`), async () => {
    await askSlip(name);
    return `${NAMES[name]}: bet ${chips(slip.total)}.`;
  });
}
onClick($("#deal"), async () => {
  const before = deal() ? deal().id : null;
  let dealt;
  try {
    dealt = await follow(view, "deal", {bet: slip.total}, {idempotencyKey: slipIntent.value});
  } catch (error) {
    await recover(error, before);
    throw error;
  }
  slipIntent.renew();
  slip = null;
  await refresh();
  await askSlip();
  return dealt.awaiting ? "Your cards are a spread." : "Dealt.";
}, {reason: "Dealing: a deal is in progress.", focus: nextAction});
for (const name of ["stand", "raise"]) {
  onClick($(`#${name}`), async () => {
    const before = deal().id;
    try {
      await follow(view, name, undefined, {idempotencyKey: decisionKey(deal())});
    } catch (error) {
      await recover(error, before);
      throw error;
    }
    await refresh();
    await askSlip();
    return name === "raise" ? "Raised." : "Stood.";
  }, {reason: `${NAMES[name]}: a deal is in progress.`, focus: nextAction});
}

const me = await signedIn();
watching = me.role !== "player";
try {
  await refresh();
  $("h1").textContent = `Casino Red Dog · ${view.player_id}`;
  fill($("#paytable"), html`<tbody><tr><th>Spread</th><th class="num">Pays</th></tr>${
    paytableRows(view.paytable).map(([label, odds]) => html`<tr><td>${label}</td>
      <td class="num">${odds} to 1</td></tr>`)}</tbody>`);
  if (!watching) {
    await askSlip();
    const recall = await get(`/players/${encodeURIComponent(me.player_id)}/recall?count=10`);
    for (const r of recall.deals) {
      if (r.table_id === tableId && !history.some((h) => h.id === r.deal_id)) {
        history.push({id: r.deal_id, cards: r.cards, stake: r.bets, outcome: r.outcome, returned: r.returned});
      }
    }
  }
} catch (error) { fail(error); }
if (view) {
  render();
  if (!$("#status").textContent) say(nextStep());
}
