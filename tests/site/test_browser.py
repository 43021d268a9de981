"""Drive headless Chromium over the built site, served on 127.0.0.1, as a reader would use it.

Uses the system's Chromium (Debian's `chromium` package, or `GPUKB_CHROMIUM`), never a downloaded browser. Every
request the pages make is recorded: anything not addressed to 127.0.0.1 is blocked and fails the test.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from urllib.parse import urlparse

import pytest

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
    assert box is not None and box["height"] > 20  # a fraction laid out on two levels, not one line of text
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


def test_every_page_loads_without_foreign_requests(page, built_site) -> None:
    site, _ = built_site
    pages = sorted(p.parent.relative_to(site).as_posix() for p in site.rglob("index.html"))
    assert len(pages) >= 6
    for path in pages:
        response = page.goto("/" if path == "." else f"/{path}/")
        assert response is not None and response.ok, path
        page.wait_for_load_state("networkidle")
