// Reports (staff): a period's groups as a table, charts of handle, the house's hold and the
// bankers' results by day, of the actual return converging on the theoretical one, and of a
// banker's bank; the CSV fetched with the key. The house holds only where it banks the bets
// (Casino Red Dog); where a dealer or banker stakes the pot, their result is a player's.
import {$, chips, download, fail, get, html, render, say, signedIn} from "/static/pages/common.js";
import {barChart, chipsLabel, lineChart, percentLabel} from "/static/pages/charts.js";

const pct = (ratio, digits) => (ratio === null || ratio === undefined ? "–"
  : `${(100 * ratio).toFixed(digits)}%`);
const holdPct = (value) => (value === null || value === undefined ? "–" : `${value.toFixed(1)}%`);
const BANKED_BY = {house: "the house", player: "a player", pool: "the players' pool"};
const bankedBy = (group) => group.banked_by.map((b) => BANKED_BY[b] || b).join(", ") || "–";
let series = null;

function utcDay(offset = 0) {
  const day = new Date(Date.now() + offset * 86400000);
  return day.toISOString().slice(0, 10);
}

function query(extra = "") {
  const group = $("#group-by").value;
  return `since=${$("#since").value}&until=${$("#until").value}${group ? `&group_by=${group}` : ""}${extra}`;
}

function row(group, label) {
  const cell = (field, text) => html`<td class="num" data-field="${field}">${text}</td>`;
  return html`<tr data-key="${group.key}"><th scope="row">${label}</th>
    <td data-field="banked_by">${bankedBy(group)}</td>
    ${cell("deals", chips(group.deals))}${cell("handle", chips(group.handle))}
    ${cell("returned", chips(group.returned))}${cell("net", chips(group.net))}
    ${cell("hold", chips(group.hold))}${cell("hold_pct", holdPct(group.hold_pct))}
    ${cell("pots_net", chips(group.pots_net))}${cell("banker_net", chips(group.banker_net))}
    ${cell("rtp_actual", pct(group.rtp_actual, 2))}${cell("rtp_theoretical", pct(group.rtp_theoretical, 2))}
    ${cell("disputes_opened", chips(group.disputes_opened))}${cell("chips_adjusted", chips(group.chips_adjusted))}</tr>`;
}

function renderReport(report) {
  const by = report.group_by;
  $("#group-head").textContent = by ? by[0].toUpperCase() + by.slice(1) : "Group";
  render($("#groups tbody"), report.groups.map((g) => row(g, g.key)));
  render($("#groups tfoot"), row(report.totals, "All"));
  const d = report.disputes, t = report.totals;
  const fact = (id, name, text) => html`<div><dt>${name}</dt><dd id="${id}">${text}</dd></div>`;
  const hold = t.house_handle ? `${chips(t.hold)} chips (${holdPct(t.hold_pct)} of ${chips(t.house_handle)} bet against the house)`
    : "none: nobody bet against the house (the players bank or share every pot)";
  render($("#totals"), fact("total-deals", "Deals", chips(t.deals)),
    fact("total-handle", "Handle", `${chips(t.handle)} chips`),
    fact("house-hold", "House hold", hold),
    fact("bankers-net", "Bankers' net", `${chips(t.banker_net)} chips (collected ${chips(t.banker_out)} of ${chips(t.banker_in)} staked)`),
    fact("pots-net", "Into players' pots and banks", `${chips(t.pots_net)} chips`),
    fact("disputes-opened", "Disputes opened", chips(d.disputes_opened)),
    fact("disputes-upheld", "Upheld", chips(d.disputes_upheld)),
    fact("chips-adjusted", "Chips adjusted", chips(d.chips_adjusted)));
  $("#projection").textContent = `Read models ${report.projection.behind} events behind the log.`;
}

function renderByDay() {
  const days = series.days;
  const sum = (field) => chips(days.reduce((s, d) => s + d[field], 0));
  render($("#by-day"), barChart({
    id: "chart-days", title: "Handle, the house's hold and the bankers' net by day (chips)",
    summary: `${days.length} days: handle ${sum("handle")} chips, house hold ${sum("hold")} chips, bankers' net ${sum("banker_net")} chips`,
    categories: days.map((d) => ({key: d.day, short: d.day.slice(5)})),
    bars: [{name: "Handle (chips bet)", cls: "handle", values: days.map((d) => d.handle)},
           {name: "House hold (the house's result, Casino Red Dog)", cls: "hold", values: days.map((d) => d.hold)},
           {name: "Bankers' net (collected less staked: players' results)", cls: "bank", values: days.map((d) => d.banker_net)}],
    xLabel: "Day (UTC, month-day)", yLabel: chipsLabel("Chips"),
  }));
}

