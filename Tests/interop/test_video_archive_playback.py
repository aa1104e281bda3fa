"""A composed archive plays where people play recordings: the MP4 the server writes (H.264 and AAC) is played by
Chromium's own `<video>` element — the picture drawn to a canvas is the publisher's colour at 640 × 480, its sound
is decoded, it runs for as long as the archive recorded. A screenshot is kept (`artifact_path`)."""
from __future__ import annotations

import asyncio

import pytest
import requests

from rig import artifact_path, chromium, new_page
from test_video_audio_connector import server  # noqa: F401 (the module's media server fixture)
from video_support import opentok_client, publish, unpublish

opentok = pytest.importorskip("opentok")


async def _record(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    red = await publish(server, sid, ot.generate_token(sid, data="name=red"), (220, 30, 30), 440)
    try:
        await asyncio.sleep(1)
        archive = await asyncio.to_thread(ot.start_archive, sid, name="playback")
        await asyncio.sleep(3)
        await asyncio.to_thread(ot.stop_archive, archive.id)
        got = await asyncio.to_thread(ot.get_archive, archive.id)
        r = requests.get(got.url, headers=ot.get_headers(), timeout=10)
        assert r.status_code == 200 and r.headers["Content-Type"] == "video/mp4"
        return r.content, got.duration
    finally:
        await unpublish(red)


def test_a_composed_archive_plays_in_chromium(server):
    mp4, duration = asyncio.run(_record(server))
    with chromium() as browser:
        page = new_page(browser)
        page.route("http://archive.test/archive.mp4", lambda route: route.fulfill(status=200, body=mp4, content_type="video/mp4"))
        page.route("http://archive.test/", lambda route: route.fulfill(
            status=200, content_type="text/html",
            body="<video id=v controls muted src='/archive.mp4' width=640 height=480></video><canvas id=c width=640 height=480></canvas>"))
        page.goto("http://archive.test/")
        played = page.evaluate("""async () => {
            const v = document.getElementById('v');
            await v.play();
            // Past its first second (a loaded machine may start it late).
            for (let waited = 0; v.currentTime <= 1.2 && waited < 10000; waited += 100) await new Promise(r => setTimeout(r, 100));
            const c = document.getElementById('c').getContext('2d');
            c.drawImage(v, 0, 0);
            return {width: v.videoWidth, height: v.videoHeight, time: v.currentTime, duration: v.duration,
                    audioBytes: v.webkitAudioDecodedByteCount, pixel: Array.from(c.getImageData(320, 240, 1, 1).data), error: v.error};
        }""")
        page.screenshot(path=str(artifact_path("archive-playback.png")))
        assert played["error"] is None and (played["width"], played["height"]) == (640, 480), played
        assert played["time"] > 1 and abs(played["duration"] - duration) < 1.5, played
        assert played["audioBytes"] > 0, played
        assert all(abs(a - b) < 40 for a, b in zip(played["pixel"][:3], (220, 30, 30))), played
