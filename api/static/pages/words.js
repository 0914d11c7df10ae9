// The staff pages in a card room's words: a time as a plain local time (to the second, in the
// viewer's own time zone, which it names), a person by the label and role of their key rather
// than its id, a table by its name.
import {html} from "/static/pages/common.js";

const LOCAL = new Intl.DateTimeFormat("en-GB", {
  day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit",
  second: "2-digit", hourCycle: "h23", timeZoneName: "short"});

/** An instant the API answers (`2026-03-01T12:00:00.123456+00:00`) as a Date, or null. */
export function instantDate(instant) {
  if (!instant) return null;
  // Past milliseconds a fraction says nothing a person reads; Date reads three digits.
  const text = String(instant).replace(/(\.\d{3})\d+/, "$1").replace(" ", "T");
  const date = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text}Z`);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** A time as people read it: `4 Dec 2026, 13:05:09 CET` (no fraction of a second). */
export function localTime(instant) {
  const date = instantDate(instant);
  if (!date) return instant ? String(instant) : "–";
  return LOCAL.format(date).replace(" at ", ", ");
}

/** A time as a <time> element: the local time, the exact instant in UTC in its title and
 * `datetime`. */
export function timeView(instant) {
  const date = instantDate(instant);
  if (!date) return localTime(instant);
  const utc = date.toISOString().slice(0, 19);
  return html`<time datetime="${`${utc}Z`}" title="${`${utc.replace("T", " ")} UTC`}">${localTime(instant)}</time>`;
}

const ROLES = {operator: "operator", auditor: "auditor", player: "player", cli: "the server"};

/** Who did something, from the `by_label` and `by_role` an answer carries beside a key id:
 * `Dana (auditor)`, `reddog verify (the server)`; the key's id only where nothing else is known. */
export function personText(label, role, id) {
  const who = label || (role ? "" : id ? `key ${String(id).slice(0, 8)}` : "–");
  const as = ROLES[role] || role;
  if (!who) return as;
  return as ? `${who} (${as})` : who;
}

/** A table as people call it: its name where the answer has one, else its title, else the
 * first characters of its id. */
export function tableName(table) {
  if (!table) return "–";
  return table.name || table.title || `table ${String(table.id || table.table_id || "").slice(0, 8)}`;
}

/** The variants by the names people know them by. */
export const VARIANTS = [
  ["casino", "Casino Red Dog"], ["high_card_pool", "High Card Pool"],
  ["banked_red_dog", "Banked Red Dog"], ["shoot", "Shoot"], ["slippery_sam", "Slippery Sam"],
  ["fort_wayne", "Fort Wayne"], ["polish", "Polish Red Dog (Stitch)"], ["six_spot", "Six-Spot"],
  ["six_spot_banking", "Six-Spot banking"],
];
const VARIANT_NAMES = new Map(VARIANTS);

/** A variant's name as people know it (`six_spot` → `Six-Spot`). */
export function variantName(variant) {
  return VARIANT_NAMES.get(variant) || String(variant ?? "–");
}
