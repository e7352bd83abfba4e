"""The register page in a real browser: Debian's headless Chromium, driven by Selenium through
Debian's chromedriver (the same package version, so they always match; nothing is downloaded).
The page's form posts the manifest to (fake) GitHub, the person names the App and confirms, and
GitHub's redirect lands on questbot's callback, which saves the App.

``scripts/setup`` installs ``chromium`` and ``chromium-driver``. Without them the test is
skipped on a developer's machine, with the reason shown; in CI (``CI`` set) it fails instead, so
it can never be skipped there unnoticed.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.register.page import Registrar
from bot.settings.process import load_config
from questbot_testing.fakegithub import FakeGitHub
from tests.register.flow import WEBHOOK_URL, options_for

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is not installed (pip install -e '.[test]')"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} is missing (scripts/setup installs chromium and chromium-driver)"
    return None


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
                     "--disable-dev-shm-usage", "--no-first-run"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub() as server:
        yield server
        server.assert_clean()


def _register_in_the_browser(driver: Any, page_url: str, fake_url: str) -> dict[str, str]:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as shown
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(driver, 20)
    driver.get(page_url)
    seen = {"title": driver.title,
            "webhook": driver.find_element(By.ID, "webhook-url").text,
            "permissions": driver.find_element(By.ID, "permissions").text}
    driver.find_element(By.ID, "register").click()  # the form posts the manifest to GitHub
    name = wait.until(shown.presence_of_element_located((By.ID, "app-name")))
    seen["github_page"] = driver.current_url
    name.clear()
    name.send_keys("Questbot In A Browser")
    driver.find_element(By.ID, "create").click()  # GitHub redirects back to the callback
    landed = wait.until(shown.presence_of_element_located((By.ID, "registered")))
    seen["landed"] = driver.current_url
    seen["registered"] = landed.text
    seen["install"] = driver.find_element(By.ID, "install").get_attribute("href") or ""
    return seen


async def test_the_page_posts_the_manifest_and_the_callback_lands(
    browser: Any, fake: FakeGitHub, tmp_path: Path
) -> None:
    async with Registrar(options_for(fake, tmp_path)) as registrar:
        seen = await asyncio.to_thread(_register_in_the_browser, browser, registrar.url,
                                       fake.url)
        saved = await asyncio.wait_for(registrar.done, 5)
    assert seen["title"] == "Register questbot"
    assert seen["webhook"] == WEBHOOK_URL
    assert "checks: write" in seen["permissions"]
    assert seen["github_page"].startswith(f"{fake.url}/settings/apps/new?state=")
    assert seen["landed"].startswith(registrar.url + "callback?code=")
    assert seen["registered"] == "Questbot In A Browser is registered"
    assert seen["install"] == "https://github.com/apps/questbot-in-a-browser/installations/new"
    (manifest,) = fake.manifests.registered
    assert manifest["redirect_url"] == registrar.url + "callback"
    assert manifest["hook_attributes"]["url"] == WEBHOOK_URL
    config = load_config({}, env_file=tmp_path / ".env")
    assert config.github_app_slug == "questbot-in-a-browser" == saved.registration.slug
    assert config.github_private_key.get_secret_value() == fake.keys.private_pem
