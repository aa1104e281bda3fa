"""(c) with 10% of forwarded video dropped inside the SFU (SWITCHBOARD_MEDIA_TEST_DROP), the
subscriber NACKs, the SFU retransmits from its buffer over RTX, and video keeps decoding.
(d) a subscriber that joins late decodes its first frame within a second."""

import asyncio
import time

import pytest

from media_support import CHROMIUM_ARGS, MediaServer, open_page
from rig import run_async

playwright_api = pytest.importorskip("playwright.async_api")


async def stats(page):
    return await page.evaluate("sb.inbound()")


def test_video_survives_ten_percent_loss_through_nack():
    server = MediaServer({"SWITCHBOARD_MEDIA_TEST_DROP": "0.1"})

    async def scenario():
        async with playwright_api.async_playwright() as p:
            browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            publisher = await open_page(browser, server)
            await publisher.evaluate("sb.publish('lossy')")
            await asyncio.sleep(1.0)
            subscriber = await open_page(browser, server)
            transport = await subscriber.evaluate("sb.subscribe('lossy')")
            await asyncio.sleep(4)
            first = await stats(subscriber)
            await asyncio.sleep(3)
            second = await stats(subscriber)
            sfu = await server.arequest("GET", f"/test/media/transports/{transport}/stats")
            await browser.close()
            return first, second, sfu

    try:
        first, second, sfu = run_async(scenario(), 90)
    finally:
        server.stop()
    print("first", first, "\nsecond", second, "\nsfu", sfu)
    video = [c for c in sfu["consumers"].values() if c["kind"] == "video"][0]
    assert second["video"]["nackCount"] > 0
    assert video["retransmitted"] > 0
    # Chromium accepted the RTX stream in its answer, so retransmissions arrive over RTX
    # (RFC 4588), which it counts apart from the original packets.
    assert second["video"]["retransmittedPacketsReceived"] > 0, second
    assert second["video"]["framesDecoded"] > first["video"]["framesDecoded"] + 30


def test_late_subscriber_gets_a_keyframe_within_a_second():
    server = MediaServer()

    async def scenario():
        async with playwright_api.async_playwright() as p:
            browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            publisher = await open_page(browser, server)
            await publisher.evaluate("sb.publish('late')")
            # Long after the publisher's first key frame: only a requested one can arrive soon.
            await asyncio.sleep(4)
            subscriber = await open_page(browser, server)
            # Poll inside the page so the measurement does not include round trips to Python.
            elapsed = await subscriber.evaluate("""async () => {
                await sb.subscribe('late');
                const start = performance.now();
                let connectedAt = null;
                while (performance.now() - start < 10000) {
                    if (connectedAt === null && window.pc.connectionState === 'connected') connectedAt = performance.now();
                    const s = await sb.inbound();
                    if (s.video && s.video.framesDecoded > 0) {
                        return {fromAnswer: performance.now() - start,
                                fromConnected: connectedAt === null ? null : performance.now() - connectedAt};
                    }
                    await new Promise(r => setTimeout(r, 10));
                }
                return null;
            }""")
            await browser.close()
            return elapsed

    try:
        elapsed = run_async(scenario(), 60)
    finally:
        server.stop()
    print("first decoded frame", elapsed)
    assert elapsed is not None
    assert elapsed["fromAnswer"] < 1000
