// The replay viewer's words: seats, accounts and causes named as a reader says them, and each
// step's operation as a sentence (cards drawn as cards). The page holds no game rule: it reads
// what the events record. Everything here is text or html`` fragments: what an event says is
// shown as text, whatever it holds.
import {cardView, chips, html, parseAccount} from "/static/pages/common.js";

export const short = (id) => String(id ?? "").slice(0, 8);
export const words = (type) => String(type).replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
const cap = (text) => text.charAt(0).toUpperCase() + text.slice(1);
const list = (value) => (Array.isArray(value) ? value : []);

/** The namer of one deal's record: its seats, accounts, causes and operations in words. */
export function namer(record) {
  function seat(number) {
    if (number === null || number === undefined) return "no one";
    const s = record.seats.find((x) => x.seat === Number(number));
    return s ? `seat ${s.seat} (${s.player_id})` : `seat ${number}`;
  }

  function account(name) {
    const {kind, owner} = parseAccount(name);
    if (kind === "house" && owner === null) return "the house";
    if (kind === "operator" && owner === null) return "the operator";
    if (kind === "wallet") {
      const s = record.seats.find((x) => x.wallet_id === owner);
      return s ? `${s.player_id}'s wallet (seat ${s.seat})` : `wallet ${short(owner)}…`;
    }
    if (kind === "stake") return record.casino ? "the deal's stake" : "the table's stake";
    if (kind === "pot") return "the pot or bank";
    return String(name);
  }

  function cause(c) {
    if (!c) return "";
    const parts = [c.event ? words(c.event) : "unnamed"];
    if (c.deal && c.deal !== record.deal_id) parts.push(`deal ${short(c.deal)}…`);
    if (c.dispute) parts.push(`dispute ${short(c.dispute)}…`);
    return parts.join(", ");
  }

  const rule = (p) => (p.rule ? html` <span class="badge">rule ${p.rule}</span>` : "");
  const positionNote = (p) => (p.position !== undefined && p.position !== null
    ? html` <small class="muted">(pack position ${p.position})</small>` : "");

  /** The step's operation in words, cards drawn as cards. */
  function operation(event) {
    const p = event.payload || {};
    const who = seat(p.seat);
    const card = (c) => cardView(c);
    switch (event.type) {
      case "Committed":
        return record.casino || p.purpose !== "first_dealer"
          ? html`The deal is committed (nonce ${p.nonce}, client seed <code>${p.client_seed}</code>, commitment <code>${short(p.commitment)}…</code>): the pack is fixed before any card leaves it.${list(p.order).length ? ` Turn order: ${list(p.order).map(seat).join(", ")}.` : ""}`
          : html`A shuffle is committed to draw the first dealer (nonce ${p.nonce}, commitment <code>${short(p.commitment)}…</code>).`;
      case "Wagered": return `The player bets ${chips(p.transfer?.amount)}.`;
      case "Stood": return "The player stands on the opening bet.";
      case "Raised": return `The player raises by ${chips(p.transfer?.amount)}.`;
      case "Settled":
        return `The deal settles: the player ${p.outcome === "push" ? "pushes" : p.outcome === "win" ? "wins" : "loses"}${p.trips ? " with three of a kind" : ""}${p.odds ? ` (pays ${p.odds} to 1)` : ""}; ${chips(p.returned)} returned.`;
      case "CardDealt":
        if (record.casino) return html`A card is dealt face up: ${card(p.card)}${positionNote(p)}.`;
        return p.face_up ? html`A card is dealt face up to ${who}: ${card(p.card)}${positionNote(p)}.`
          : html`A card is dealt face down to ${who}${positionNote(p)}.`;
      case "CardBurned": return html`A card is burned: ${card(p.card)}${positionNote(p)}, shown, then put at the bottom of the pack.`;
      case "TargetTurned": return html`The target card is turned${p.seat ? ` for ${who}` : ""}: ${card(p.card)}${positionNote(p)}.`;
      case "CardDiscarded": return html`A centre card is set aside: ${card(p.card)}${positionNote(p)}.`;
      case "CardsReturned": return `The hand of ${who} goes to the bottom of the pack (positions ${list(p.positions).join(", ")}).`;
      case "HandShown": return html`${cap(who)} shows ${list(p.cards).map((c) => card(c?.card))}.`;
      case "SeedRevealed": return html`The deal is over and its server seed is revealed: <code>${short(p.server_seed)}…</code>.`;
      case "DealVoided": return html`The deal is void and is dealt again: ${p.reason}${rule(p)}.`;
      case "DealEnded": return "The deal ends.";
      case "DealerChosen": return html`${cap(who)} is the first dealer${rule(p)}.`;
      case "BankFunded": return `${cap(who)} stakes the pot or bank with ${chips(p.transfer?.amount)}.`;
      case "Anted": return html`${cap(who)} antes ${chips(p.transfer?.amount)}${rule(p)}.`;
      case "BankEmptied": return html`The pot or bank has run out (${chips(p.left)} left)${rule(p)}.`;
      case "BankCollected": return html`${cap(who)} takes back what is left of the bank: ${chips(p.transfer?.amount)}${rule(p)}.`;
      case "StitchDeclared": return html`Stitch: the bank (${chips(p.bank)}) reached three times its start (${chips(p.banker_start)}); one more round${rule(p)}.`;
      case "DealerChoiceNeeded": return html`${cap(who)} must choose: pass the deal or deal a fourth time${rule(p)}.`;
      case "DealerChose": return html`${cap(who)} chooses to ${p.choice === "pass" ? "pass the deal" : "deal a fourth time"}${rule(p)}.`;
      case "DealPassed": return html`The deal passes from ${seat(p.from_seat)} to ${seat(p.to_seat)}${rule(p)}.`;
      case "BetPlaced":
        if (p.amount === null || p.amount === undefined) return `${cap(who)} seals a bet (the amount is shown when everyone has bet).`;
        return `${cap(who)} ${p.sealed ? "seals a bet of" : "bets"} ${chips(p.amount)}.`;
      case "BetsUnsealed": return html`Everyone has bet: the sealed bets are shown (${Object.entries(p.bets || {}).map(([s, a]) => `${seat(s)}: ${chips(a)}`).join(", ")})${rule(p)}.`;
      case "CentreBought": return `${cap(who)} buys a centre card for ${chips(p.price)}.`;
      case "Passed": return html`${cap(who)} passes${rule(p)}.`;
      case "TurnSkipped": return html`The turn of ${who} goes by: ${p.reason}${rule(p)}.`;
      case "PaidOut": case "PartiallyPaid":
        return html`${cap(who)} ${p.outcome === "win" ? "wins" : "loses"} a bet of ${chips(p.stake)} against ${card(p.target)}${p.winning_card ? html` with ${card(p.winning_card)}` : ""}: ${chips(p.returned)} returned${event.type === "PartiallyPaid" ? ", what was left of the pool" : ""}.`;
      case "PotSplit": return html`The pot is split: ${chips(p.share)} to each seat, ${chips(p.remainder)} stays${rule(p)}.`;
      case "TableClosed": return html`The table closes; the pot goes back to its owners${rule(p)}.`;
      case "Seated": return `${p.player_id ?? ""} sits down in seat ${p.seat ?? ""}.`;
      case "Unseated": return `${cap(who)} leaves.`;
      case "SatOut": return html`${cap(who)} sits out: ${p.reason}${rule(p)}.`;
      case "SatIn": return `${cap(who)} plays again.`;
      case "ClientSeedChanged": return html`The client seed becomes <code>${p.client_seed}</code>.`;
      case "SaidReady": return `${cap(seat(p.seat))} is ready for the next deal.`;
      default: return `${words(event.type)}.`;
    }
  }

  return {seat, account, cause, operation};
}
