// The staff's form to open a table of any variant with its options (POST /tables).
import {$, fail, get, html, post, render, say, whileInFlight} from "/static/pages/common.js";
import {VARIANTS} from "/static/pages/words.js";

const LIMITS = ["hand_size", "ante", "min_bet", "max_bet", "bank_min", "bank_max", "bank_fixed",
  "max_seats"];

export function openTableForm(root, opened) {
  render(root, html`<form id="open-table"><fieldset><legend>Open a table</legend>
    <label>Variant <select name="variant" id="ot-variant">${VARIANTS.map(([v, t]) =>
      html`<option value="${v}">${t}</option>`)}</select></label>
    <label class="casino-only">Player id (casino) <input name="player" id="ot-player" autocomplete="off"></label>
    <label class="multi-only">Name <input name="name" id="ot-name" maxlength="40" autocomplete="off"
      placeholder="a colour and a number"></label>
    <label class="multi-only">Deals start <select name="starts" id="ot-starts">
      <option value="operator">by an operator (or the dealer, once drawn)</option>
      <option value="dealer">by the dealer</option>
      <option value="ready">when every seated player is ready</option></select></label>
    <span class="multi-only">${LIMITS.map((l) => html`<label>${l.replace("_", " ")}
      <input name="${l}" id="ot-${l}" type="number" min="0" step="1" inputmode="numeric"
        placeholder="default" size="7"></label>`)}</span>
    <label>Client seed <input name="client_seed" id="ot-seed" autocomplete="off" placeholder="random"></label>
    <label class="inline"><input type="checkbox" name="supplied" id="ot-supplied"> accepts supplied seeds</label>
    <button type="submit" class="primary">Open table</button></fieldset></form>`);
  const form = $("#open-table", root);
  const show = () => {
    const casino = form.variant.value === "casino";
    $(".casino-only", form).hidden = !casino;
    for (const part of form.querySelectorAll(".multi-only")) part.hidden = casino;
  };
  form.variant.addEventListener("change", show);
  show();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    // Taken once: the button is disabled until the answer (a double click opens one table).
    whileInFlight([$("button[type=submit]", form)], () => submit(), {reason: "Opening the table…"});
  });
  const submit = async () => {
    const body = {variant: form.variant.value, accepts_supplied_seeds: form.supplied.checked};
    if (form.client_seed.value.trim()) body.client_seed = form.client_seed.value.trim();
    try {
      if (body.variant === "casino") {
        const player = form.player.value.trim();
        const found = (await get(`/wallets?player_id=${encodeURIComponent(player)}`)).wallets
          .filter((w) => w.player_id === player);
        if (!found.length) throw new Error(`no wallet of player ${player}: create one at the cashier`);
        body.wallet_id = found[0].id;
      } else {
        const limits = {};
        for (const name of LIMITS) {
          if (form[name].value !== "") limits[name] = Number(form[name].value);
        }
        if (Object.keys(limits).length) body.limits = limits;
        const name = $("#ot-name", form).value.trim();
        if (name) body.name = name;
        body.starts = form.starts.value;
      }
      const table = await post("/tables", body);
      say(`Opened ${table.title || "Casino Red Dog"} table ${table.name || table.id}`);
      opened(table);
    } catch (error) { fail(error); }
  };
}
