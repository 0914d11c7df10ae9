// Sign in with a key, or with a one-time link `/sign-in#token=<link key>`: the fragment never
// reaches a server log; the page posts it to `POST /sign-in` and keeps the session key it gets.
import {$, api, dropKey, fail, get, holdKey, param, say} from "/static/pages/common.js";

function next() {
  const target = param("next") || "/";
  return target.startsWith("/") && !target.startsWith("//") ? target : "/";
}

async function enter(key) {
  holdKey(key);
  try {
    const me = await get("/me", {noRedirect: true});
    say(`Signed in as ${me.player_id || me.role} (${me.role})`);
    location.replace(next());
  } catch (error) {
    dropKey();
    fail(error);
  }
}

async function fromLink() {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  history.replaceState(null, "", location.pathname + location.search);  // the link is spent
  say("Signing in with your link…");
  try {
    const session = await api("POST", "/sign-in", {token}, {noRedirect: true});
    await enter(session.key);
  } catch (error) {
    fail(error);
  }
}

$("#key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  enter($("#key").value.trim());
});
// Enabled only now: before the script holds the form, a submit would be the browser's own GET.
// The key's field has no name either, so even that could never put the key in an address.
$("#sign-in").disabled = false;
if (param("reason")) say(param("reason"), true);
if (location.hash.includes("token=")) fromLink();
