// A table as it stood at a version or an instant (GET /tables/{id}/as-of): its facts and seats,
// with links to its deals and each seat's player.
import {$, chips, esc, fillForm, formQuery, get, refused, signedIn, when}
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
    $("#as-of-summary").innerHTML = `Version <strong id="as-of-version">${past.as_of_version}</strong>
      at ${when(past.as_of)} · <a href="/pages/find?table=${encodeURIComponent(id)}">Deals at this table</a>`;
    $("#table").innerHTML = FACTS.filter((k) => t[k] !== undefined && t[k] !== null)
      .map((k) => `<div><dt>${esc(k.replaceAll("_", " "))}</dt><dd data-fact="${k}">${
        typeof t[k] === "number" ? chips(t[k]) : esc(t[k])}</dd></div>`).join("");
    $("#seats").innerHTML = (t.seats || []).map((s) => `<li class="result" data-seat="${s.seat}">
      Seat ${s.seat}: <a href="/pages/find?player=${encodeURIComponent(s.player_id)}">${esc(s.player_id)}</a>
      ${s.sitting_out ? `<span class="badge">sitting out</span>` : ""}</li>`).join("")
      || `<li class="muted">No seats.</li>`;
    $("#status").textContent = "";
  } catch (error) {
    $("#table").innerHTML = "";
    $("#seats").innerHTML = "";
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
