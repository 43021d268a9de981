"""Drive headless Chromium over the built site, served on 127.0.0.1, as a reader would use it.

Uses the system's Chromium (Debian's `chromium` package, or `GPUKB_CHROMIUM`), never a downloaded browser. Every
request the pages make is recorded: anything not addressed to 127.0.0.1 is blocked and fails the test.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
from urllib.parse import urlparse

import pytest

from gpukb import chapters
from gpukb.site.includes import sections
from tests.helpers import ROOT, require

pytestmark = pytest.mark.browser


def _chromium() -> str | None:
    candidate = os.environ.get("GPUKB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    return candidate if candidate and os.path.exists(candidate) else None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # keep the test output quiet
        pass


@pytest.fixture(scope="module")
def base_url(built_site):
    site, _ = built_site
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    executable = _chromium()
    require(executable is not None, "Chromium is not installed (apt-get install chromium, or set GPUKB_CHROMIUM)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=executable,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-quic",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser, base_url):
    """A fresh page that records every request and blocks any to another host."""
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"], base_url=base_url)
    foreign: list[str] = []

    def route(r):
        if urlparse(r.request.url).hostname == "127.0.0.1":
            r.continue_()
        else:
            foreign.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert foreign == [], f"requests to other hosts: {foreign}"
    assert errors == [], f"JavaScript errors: {errors}"


def test_home_page_loads(page) -> None:
    page.goto("/")
    assert page.title() == "GPU KB"
    assert page.locator("article h1").first.inner_text().rstrip("¶") == "GPU KB"
    assert page.locator("nav.md-tabs").is_visible()


# --- the first screen answers --------------------------------------------------------------------------------

#: The text on the first screen (1400 × 900): every text node of the article that is drawn above the fold.
_FIRST_SCREEN = """() => {
  const walker = document.createTreeWalker(document.querySelector('article.md-content__inner'), NodeFilter.SHOW_TEXT);
  const out = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(node);
    const box = range.getBoundingClientRect();
    if (box.height > 0 && box.top < window.innerHeight) out.push(node.textContent);
  }
  return out.join(' ');
}"""
#: What a first screen must not lead with: provenance (a run's line, a record id, a driver) and project language.
_NOT_ON_THE_FIRST_SCREEN = re.compile(
    r"Measured on an? NVIDIA|\bdriver (?:version )?\d|schema_version|\b[a-z]+/(?:[a-z0-9-]*-)?h[12]00[a-z0-9-]*\b"
    r"|\bgoals? (?:is|was|were)? ?met\b"
)
FIRST_PAGES = ["/"] + [
    f"/{c.name}/" + c.start.removesuffix("index.md").removesuffix(".md") + ("/" if c.start != "index.md" else "")
    for c in chapters.chapters()
]


@pytest.mark.parametrize("path", FIRST_PAGES)
def test_the_first_screen_says_what_the_page_answers(page, path: str) -> None:
    """The home page and each chapter's first page open with prose that says what they answer, and no run id,
    driver version or "goal met" above it (issue 25's reader test)."""
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(path)
    text = page.evaluate(_FIRST_SCREEN)
    assert len(text.split()) >= 40, (path, text[:200])  # prose, not only a heading or a table
    assert not _NOT_ON_THE_FIRST_SCREEN.search(text), (path, _NOT_ON_THE_FIRST_SCREEN.search(text).group(0))


def test_search_finds_the_right_page(page) -> None:
    page.goto("/")
    search = page.locator("input.md-search__input")
    search.click()
    search.press_sequentially("anatomy")  # Material searches on key events, which fill() does not send
    results = page.locator(".md-search-result__item a")
    results.first.wait_for(timeout=15_000)
    hrefs = [results.nth(i).get_attribute("href") or "" for i in range(results.count())]
    assert "/formats/anatomy/" in hrefs[0], hrefs  # the page with the term in its title ranks first


def test_math_is_rendered_not_raw_tex(page) -> None:
    page.goto("/formats/anatomy/")
    formulas = page.locator("article math")
    assert formulas.count() >= 8
    box = page.locator("article math[display='block']").first.bounding_box()
    assert box is not None
    assert box["height"] > 20  # a fraction laid out on two levels, not one line of text
    text = page.locator("article").inner_text()
    for raw in ("\\frac", "\\(", "\\[", "^{e"):
        assert raw not in text


def test_copy_button_copies_exactly_the_snippet(page) -> None:
    page.goto("/formats/anatomy/")
    block = page.locator("article .highlight", has_text='explain(x, "fp32")').first
    block.hover()
    block.locator("button[data-md-type='copy']").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    expected = sections(ROOT / "snippets" / "formats" / "float32_fields.py")["example"]
    assert copied.strip("\n") == expected.strip("\n")


# --- pages that fit (issue 17) ---------------------------------------------------------------------------------

#: The rule for tables. Material wraps each article table in a scroll box (``.md-typeset__scrollwrap``, overflow-x:
#: auto) and makes the table itself a scroll box (inline-block, max-width 100%, overflow auto). Their scrollbars
#: are thin and, with overlay scrollbars, invisible until the reader scrolls, so a table wider than the article is
#: cut off at its edge with nothing saying there is more: "clipped". On a desktop-width window (1400 px, both
#: sidebars shown) no table may need scrolling: every box's scrollWidth is at most its clientWidth (one pixel of
#: rounding allowed). On a phone (400 px) sideways scrolling of a table is the expected gesture, so there the rule
#: is only that the page itself never scrolls sideways. Code blocks are not tables: their long lines scroll inside
#: a box whose scrollbar Material styles visibly, and build-time output wraps on wide screens (extra.css).
_OVERFLOWING_TABLES = """() => [...document.querySelectorAll('article table')].flatMap((table, i) => {
  const boxes = [table, table.closest('.md-typeset__table'), table.closest('.md-typeset__scrollwrap')];
  return boxes.filter(b => b && b.scrollWidth > b.clientWidth + 1).map(b =>
    `table ${i} (${table.rows[0] ? table.rows[0].cells.length : 0} columns, header "${
      (table.rows[0] ? table.rows[0].innerText : '').replace(/\\s+/g, ' ').slice(0, 60)}"): ${
      b.className || b.tagName} is ${b.scrollWidth} px wide in ${b.clientWidth} px`);
})"""


def _site_pages(site) -> list[str]:
    """Every prose page, and the API reference's index and first module pages (the module pages share one
    template, so a sample shows whether it fits; all of them would double the browser tests' time)."""
    pages = sorted(p.parent.relative_to(site).as_posix() for p in site.rglob("index.html"))
    api = [p for p in pages if p.startswith("reference/")]
    return [p for p in pages if p not in api[4:]]


#: The pages are checked in this many interleaved parts, so that test workers share them (about a minute in all).
_PARTS = 4


@pytest.mark.parametrize("part", range(_PARTS))
def test_every_page_loads_and_fits_the_screen(page, built_site, part: int) -> None:
    """Every prose page (and a sample of the API reference) loads with no request to another host (the ``page``
    fixture fails on any) and no JavaScript error; at 1400 px no article table is cut off, in folded blocks opened
    too; at 400 px the page does not scroll sideways. test_build checks every page's HTML for assets from other hosts.

    One load per page for all three (the layout follows the viewport without a reload), to keep the test short.
    Part ``k`` takes every ``_PARTS``-th page from the ``k``-th: together the parts cover every page once.

    Requests made after the load event come from scripts every page loads (the theme's, the catalog's and the
    calculators' in ``extra_javascript``): each part waits for the network to go quiet (half a second without a
    request) on its first page only, and checks the others once loaded; the ``page`` fixture fails on a request to
    another host whenever it is made. The pages whose calculators or catalog tables load more are driven for
    seconds each by their own browser tests (``test_calculators.py``, ``test_catalog_browser.py``).
    """
    site, _ = built_site
    pages = _site_pages(site)[part::_PARTS]
    assert len(pages) >= 6
    clipped, wide = [], []
    for i, path in enumerate(pages):
        page.set_viewport_size({"width": 1400, "height": 900})
        response = page.goto("/" if path == "." else f"/{path}/")
        assert response is not None, path
        assert response.ok, path
        if i == 0:
            page.wait_for_load_state("networkidle")  # requests a script makes after the load event are made by now
        page.evaluate("document.querySelectorAll('article details').forEach(d => { d.open = true; })")  # folded too
        clipped += [f"/{path}/: {problem}" for problem in page.evaluate(_OVERFLOWING_TABLES)]
        page.set_viewport_size({"width": 400, "height": 800})
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 401:
            wide.append(f"/{path}/: {width} px")
    assert clipped == [], "tables cut off at 1400 px:\n" + "\n".join(clipped)
    assert wide == [], "pages wider than a 400 px screen:\n" + "\n".join(wide)


def test_the_table_rule_sees_a_cut_off_table(page) -> None:
    """The 1400 px check finds a table that is too wide (the rule tested on a table made too wide on purpose)."""
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto("/formats/")
    assert page.evaluate(_OVERFLOWING_TABLES) == []
    page.evaluate("document.querySelector('article table td').textContent = 'x'.repeat(400)")
    assert page.evaluate(_OVERFLOWING_TABLES) != []


# --- search ranks prose above the API reference -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("roofline", "/performance/"),
        ("E4M3", "/formats/"),
        ("hipBLASLt", "/gemm/"),
        ("loss scaling", "/formats/mixed-precision/"),
        ("NVLink", "/glossary/"),  # what it is; the glossary entry links the collectives page
        ("occupancy", "/cuda/"),
    ],
)
def test_search_puts_a_prose_page_first(page, query: str, expected: str) -> None:
    """Each query is answered in prose; the API reference (one page per module, boosted down) comes after it."""
    page.goto("/")
    search = page.locator("input.md-search__input")
    search.click()
    search.press_sequentially(query)
    results = page.locator(".md-search-result__item > a")
    results.first.wait_for(timeout=15_000)
    top = results.first.get_attribute("href") or ""
    assert "/reference/" not in top, (query, top)
    assert expected in top, (query, top)


