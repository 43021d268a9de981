/* Mount every calculator on the page (div.gpukb-calc, rendered by gpukb.calculators.calculator_html): load the
 * module named by data-calc from this folder and hand it the page's data island. Nothing is fetched from another
 * host; a page without a calculator loads nothing more.
 */
const here = new URL(".", import.meta.url);

async function mountAll() {
  for (const root of document.querySelectorAll("div.gpukb-calc[data-calc]")) {
    if (root.dataset.ready) continue;
    root.dataset.ready = "loading";
    const data = JSON.parse(root.querySelector("script.gpukb-calc-data").textContent);
    const module = await import(new URL(`${root.dataset.calc}.js`, here));
    module.mount(root, data);
    root.dataset.ready = "1";
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
else mountAll();
