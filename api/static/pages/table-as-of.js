// A table as it stood at a version or an instant (GET /tables/{id}/as-of): its facts and seats,
// with links to its deals and each seat's player.
import {$, chips, fillForm, formQuery, get, html, refused, render, signedIn, when}
  from "/static/pages/common.js";

const FIELDS = ["id", "version", "at"];
const FACTS = ["variant", "title", "phase", "pot", "stake", "dealer", "next_nonce", "deals", "player_id"];

async function show() {
  const form = $("#as-of");
  const query = formQuery(form, FIELDS);
  history.replaceState(null, "", `?${query}`);
  const id = query.get("id");
  query.delete("id");
  try {
    const past = await get(`/tables/${encodeURIComponent(id)}/as-of?${query}`);
    const t = past.state;
    render($("#as-of-summary"), html`Version <strong id="as-of-version">${past.as_of_version}</strong>
      at ${when(past.as_of)} · <a href="/pages/find?table=${encodeURIComponent(id)}">Deals at this table</a>`);
    render($("#table"), FACTS.filter((k) => t[k] !== undefined && t[k] !== null)
      .map((k) => html`<div><dt>${k.replaceAll("_", " ")}</dt><dd data-fact="${k}">${
        typeof t[k] === "number" ? chips(t[k]) : t[k]}</dd></div>`));
    const seats = t.seats || [];
    render($("#seats"), seats.length ? seats.map((s) => html`<li class="result" data-seat="${s.seat}">
      Seat ${s.seat}: <a href="/pages/find?player=${encodeURIComponent(s.player_id)}">${s.player_id}</a>
      ${s.sitting_out ? html`<span class="badge">sitting out</span>` : ""}</li>`)
      : html`<li class="muted">No seats.</li>`);
    $("#status").textContent = "";
  } catch (error) {
    render($("#table"));
    render($("#seats"));
    refused($("#as-of-summary"), error);
  }
}

await signedIn();
fillForm($("#as-of"), FIELDS);
$("#as-of").addEventListener("submit", (event) => {
  event.preventDefault();
  if ($("#as-of").reportValidity()) show();
});
if ($("#as-of").elements.id.value) await show();
