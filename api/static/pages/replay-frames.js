// The replay viewer's steps: every step as the viewer shows it, built from the events alone (the
// same for a file and for a deal read from the server), with the server's balances where it gave
// them: the cards on the table, the pot or bank, the stakes, the bets and each seat's net.
import {parseAccount} from "/static/pages/common.js";

export function transfersOf(payload) {
  const list = [];
  if (payload && payload.transfer && typeof payload.transfer === "object") list.push(payload.transfer);
  if (payload && Array.isArray(payload.transfers)) list.push(...payload.transfers.filter((t) => t && typeof t === "object"));
  return list;
}

/** The frames of a record's steps; `operation(event)` says each step's operation in words. */
export function buildFrames(record, operation) {
  const bySeatWallet = new Map(record.seats.map((s) => [s.wallet_id, s.seat]));
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
        const {kind, owner} = parseAccount(account);
        const ours = owner === record.table_id;
        if (kind === "pot" && ours && m.pot !== null) m.pot += sign * t.amount;
        if (kind === "stake" && ours && !record.casino) m.stake += sign * t.amount;
        const seat = kind === "wallet" ? bySeatWallet.get(owner) : undefined;
        if (seat !== undefined) m.net[seat] += sign * t.amount;
      }
    }
    switch (event.type) {
      case "CardDealt":
        if (record.casino) m.cards.push({card: p.card, position: p.position});
        else (m.hands[p.seat] ||= []).push({position: p.position, card: p.face_up ? p.card : null, returned: false});
        break;
      case "HandShown":
        for (const c of Array.isArray(p.cards) ? p.cards : []) {
          const hand = (m.hands[p.seat] ||= []);
          const held = hand.find((h) => h.position === c.position);
          if (held) held.card = c.card; else hand.push({position: c.position, card: c.card, returned: false});
        }
        break;
      case "CardsReturned":
        for (const h of m.hands[p.seat] || []) if (Array.isArray(p.positions) && p.positions.includes(h.position)) h.returned = true;
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
