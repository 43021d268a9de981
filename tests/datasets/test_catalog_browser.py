"""Sort and filter the catalog tables in headless Chromium, with every request to another host blocked.

Reuses the fixtures of tests/site/test_browser.py (the built site served on 127.0.0.1, the system Chromium, and a
page that fails the test on any foreign request or JavaScript error); skips cleanly without Chromium.
"""

from __future__ import annotations

import pytest

from gpukb.datasets.catalog import load
from tests.site.test_browser import base_url, browser, page  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

ROWS = "div.gpukb-catalog tbody tr"


def _visible_ids(page) -> list[str]:  # noqa: F811
    return page.eval_on_selector_all(ROWS, "rows => rows.filter(r => !r.hidden).map(r => r.dataset.id)")


def _open(page, domain: str) -> None:  # noqa: F811
    page.goto(f"/datasets/{domain}/")
    page.locator("div.gpukb-catalog input.gpukb-catalog-filter").wait_for()


def test_filter_by_text_and_by_status(page) -> None:  # noqa: F811
    eeg = load("eeg")
    _open(page, "eeg")
    assert _visible_ids(page) == [d.id for d in eeg.datasets]
    count = page.locator(".gpukb-catalog-count")
    assert count.inner_text() == f"{len(eeg.datasets)} of {len(eeg.datasets)} datasets"

    texts = page.eval_on_selector_all(ROWS, "rows => rows.map(r => [r.dataset.id, r.textContent.toLowerCase()])")
    page.locator(".gpukb-catalog-filter").fill("p300")
    expected = [ident for ident, text in texts if "p300" in text]
    assert len(expected) >= 3
    assert _visible_ids(page) == expected
    assert count.inner_text() == f"{len(expected)} of {len(eeg.datasets)} datasets"

    page.locator(".gpukb-catalog-filter").fill("")
    page.locator(".gpukb-catalog-status").select_option("corrected")
    assert _visible_ids(page) == [d.id for d in eeg.datasets if d.status == "corrected"]
    page.locator(".gpukb-catalog-status").select_option("unconfirmed")
    assert _visible_ids(page) == [d.id for d in eeg.datasets if d.status == "unconfirmed"]


def test_sort_numeric_columns_with_missing_values_last(page) -> None:  # noqa: F811
    eeg = load("eeg")
    _open(page, "eeg")
    header = page.locator("div.gpukb-catalog thead th", has_text="subjects")
    known = [d for d in eeg.datasets if d.eeg is not None and d.eeg.subjects is not None]
    unknown = [d.id for d in eeg.datasets if d not in known]

    header.click()
    assert header.get_attribute("aria-sort") == "ascending"
    ascending = [d.id for d in sorted(known, key=lambda d: d.eeg.subjects)]  # stable, as the script's sort is
    assert _visible_ids(page) == ascending + unknown

    header.press("Enter")
    assert header.get_attribute("aria-sort") == "descending"
    descending = [d.id for d in sorted(known, key=lambda d: -d.eeg.subjects)]
    assert _visible_ids(page) == descending + unknown


def test_sort_text_column_and_follow_a_row_to_its_card(page) -> None:  # noqa: F811
    eeg = load("eeg")
    _open(page, "eeg")
    page.locator("div.gpukb-catalog thead th", has_text="dataset").first.click()
    names = page.eval_on_selector_all(ROWS, "rows => rows.map(r => r.cells[0].textContent.trim().toLowerCase())")
    assert names == sorted(d.name.lower() for d in eeg.datasets)
    page.locator("div.gpukb-catalog tbody a[href='#bci-iv-2a']").click()
    assert page.locator("#bci-iv-2a").is_visible()


def test_the_people_table_works_too(page) -> None:  # noqa: F811
    people = load("people")
    _open(page, "people")
    assert _visible_ids(page) == [d.id for d in people.datasets]
    page.locator(".gpukb-catalog-status").select_option("verified")
    assert _visible_ids(page) == [d.id for d in people.datasets if d.status == "verified"]
