"""The rooms web app in Firefox (Debian's Firefox ESR over Marionette) beside a Chromium page.

1. On loopback: erin creates a room in Chromium, dana logs in, finds it in the list and drops in from
   Firefox; each grid shows the other within 2 s; dana leaves and erin's grid drops her.
2. Media: Firefox gathers ICE candidates only on non-loopback interfaces (it ignores
   `media.peerconnection.ice.loopback`), so this part runs in a network namespace the test creates,
   holding a veth pair whose two ends are both inside it (no route leaves the namespace): server,
   Chromium and Firefox run there (`firefox_netns_peer.py`) and each browser must hear the other's
   fake microphone through the SFU."""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from firefox_support import FIREFOX, Firefox, create_room_in_chromium, drop_in_with_firefox
from media_support import CHROMIUM_ARGS
from rig import CHROMIUM, screenshot, start_server, wait_until

ROOM = "Cross-browser"

pytestmark = pytest.mark.skipif(not shutil.which(FIREFOX), reason="Firefox ESR is not installed (scripts/setup --test)")


@pytest.fixture(scope="module")
def server():
    s = start_server(["--media-port", "0"], https=False, dev=True)
    yield s
    s.stop()
    s.cleanup()



NAMES = "return Array.from(document.querySelectorAll('#members .member')).map(e => e.dataset.name).sort()"


def chromium_names(page):
    return sorted(page.eval_on_selector_all("#members .member", "els => els.map(e => e.dataset.name)"))


def test_firefox_and_chromium_share_a_room(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        firefox = Firefox()
        try:
            url = server.http_url + "/rooms/"
            erin = create_room_in_chromium(chromium, url, "erin", ROOM)
            drop_in_with_firefox(firefox, url, "dana", ROOM)
            joined_at = time.monotonic()

            wait_until(lambda: firefox.js(NAMES) == ["dana", "erin"], 2.0, what="Firefox shows both members")
            wait_until(lambda: chromium_names(erin) == ["dana", "erin"], 2.0, what="Chromium shows dana")
            assert time.monotonic() - joined_at < 3.0

            firefox.screenshot("rooms-firefox-dana")
            screenshot(erin, "rooms-chromium-erin-with-firefox")

            # dana leaves from Firefox: erin's grid drops her within 2 s.
            firefox.click("#leave")
            wait_until(lambda: chromium_names(erin) == ["erin"], 2.0, what="dana gone from Chromium's grid")
            firefox.wait_for("#list-view:not([hidden])")
        finally:
            firefox.close()
            chromium.close()


NAMESPACE_SETUP = [
    ["ip", "link", "set", "lo", "up"],
    ["ip", "link", "add", "sba", "type", "veth", "peer", "name", "sbb"],
    ["ip", "addr", "add", "10.203.0.1/24", "dev", "sba"],
    ["ip", "addr", "add", "10.203.0.2/24", "dev", "sbb"],
    ["ip", "link", "set", "sba", "up"],
    ["ip", "link", "set", "sbb", "up"],
    # Firefox offers host candidates only on the interface of the default route.
    ["ip", "route", "add", "default", "via", "10.203.0.2", "dev", "sba"],
]


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip"), reason="network namespaces need root and iproute2")
def test_firefox_and_chromium_hear_each_other_through_the_sfu():
    namespace = f"sb-firefox-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    try:
        for command in NAMESPACE_SETUP:
            subprocess.run(["ip", "netns", "exec", namespace] + command, check=True)
        here = Path(__file__).resolve().parent
        run = subprocess.run(["ip", "netns", "exec", namespace, sys.executable, str(here / "firefox_netns_peer.py")],
                             cwd=here, capture_output=True, text=True, timeout=240)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
        result = json.loads(run.stdout.strip().splitlines()[-1])
        print(result)
        assert result["firefox_packets"] > 50, result
        assert result["chromium_packets"] > 50, result
        assert result["firefox_peak"] > 0 or result["firefox_energy"] > 0, result
        assert result["chromium_peak"] > 0, result
    finally:
        subprocess.run(["ip", "netns", "del", namespace])
