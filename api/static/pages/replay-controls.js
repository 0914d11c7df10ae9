// The replay viewer's controls: moving through the steps with the buttons (First, Back, Forward,
// Last), the slider and the keys (← and → step back and forward, Home and End go to the first and
// last step), and the fairness check's "Show that step" buttons.
import {$} from "/static/pages/common.js";
import {words} from "/static/pages/replay-words.js";

/** The stepper of the page's controls; `show(at)` draws step `at` (from 0) of the steps loaded. */
export function stepper(show) {
  let frames = [];
  let at = 0;

  function go(index) {
    at = Math.max(0, Math.min(frames.length - 1, index));
    const e = frames[at].event;
    $("#slider").value = String(at + 1);
    $("#slider").setAttribute("aria-valuetext", `Step ${at + 1} of ${frames.length}: ${words(e.type)}`);
    $("#position").textContent = `Step ${at + 1} of ${frames.length}`;
    for (const [id, off] of [["#first", at === 0], ["#back", at === 0],
      ["#forward", at === frames.length - 1], ["#last", at === frames.length - 1]]) {
      $(id).setAttribute("aria-disabled", String(off));
    }
    show(at);
  }

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

  return {
    /** Take these steps and show the first. */
    load(steps) {
      frames = steps;
      $("#slider").max = String(frames.length);
      go(0);
    },
    /** The index of the step of an event version, or -1. */
    stepOf: (version) => frames.findIndex((f) => f.event.version === version),
  };
}
