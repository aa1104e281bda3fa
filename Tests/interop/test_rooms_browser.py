"""The rooms web app in three real browsers (Debian Chromium, fake microphones, loopback):
alice creates a room, bob and carol join from the list, everyone hears everyone, bob leaves,
carol mutes, unmutes, and is muted by the room's app server. Screenshots of every page go to Tests/interop/artifacts/."""
import time

import pytest
import requests

from media_support import CHROMIUM_ARGS
from rig import CHROMIUM, screenshot, start_server
from rooms_support import app_headers

ROOM = "Morning standup"


@pytest.fixture(scope="module")
def server():
    s = start_server(["--media-port", "0"], https=False, dev=True)
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


def names_on(page):
    return sorted(page.eval_on_selector_all("#members .member", "els => els.map(e => e.dataset.name)"))


def member_class(page, name):
    return page.eval_on_selector(f'#members .member[data-name="{name}"]', "e => e.className")


def wait(predicate, timeout, what, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        time.sleep(interval)


def inbound(page):
    return page.evaluate("rooms.inbound()")


def sample_levels(page, seconds):
    """Max audioLevel and energy gained per sender over `seconds` of polling getStats."""
    first = inbound(page)
    peak = {}
    end = time.monotonic() + seconds
    last = first
    while time.monotonic() < end:
        last = inbound(page)
        for name, s in last.items():
            peak[name] = max(peak.get(name, 0), s["audioLevel"])
        time.sleep(0.1)
    packets = {n: last[n]["packetsReceived"] - first.get(n, {}).get("packetsReceived", 0) for n in last}
    energy = {n: last[n]["totalAudioEnergy"] - first.get(n, {}).get("totalAudioEnergy", 0) for n in last}
    return peak, packets, energy


def log_in(browser, server, name):
    context = browser.new_context(viewport={"width": 420, "height": 820})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(server.http_url + "/rooms/")
    page.wait_for_selector("#login-view:not([hidden])")
    if name == "alice":
        screenshot(page, "rooms-login")
    page.fill("#name", name)
    page.click("#login")
    page.wait_for_selector("#list-view:not([hidden])")
    return page


def test_three_browsers_talk_leave_and_mute(server, browser):
    pages = {name: log_in(browser, server, name) for name in ("alice", "bob", "carol")}
    alice, bob, carol = pages["alice"], pages["bob"], pages["carol"]

    alice.click("#create")
    screenshot(alice, "rooms-create-modal")
    alice.fill("#room-name", ROOM)
    alice.click("#confirm-create")
    alice.wait_for_selector("#room-view:not([hidden])")

    for page in (bob, carol):
        page.click("#refresh")
        page.click(f'#rooms button:has-text("{ROOM}")')
        page.wait_for_selector("#room-view:not([hidden])")
    joined_at = time.monotonic()

    everyone = ["alice", "bob", "carol"]
    for name, page in pages.items():
        wait(lambda: names_on(page) == everyone, 2.0, f"{name} sees the other two")
    assert time.monotonic() - joined_at < 2.5

    # Inbound audio from both others on every page: packets rising, a non-zero level (the fake tone).
    for name, page in pages.items():
        others = [n for n in everyone if n != name]
        wait(lambda: all(n in inbound(page) and inbound(page)[n]["packetsReceived"] > 0 for n in others), 10,
             f"{name} receives from {others}")
    for name, page in pages.items():
        others = [n for n in everyone if n != name]
        peak, packets, energy = sample_levels(page, 2.0)
        print(name, "peak", peak, "packets", packets, "energy", energy)
        for other in others:
            assert packets[other] > 50, f"{name}: packets from {other} not rising: {packets}"
            assert peak[other] > 0, f"{name}: silent audio from {other}: {peak}"

    # Speaking rings come from the server's audio levels of the fake tone.
    wait(lambda: "is-speaking" in member_class(alice, "carol"), 5, "carol's speaking ring on alice's page")
    for name, page in pages.items():
        screenshot(page, f"rooms-{name}-three")

    # bob leaves: gone from the others' grids within 2 s.
    bob.click("#leave")
    left_at = time.monotonic()
    for name in ("alice", "carol"):
        wait(lambda: names_on(pages[name]) == ["alice", "carol"], 2.0, f"bob gone from {name}'s grid")
    assert time.monotonic() - left_at < 2.5
    bob.wait_for_selector("#list-view:not([hidden])")
    screenshot(bob, "rooms-bob-after-leave")

    # carol mutes: her audio to alice drops to about 0, her ring goes off, the muted mark shows.
    carol.click("#mute")
    wait(lambda: carol.inner_text("#mute") == "Unmute", 2, "mute button toggles")
    wait(lambda: "is-muted" in member_class(alice, "carol"), 2, "carol's muted mark on alice's page")
    wait(lambda: "is-speaking" not in member_class(alice, "carol"), 3, "carol's speaking ring off")
    # The jitter buffer drains (about a second; longer on a busy machine): then 2 s are sampled.
    wait(lambda: sample_levels(alice, 0.5)[0].get("carol", 0) < 0.01, 6, "carol's audio drained from alice's jitter buffer")
    peak, packets, energy = sample_levels(alice, 2.0)
    print("after mute", peak, packets, energy)
    assert peak.get("carol", 0) < 0.01, peak
    assert packets.get("carol", 0) <= 2, packets
    screenshot(alice, "rooms-alice-carol-muted")
    screenshot(carol, "rooms-carol-muted")

    # carol unmutes and is heard again; then the room's app server mutes her (a moderator, through the
    # Conversation API): her button and microphone follow, and alice stops hearing her.
    carol.click("#mute")
    wait(lambda: carol.inner_text("#mute") == "Mute", 2, "carol unmuted")
    wait(lambda: "is-muted" not in member_class(alice, "carol"), 2, "carol's muted mark gone on alice's page")
    time.sleep(1.0)
    peak, _, _ = sample_levels(alice, 1.5)
    assert peak.get("carol", 0) > 0.01, f"carol unmuted is not heard: {peak}"
    room_id, member_id = carol.evaluate("[rooms.room.id, rooms.room.memberID]")
    r = requests.patch(f"{server.http_url}/v1/conversations/{room_id}/members/{member_id}", headers=app_headers(server),
                       json={"media": {"audio_settings": {"muted": True}}}, timeout=10)
    assert r.status_code == 200, r.text
    wait(lambda: carol.inner_text("#mute") == "Unmute", 3, "carol's button follows the app server's mute")
    wait(lambda: "is-muted" in member_class(alice, "carol"), 3, "carol's muted mark on alice's page")
    wait(lambda: sample_levels(alice, 0.5)[0].get("carol", 0) < 0.01, 6, "carol's audio drained from alice's jitter buffer")
    peak, packets, _ = sample_levels(alice, 2.0)
    print("after the app server's mute", peak, packets)
    assert peak.get("carol", 0) < 0.01, peak
    assert packets.get("carol", 0) <= 2, packets
    screenshot(carol, "rooms-carol-muted-by-app-server")
    for page in pages.values():
        page.context.close()
