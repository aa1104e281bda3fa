"""Helpers for the video tests: a server with free media ports, the official `opentok` client
pointed at it, and the playground driven in Chromium."""
from __future__ import annotations

import json
import time

from rig import start_server, wait_until

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--use-fake-ui-for-media-stream",
    "--use-fake-device-for-media-stream",
    "--allow-loopback-in-peer-connection",
    "--autoplay-policy=no-user-gesture-required",
]


def start_video_server(https: bool = False):
    """`switchboard serve` on free TCP and UDP ports (media port 0: the kernel picks)."""
    return start_server(["--media-port", "0", "--log-level", "warn"], https=https)


def account(server) -> dict:
    """The primary account (api_key, api_secret) the server wrote into its data directory."""
    return json.loads((server.data_dir / "account.json").read_text())


def opentok_client(server):
    import opentok
    acc = account(server)
    return opentok.Client(acc["api_key"], acc["api_secret"], api_url=server.http_url)


def join(page, server, session_id: str, token: str, name: str, publish: bool = True, query: str = ""):
    """Opens the playground, pastes the session id and token, and joins."""
    page.goto(server.http_url + "/video" + query)
    page.fill("#session-id", session_id)
    page.fill("#token", token)
    page.fill("#name", name)
    if not publish:
        page.uncheck("#auto-publish")
    page.click("#join")
    wait_until(lambda: page.evaluate("window.playground.connectionId()"), timeout=10, what=f"{name} connected")


def decoding(page, stream_count: int = 1):
    """Stats of every subscribed stream once `stream_count` streams decode video and audio."""
    def ready():
        stats = page.evaluate("window.playground.stats()")
        live = [s for s in stats.values()
                if s["video"] and s["audio"] and (s["video"]["framesDecoded"] or 0) > 0
                and (s["video"]["frameWidth"] or 0) > 0 and (s["audio"]["totalSamplesReceived"] or 0) > 0]
        return stats if len(live) >= stream_count else None
    return ready


def log_lines(page) -> list[str]:
    return page.eval_on_selector_all("#log li b", "els => els.map(e => e.textContent)")


def wait_for_log(page, fragment: str, timeout: float = 5.0) -> float:
    """Waits until a log line contains `fragment`; returns how long it took."""
    start = time.monotonic()
    wait_until(lambda: any(fragment in line for line in log_lines(page)), timeout=timeout, what=f"log '{fragment}'")
    return time.monotonic() - start