# --- dark mode ---------------------------------------------------------------------------------------------------


def _figure_pixels(page, path: str, scheme: str) -> tuple[float, float]:
    """The fraction of near-white and of near-black pixels in the first figure of ``path`` in a colour scheme."""
    import io

    from PIL import Image

    page.emulate_media(color_scheme=scheme)
    page.goto(path)
    page.evaluate("localStorage.clear()")  # Material keeps the scheme of the first visit; follow the media query
    page.reload()
    expected = "slate" if scheme == "dark" else "default"
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == expected
    figure = page.locator("article .gpukb-figure svg").first
    figure.scroll_into_view_if_needed()
    image = Image.open(io.BytesIO(figure.screenshot())).convert("L")
    counts = image.histogram()  # pixels per grey level, 0 (black) to 255 (white)
    return sum(counts[231:]) / sum(counts), sum(counts[:40]) / sum(counts)


@pytest.mark.parametrize("path", ["/formats/anatomy/", "/performance/h100/"])
def test_figures_follow_the_colour_scheme(page, path: str) -> None:
    """In dark mode a figure is no white rectangle: its background is the page's, and its text and axes light."""
    white, black = _figure_pixels(page, path, "dark")
    assert white < 0.2, f"{path}: {white:.0%} of the figure is white in dark mode"
    assert black > 0.5, f"{path}: only {black:.0%} of the figure is dark in dark mode"
    white, _ = _figure_pixels(page, path, "light")
    assert white > 0.5, f"{path}: the figure lost its light background in light mode"
