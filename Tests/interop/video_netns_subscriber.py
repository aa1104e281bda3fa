"""Runs inside the network namespace `test_video_simulcast.py` creates, behind a veth pair whose far end (the
server's side) is shaped: a Chromium page joins a video session through the playground as a subscriber only and,
once it decodes the stream, prints a JSON line every half second — the seconds since then, the width and the frames
it decoded, the audio packets it received, and the audio fallback events that came since the last line (a screenshot
when the video is turned off) — until `seconds` have passed or it is terminated.

Usage: video_netns_subscriber.py URL SESSION_ID TOKEN SECONDS"""
import json
import signal
import sys
import time

from rig import CHROMIUM, screenshot, wait_until
from video_support import CHROMIUM_ARGS


def main():
    from playwright.sync_api import sync_playwright

    # Terminated by the test: the browser is closed on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    url, session_id, token, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(url + "/video")
            page.fill("#session-id", session_id)
            page.fill("#token", token)
            page.fill("#name", "shaped")
            page.uncheck("#auto-publish")
            page.click("#join")
            wait_until(lambda: page.evaluate("window.playground.streamIds().length") > 0, timeout=15, what="subscribed")
            (stream,) = page.evaluate("window.playground.streamIds()")

            def stats():
                return page.evaluate("window.playground.stats()").get(stream, {})
            wait_until(lambda: ((stats().get("video") or {}).get("framesDecoded") or 0) > 0, timeout=20, what="decoding")
            start = time.monotonic()
            told = 0
            while time.monotonic() - start < seconds:
                s = stats()
                video, audio = s.get("video") or {}, s.get("audio") or {}
                events = page.evaluate("window.playground.qualityEvents()").get(stream, [])
                print(json.dumps({"t": round(time.monotonic() - start, 1), "width": video.get("frameWidth") or 0,
                                  "frames": video.get("framesDecoded") or 0, "audio": audio.get("packetsReceived") or 0,
                                  "events": [e["event"] + (f" {e['reason']}" if e.get("reason") else "") for e in events[told:]]}),
                      flush=True)
                if any(e["event"] == "videoDisabled" for e in events[told:]):
                    screenshot(page, "video-playground-audio-fallback.png")
                told = len(events)
                time.sleep(0.5)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
