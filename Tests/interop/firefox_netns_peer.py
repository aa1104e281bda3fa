"""Runs inside the network namespace `test_rooms_firefox.py` creates (loopback plus a veth pair whose
two ends, 10.203.0.1 and 10.203.0.2, are both in the namespace: no route leaves it): a server whose
media candidate is 10.203.0.1, erin in Chromium and dana in Firefox in one room. Firefox gathers ICE
candidates only on non-loopback interfaces, which here means the veth ends. Prints one JSON line:
what each browser received from the other."""
import json
import sys
import time

from firefox_support import Firefox, create_room_in_chromium, drop_in_with_firefox
from media_support import CHROMIUM_ARGS
from rig import CHROMIUM, start_server, wait_until
from rooms_support import Dropin

ADDRESS = "10.203.0.1"
ROOM = "Across browsers"


def main():
    from playwright.sync_api import sync_playwright

    # A wildcard listener is production mode (--dev is loopback only): the rooms page talks to the
    # reference app server, switchboard-dropin, as a deployment would.
    server = start_server(["--media-port", "0", "--media-announce", ADDRESS], https=False, host="0.0.0.0")
    dropin = Dropin(server)
    url = f"http://127.0.0.1:{server.http_port}/rooms/?app={dropin.base}"
    try:
        with sync_playwright() as p:
            chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            firefox = Firefox()
            try:
                erin = create_room_in_chromium(chromium, url, "erin", ROOM)
                drop_in_with_firefox(firefox, url, "dana", ROOM)

                def ff():
                    return firefox.js_async("rooms.inbound()").get("erin", {})

                def cr():
                    return erin.evaluate("rooms.inbound()").get("dana", {})

                wait_until(lambda: ff().get("packetsReceived", 0) > 0, 15, what="Firefox receives erin")
                wait_until(lambda: cr().get("packetsReceived", 0) > 0, 15, what="Chromium receives dana")
                ff0, cr0 = ff(), cr()
                ff_peak = cr_peak = 0.0
                # 4 s (200 packets each way at 50/s): a second's stall of a busy machine leaves well over 50.
                end = time.monotonic() + 4.0
                while time.monotonic() < end:
                    ff1, cr1 = ff(), cr()
                    ff_peak, cr_peak = max(ff_peak, ff1["audioLevel"]), max(cr_peak, cr1["audioLevel"])
                    time.sleep(0.1)
                firefox.screenshot("rooms-firefox-media")
                print(json.dumps({
                    "firefox_packets": ff1["packetsReceived"] - ff0["packetsReceived"], "firefox_peak": ff_peak,
                    "firefox_energy": ff1["totalAudioEnergy"] - ff0["totalAudioEnergy"],
                    "chromium_packets": cr1["packetsReceived"] - cr0["packetsReceived"], "chromium_peak": cr_peak,
                }), flush=True)
            finally:
                firefox.close()
                chromium.close()
    finally:
        dropin.stop()
        server.stop()
        server.cleanup()


if __name__ == "__main__":
    sys.exit(main())
