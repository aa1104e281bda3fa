"""The Swift SDK and Chromium in one video session: `switchboard client video join` publishes a VP8
recording and Chromium (the playground of `serve --dev`, fake camera and microphone) publishes its
camera; each decodes the other's video, and Chromium sees the SDK client's stream go when it leaves. The SDK
client's simulcast stream gives Chromium the size it asks for."""
import json
import time

import pytest

from rig import REPO, chromium, client, client_lines, new_page, screenshot, wait_until
from video_support import CHROMIUM_ARGS, dev_session, dev_token, join, video_server, wait_for_log

pytest.importorskip("playwright.sync_api")

RECORDING = REPO / "Tests" / "Fixtures" / "media" / "vp8-320x240.ivf"
# The SDK client stays this long; Chromium's checks must fit inside it, with room for a loaded machine.
SDK_SECONDS = 16


@pytest.fixture(scope="module")
def server():
    with video_server() as s:
        yield s


def inbound_video(page, stream_id: str) -> dict | None:
    """Chromium's inbound-rtp video stats for one subscribed stream (None before it has any)."""
    entry = page.evaluate("window.playground.stats()").get(stream_id)
    return entry and entry["video"]


def outbound_video_codec(page) -> str | None:
    """The codec Chromium's camera is sent with."""
    return page.evaluate("""async () => {
        const report = await window.playground.state.publisher.pc.getStats();
        let codec = null;
        report.forEach((s) => { if (s.type === "outbound-rtp" && s.kind === "video") codec = report.get(s.codecId)?.mimeType; });
        return codec;
    }""")


@pytest.mark.parametrize("codec", ["VP8", "H264"])
def test_sdk_client_and_chromium_decode_each_others_video(server, codec):
    sid = dev_session(server)
    with chromium(extra_args=CHROMIUM_ARGS[3:]) as browser:
        page = new_page(browser)
        # Chromium joins first without publishing, so the SDK client is there when its stream is created.
        # It sends `codec` only: the SDK client counts frames of any codec and key frames of VP8.
        join(page, server, sid, dev_token(server, sid, "chromium"), "chromium", publish=False, query=f"?codec={codec}")
        sdk = client(server, "video", "join", sid, "--token", dev_token(server, sid, "sdk"),
                     "--publish", str(RECORDING), "--name", "sdk", seconds=SDK_SECONDS)
        try:
            wait_for_log(page, "streamCreated sdk", timeout=15)
            (sdk_stream,) = page.evaluate("window.playground.streamIds()")
            page.click("#publish")
            wait_for_log(page, "publishing stream", timeout=15)
            chromium_stream = page.evaluate("window.playground.state.publisher.streamId")

            # Chromium decodes the SDK's recording: frames keep rising a second apart.
            first = wait_until(lambda: (v := inbound_video(page, sdk_stream)) and (v["framesDecoded"] or 0) > 30 and v,
                               timeout=15, what="Chromium decodes the SDK client's video")
            time.sleep(1.0)
            second = inbound_video(page, sdk_stream)
            assert second["framesDecoded"] > first["framesDecoded"] + 5, (first, second)
            assert second["codec"] == "video/VP8" and (second["frameWidth"], second["frameHeight"]) == (320, 240), second
            assert second["keyFramesDecoded"] >= 1, second

            # What the SDK client receives from Chromium is `codec`.
            assert wait_until(lambda: outbound_video_codec(page), timeout=10, what="Chromium's outbound codec") == f"video/{codec}"

            # Both videos play on the page: Chromium's own preview and the SDK client's tile.
            wait_until(lambda: page.evaluate(
                "[...document.querySelectorAll('.tile:not([hidden]) video')].every(v => v.videoWidth > 0 && !v.paused)"
                " && document.querySelectorAll('.tile:not([hidden])').length === 2"), timeout=10, what="two playing tiles")
            screenshot(page, f"video-sdk-chromium-{codec.lower()}.png")

            # The SDK client leaves after SDK_SECONDS and prints what it received.
            lines = client_lines(sdk, timeout=SDK_SECONDS + 30)
        finally:
            if sdk.poll() is None:
                sdk.kill()
                sdk.wait()

        published = next(l["published"] for l in lines if "published" in l)
        assert published == sdk_stream
        assert any(l.get("event", "").startswith(f"streamCreated {chromium_stream} chromium") for l in lines), lines
        received = next((l for l in lines if l.get("received") == chromium_stream), None)
        assert received is not None, lines
        assert received["frames"] > 30, received
        # Key frames are VP8's: an H264 stream is counted in frames and bytes, never read as VP8.
        assert received["keyframes"] >= 1 if codec == "VP8" else received["keyframes"] == 0, received

        # Chromium sees the SDK client's stream destroyed and its tile go.
        wait_for_log(page, "streamDestroyed sdk", timeout=10)
        wait_until(lambda: page.evaluate("window.playground.streamIds().length") == 0, timeout=5, what="SDK tile removed")
        page.click("#leave")
        wait_for_log(page, "left the session")
        page.context.close()


SIZES = [REPO / "Tests" / "Fixtures" / "media" / f"vp8-{size}.ivf" for size in ("160x120", "320x240", "640x480")]


def test_chromium_takes_the_size_it_asks_for_of_the_sdk_client_s_simulcast_stream(server):
    """`switchboard client video join --publish small,medium,large` publishes three sizes of one picture as simulcast
    (the Swift SDK's `IVFFileSource(simulcast:)`): Chromium, subscribed in the playground, decodes the largest, then the
    smallest once it asks for it in its tile's menu, and the largest again. While it takes only the smallest, the
    server names the two larger sizes unused and the SDK client pauses them (it prints the server's word)."""
    from test_video_simulcast import decodes_width
    sid = dev_session(server)
    with chromium(extra_args=CHROMIUM_ARGS[3:]) as browser:
        page = new_page(browser)
        join(page, server, sid, dev_token(server, sid, "chromium"), "chromium", publish=False)
        sdk = client(server, "video", "join", sid, "--token", dev_token(server, sid, "sdk"),
                     "--publish", ",".join(map(str, SIZES)), "--name", "sdk", seconds=90)
        try:
            wait_for_log(page, "streamCreated sdk", timeout=15)
            (stream,) = page.evaluate("window.playground.streamIds()")
            # The largest by default, once Chromium's estimate of its link affords it.
            decodes_width(page, stream, 640, timeout=40, what="the largest size")
            page.select_option(f".tile[data-stream-id='{stream}'] .preferred", "1x1")
            decodes_width(page, stream, 160, timeout=15, what="the smallest size, asked for")
            # Nobody takes the larger sizes: named unused three seconds on (the SDK client pauses them).
            time.sleep(5)
            decodes_width(page, stream, 160, timeout=5, what="the smallest size, the others paused")
            page.select_option(f".tile[data-stream-id='{stream}'] .preferred", "")
            decodes_width(page, stream, 640, timeout=40, what="the largest size again")
            screenshot(page, "video-sdk-simulcast.png")
        finally:
            sdk.kill()
            out, err = sdk.communicate(timeout=10)
        events = [json.loads(l).get("event", "") for l in out.splitlines() if l.strip()]
        assert f"unusedLayers {stream} h,f" in events, (events, err[-2000:])
        assert events.index(f"unusedLayers {stream} h,f") < events.index(f"unusedLayers {stream} "), events
        page.context.close()
