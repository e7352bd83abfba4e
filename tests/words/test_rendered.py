"""Every body questbot writes, rendered as GitHub renders Markdown and looked at: the snapshots
(``tests/words/snapshots/``: the status comment, the check run and the pull request at every
state, the inbox, the replies) hold no raw markup a person would see (``tests.words.gfm``), and
a few of them, opened in the headless browser the suite already has (Debian's Chromium and
chromedriver, through Selenium), are the pictures in ``docs/pictures`` that the README's "What
maintainers see" shows. ``UPDATE_PICTURES=1`` takes the pictures again; without it the test
still renders each one in the browser and reads what it shows."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.register.test_register_browser import CHROMEDRIVER, CHROMIUM, _missing
from tests.words.gfm import leaks, page, to_html, visible_text

SNAPSHOTS = Path(__file__).parent / "snapshots"
PICTURES = Path(__file__).parents[2] / "docs" / "pictures"
UPDATE = os.environ.get("UPDATE_PICTURES") == "1"
PICTURE_LIMIT = 150_000
"""Bytes a picture may take in the repository."""


def shown(name: str) -> str:
    """A snapshot as the Markdown GitHub shows: a check run's fields (its JSON block) aside,
    and its title as the heading GitHub gives it."""
    text = (SNAPSHOTS / name).read_text()
    if name.startswith("check-"):
        text = text.split("```\n\n", 1)[1]
    return text


@pytest.mark.parametrize("name", sorted(p.name for p in SNAPSHOTS.glob("*.md")))
def test_every_body_renders_without_raw_markup(name: str) -> None:
    assert leaks(shown(name)) == []


def test_the_leak_check_finds_what_it_looks_for() -> None:
    for broken in ("a **bold", "an `unclosed span", "<details><summary>x</summary>\n\nbody",
                   "a \\\\(escaped twice\\\\)", "[a link](https://x.example"):
        assert leaks(broken) != [], broken
    assert leaks("**bold** `code` [a](https://x.example) \\(kept\\)\n\n"
                 "<details><summary>s</summary>\n\nx\n\n</details>\n") == []


PICTURES_OF = {
    "status-checkpoint-a.png": ("status-hypothesised.md", "commented", ()),
    "status-parked.png": ("status-parked.md", "commented", ()),
    "status-closed.png": ("status-closed.md", "commented", ("Timeline",)),
    "check-run-checkpoint-a.png": ("check-hypothesised.md", "check run · questbot", ()),
    "pull-checkpoint-c.png": ("pull-ready.md", "opened this pull request", ()),
    "inbox.png": ("inbox.md", "opened the inbox issue", ()),
}
"""Each picture: the body, what GitHub's header says, and the folds opened for it."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the browser test cannot run in CI: {missing}")
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--no-first-run", "--window-size=800,600",
                     "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.mark.parametrize("picture", sorted(PICTURES_OF))
def test_what_a_maintainer_sees_in_the_browser(browser: Any, picture: str,
                                               tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    name, what, opened = PICTURES_OF[picture]
    markdown = shown(name)
    file = tmp_path / "page.html"
    file.write_text(page(markdown, what=what))
    browser.set_window_size(800, 3000 if UPDATE else 600)  # a picture holds the whole box
    browser.get(file.as_uri())
    for summary in opened:  # a fold a maintainer would open, opened as they would
        browser.execute_script(
            "for (const s of document.querySelectorAll('summary')) "
            "if (s.textContent === arguments[0]) s.parentElement.open = true;", summary)
    box = browser.find_element(By.CSS_SELECTOR, ".comment")
    seen = box.text
    # the browser shows the body, with no markup in it
    assert "**" not in seen and "`" not in seen and "<details" not in seen
    first = visible_text(to_html(markdown)).split("\n")
    assert next(line for line in first if line.strip()).strip() in seen
    if not UPDATE:
        assert (PICTURES / picture).exists(), f"{picture} is missing: UPDATE_PICTURES=1 takes it"
        return
    png = box.screenshot_as_png
    PICTURES.mkdir(parents=True, exist_ok=True)
    (PICTURES / picture).write_bytes(png)
    assert len(png) < PICTURE_LIMIT, f"{picture} takes {len(png):,} bytes"


@pytest.mark.parametrize("picture", sorted(PICTURES_OF))
def test_each_picture_is_small(picture: str) -> None:
    file = PICTURES / picture
    assert file.exists() and file.stat().st_size < PICTURE_LIMIT
