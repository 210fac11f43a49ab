"""The browser fixture every browser test module shares: Debian's Chromium driven by Playwright, one per
test module (``tests.webtools.launch_browser``), closed with its driver after the module.

    pytest_plugins = ("tests.browsers",)     # in the test module; then take ``browser``
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.webtools import launch_browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as driver:
        chromium = launch_browser(driver)
        try:
            yield chromium
        finally:
            chromium.close()
