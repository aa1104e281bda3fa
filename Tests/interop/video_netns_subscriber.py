"""Runs inside the network namespace `test_video_simulcast.py` creates, behind a veth pair whose far end (the
server's side) is shaped: a Chromium page joins a video session through the playground as a subscriber only and
prints one JSON line — the width and frame count it decoded each half second for `seconds`.

Usage: video_netns_subscriber.py URL SESSION_ID TOKEN SECONDS"""
import json
import sys
import time

from rig import CHROMIUM, wait_until
from video_support import CHROMIUM_ARGS


def main():
    from playwright.sync_api import sync_playwright

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

            def video():
                return page.evaluate("window.playground.stats()").get(stream, {}).get("video") or {}
            wait_until(lambda: (video().get("framesDecoded") or 0) > 0, timeout=20, what="decoding")
            samples = []
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                v = video()
                samples.append([round(time.monotonic() - end + seconds, 1), v.get("frameWidth") or 0, v.get("framesDecoded") or 0])
                time.sleep(0.5)
            print(json.dumps({"samples": samples}), flush=True)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
