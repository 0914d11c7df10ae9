// The API docs page (Swagger UI) held to WCAG 2.2 AA, as the other pages are. Swagger UI names
// each operation's summary button by its method and path only ("post /wallets"), while it shows
// the summary too: a name that leaves out what is seen (WCAG 2.5.3, label in name). The name is
// left to the button's own text, for each button Swagger UI draws, whenever it draws one.
const MISNAMED = ".opblock-summary-control[aria-label]";

function rename(root) {
  for (const button of root.querySelectorAll(MISNAMED)) button.removeAttribute("aria-label");
}

new MutationObserver(() => rename(document)).observe(document.documentElement,
  {childList: true, subtree: true});
rename(document);
