"""(b) headless Chromium publishes its fake camera and microphone; a second page subscribes
and decodes both."""

import asyncio
import time

import pytest

from media_support import CHROMIUM_ARGS, MediaServer, open_page
from rig import run_async

playwright_api = pytest.importorskip("playwright.async_api")


@pytest.fixture
def server():
    s = MediaServer()
    yield s
    s.stop()


async def wait_for(page, predicate, timeout):
    deadline = time.time() + timeout
    stats = None
    while time.time() < deadline:
        stats = await page.evaluate("sb.inbound()")
        if predicate(stats):
            return stats
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out; last stats {stats}")


def test_chromium_subscriber_decodes_chromium_publisher(server):
    async def scenario():
        async with playwright_api.async_playwright() as p:
            browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            publisher = await open_page(browser, server)
            await publisher.evaluate("sb.publish('cam')")
            await asyncio.sleep(1.5)
            subscriber = await open_page(browser, server)
            await subscriber.evaluate("sb.subscribe('cam')")
            first = await wait_for(
                subscriber,
                lambda s: s["video"] and s["audio"] and s["video"]["framesDecoded"] > 0
                and s["audio"]["totalSamplesReceived"] > 0, 15)
            await asyncio.sleep(2)
            second = await subscriber.evaluate("sb.inbound()")
            await browser.close()
            return first, second

    first, second = run_async(scenario(), 90)
    print("first", first, "\nsecond", second)
    assert second["video"]["framesDecoded"] > first["video"]["framesDecoded"] + 20
    assert second["audio"]["totalSamplesReceived"] > first["audio"]["totalSamplesReceived"] + 48000
