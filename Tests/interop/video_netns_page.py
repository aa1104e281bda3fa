"""Runs inside a network namespace a test makes (`video_support.linked_namespace`), behind a veth pair the test
shapes or makes lossy: a Chromium page joins a video session through the playground, as a subscriber only or as a
publisher, and prints a JSON line every half second until `seconds` have passed or it is terminated.

A subscriber, once it decodes the stream: the seconds since then, the width and the frames it decoded, the audio
packets it received, and the audio fallback events that came since the last line (a screenshot when the video is
turned off). A publisher (with "audio only on a weak uplink" ticked), once it sends its video: the seconds since then,
the video bytes and audio packets it sent, whether its video encoding is active, and its publisher audio fallback
events since the last line (a screenshot when its video is turned off).

Usage: video_netns_page.py subscriber|publisher URL SESSION_ID TOKEN SECONDS"""
import json
import signal
import sys
import time

from rig import CHROMIUM, screenshot, wait_until
from video_support import CHROMIUM_ARGS


def subscriber(page):
    page.uncheck("#auto-publish")
    page.click("#join")
    wait_until(lambda: page.evaluate("window.playground.streamIds().length") > 0, timeout=15, what="subscribed")
    (stream,) = page.evaluate("window.playground.streamIds()")

    def stats():
        return page.evaluate("window.playground.stats()").get(stream, {})
    wait_until(lambda: ((stats().get("video") or {}).get("framesDecoded") or 0) > 0, timeout=20, what="decoding")

    def line():
        s = stats()
        video, audio = s.get("video") or {}, s.get("audio") or {}
        events = page.evaluate("window.playground.qualityEvents()").get(stream, [])
        return {"width": video.get("frameWidth") or 0, "frames": video.get("framesDecoded") or 0,
                "audio": audio.get("packetsReceived") or 0}, events
    return line, "video-playground-audio-fallback.png"


PUBLISHER_STATS_JS = """async () => {
  const pc = window.playground.state.publisher.pc;
  let audio = 0;
  (await pc.getStats()).forEach((r) => { if (r.type === 'outbound-rtp' && r.kind === 'audio') audio = r.packetsSent; });
  return audio;
}"""


def publisher(page):
    page.check("#publisher-fallback")
    page.click("#join")

    def video():
        return page.evaluate("window.playground.publisherLayers()").get("", {})
    wait_until(lambda: (video().get("bytesSent") or 0) > 0, timeout=20, what="sending video")

    def line():
        v = video()
        return {"sent": v.get("bytesSent") or 0, "active": v.get("active", False),
                "audio": page.evaluate(PUBLISHER_STATS_JS)}, page.evaluate("window.playground.publisherQualityEvents()")
    return line, "video-playground-publisher-audio-fallback.png"


def main():
    from playwright.sync_api import sync_playwright

    # Terminated by the test: the browser is closed on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    role, url, session_id, token, seconds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
    with sync_playwright() as p:
        # The server is not on loopback here: its origin is made a secure context, which the camera needs.
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=[*CHROMIUM_ARGS, f"--unsafely-treat-insecure-origin-as-secure={url}"])
        try:
            page = browser.new_page()
            page.goto(url + "/video")
            page.fill("#session-id", session_id)
            page.fill("#token", token)
            page.fill("#name", role)
            line, picture = {"subscriber": subscriber, "publisher": publisher}[role](page)
            start = time.monotonic()
            told = 0
            while time.monotonic() - start < seconds:
                fields, events = line()
                new = events[told:]
                print(json.dumps({"t": round(time.monotonic() - start, 1), **fields,
                                  "events": [e["event"] + (f" {e['reason']}" if e.get("reason") else "") for e in new]}), flush=True)
                if any(e["event"] == "videoDisabled" for e in new):
                    screenshot(page, picture)
                told = len(events)
                time.sleep(0.5)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
