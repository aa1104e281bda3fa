"""A mixed audio room in real browsers (Debian Chromium, fake microphones, loopback) through the
unchanged rooms web app: alice creates the room, bob joins from the list; each page receives one
track, the room's mix, and its getStats shows that audio decoded (samples rising, not concealment,
with energy from the other's fake microphone). Screenshots go to Tests/interop/artifacts/."""
import time

import pytest

from media_support import CHROMIUM_ARGS
from rig import CHROMIUM, screenshot, start_server
from test_rooms_browser import inbound, log_in, wait

ROOM = "Mixed standup"
MIX = "Room mix"


@pytest.fixture(scope="module")
def server():
    s = start_server(["--media-port", "0"], https=False, dev=True, env={"SWITCHBOARD_ROOM_MODE": "mixed"})
    yield s
    s.stop()
    s.cleanup()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


def test_chromium_decodes_the_mix_of_a_mixed_room(server, browser):
    alice = log_in(browser, server, "alice")
    bob = log_in(browser, server, "bob")
    alice.click("#create")
    alice.fill("#room-name", ROOM)
    alice.click("#confirm-create")
    alice.wait_for_selector("#room-view:not([hidden])")
    bob.click("#refresh")
    bob.click(f'#rooms button:has-text("{ROOM}")')
    bob.wait_for_selector("#room-view:not([hidden])")

    pages = {"alice": alice, "bob": bob}
    for name, page in pages.items():
        wait(lambda: MIX in inbound(page) and inbound(page)[MIX]["packetsReceived"] > 0, 15, f"{name} receives the mix")
    time.sleep(1.0)  # the jitter buffers fill
    for name, page in pages.items():
        first = inbound(page)
        peak = 0.0
        end = time.monotonic() + 3.0
        while time.monotonic() < end:
            peak = max(peak, inbound(page)[MIX]["audioLevel"])
            time.sleep(0.1)
        last = inbound(page)
        print(name, "first", first, "last", last, "peak", peak)
        # One track, the mix: a mixed room does not forward each member's own stream.
        assert list(last) == [MIX], last
        packets = last[MIX]["packetsReceived"] - first[MIX]["packetsReceived"]
        samples = last[MIX]["totalSamplesReceived"] - first[MIX]["totalSamplesReceived"]
        concealed = last[MIX]["concealedSamples"] - first[MIX]["concealedSamples"]
        energy = last[MIX]["totalAudioEnergy"] - first[MIX]["totalAudioEnergy"]
        assert packets > 100, f"{name}: mix packets not rising: {packets}"
        # 3 s at 48 kHz is 144,000 samples; most of them decoded from packets, not concealed.
        assert samples > 100_000, f"{name}: decoded samples not rising: {samples}"
        assert concealed < 0.2 * samples, f"{name}: mostly concealment: {concealed} of {samples}"
        assert energy > 0 and peak > 0, f"{name}: the mix is silent (energy {energy}, peak {peak})"
        screenshot(page, f"rooms-mixed-{name}")
    for page in pages.values():
        page.context.close()