function renderConvergence() {
  const line = series.convergence.find((c) => c.variant === $("#rtp-variant").value);
  if (!line) { render($("#convergence"), html`<p class="muted">No finished deals with bets.</p>`); return; }
  const actual = line.points.filter((p) => p.rtp !== null).map((p) => [p.deals, 100 * p.rtp]);
  const lines = [{name: "Actual return, cumulative", cls: "actual", points: actual}];
  if (line.theoretical !== null) {
    lines.push({name: `Theoretical return (${(100 * line.theoretical).toFixed(2)}%)`, cls: "theoretical",
      points: [[0, 100 * line.theoretical], [line.deals, 100 * line.theoretical]], dots: false});
  }
  render($("#convergence"), lineChart({
    id: "chart-rtp", title: `Return to player of ${line.variant} as deals accumulate (%)`,
    summary: `${line.deals} deals, returned ${chips(line.returned)} of ${chips(line.handle)} chips bet`,
    lines, xLabel: "Deals finished", yLabel: percentLabel("Return to player (%)"), yFloor: 0,
  }), line.theoretical === null ? html`<p class="muted">The rules fix no theoretical return for this variant: play decides it.</p>` : "");
}

function renderBank() {
  const line = series.banks.find((b) => b.table === $("#bank-table").value);
  if (!line) { render($("#bank"), html`<p class="muted">No table with a bank played in this period.</p>`); return; }
  const bankers = [...new Set(line.points.map((p) => p.banker).filter(Boolean))];
  render($("#bank"), lineChart({
    id: "chart-bank", title: `Banker's bank after each deal at table ${line.table.slice(0, 8)} (${line.variant}, chips)`,
    summary: `${line.points.length} deals, bankers ${bankers.join(", ")}: the bank is the banker's chips, not the house's`,
    lines: [{name: "Banker's bank after the deal (a player's chips)", cls: "bank", points: line.points.map((p) => [p.deal, p.bank])}],
    xLabel: "Deal number at the table", yLabel: chipsLabel("Bank (chips)"), yFloor: 0,
  }), html`<p class="muted">Banker${bankers.length === 1 ? "" : "s"}: ${bankers.join(", ") || "–"}. The bank is the banker's own chips: what it wins or loses is the banker's result, never the house's hold.</p>`);
}

function options(select, items, value, label) {
  const keep = select.value;
  render(select, items.map((i) => html`<option value="${value(i)}">${label(i)}</option>`));
  if (items.some((i) => value(i) === keep)) select.value = keep;
  select.disabled = !items.length;
}

async function show() {
  say("Loading the report…");
  const [report, found] = await Promise.all([get(`/reports?${query()}`),
    get(`/reports/series?since=${$("#since").value}&until=${$("#until").value}`)]);
  series = found;
  $("#empty").hidden = !report.empty;
  $("#result").hidden = report.empty;
  if (report.empty) { say(`Nothing to report from ${report.since} until ${report.until}.`); return; }
  renderReport(report);
  options($("#rtp-variant"), series.convergence, (c) => c.variant, (c) => `${c.variant} (${c.deals} deals)`);
  options($("#bank-table"), series.banks, (b) => b.table,
    (b) => `${b.table.slice(0, 8)} · ${b.variant} (${b.points.length} points)`);
  renderByDay();
  renderConvergence();
  renderBank();
  say(`Report from ${report.since} until ${report.until}: ${report.groups.length} groups.`);
}

async function csv() {
  if (!$("#period").reportValidity()) return;
  try {
    const name = `report-${$("#since").value}-${$("#until").value}.csv`;
    await download(`/reports?${query("&format=csv")}`, name, "text/csv");
    say(`Downloaded ${name}.`);
  } catch (error) { fail(error); }
}

$("#since").value = utcDay(-6);
$("#until").value = utcDay(1);
$("#period").addEventListener("submit", (event) => { event.preventDefault(); show().catch(fail); });
$("#csv").addEventListener("click", csv);
$("#rtp-variant").addEventListener("change", renderConvergence);
$("#bank-table").addEventListener("change", renderBank);
signedIn().then(() => show()).catch(fail);
