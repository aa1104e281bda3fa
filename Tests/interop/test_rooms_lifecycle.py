"""A browser tab killed without leaving: its member is marked left (reason `disconnected`) within
45 s and its transports are freed; the page that stays sees it go."""
import time

from rig import screenshot
from rooms_support import media_stats, metric
from test_rooms_browser import browser, log_in, names_on, server, wait  # noqa: F401 (module fixtures)


def transports(server):
    return sum(w["transports"] for w in media_stats(server.http_url))


def test_killed_tab_is_marked_left_and_freed(server, browser):
    alice = log_in(browser, server, "alice")
    bob = log_in(browser, server, "bob")
    alice.click("#create")
    alice.fill("#room-name", "Crash test")
    alice.click("#confirm-create")
    alice.wait_for_selector("#room-view:not([hidden])")
    bob.click("#refresh")
    bob.click('#rooms button:has-text("Crash test")')
    wait(lambda: names_on(alice) == ["alice", "bob"], 5, "both in the room")
    wait(lambda: transports(server) == 4, 10, "two transports each")
    assert metric(server.http_url, "switchboard_room_media_transports") == 4

    # Drop bob's tab: no leave, no unpublish, no unload handlers.
    bob.close(run_before_unload=False)
    bob.context.close()
    killed = time.monotonic()

    # Media goes with the socket; the member is marked left after the grace period.
    wait(lambda: transports(server) == 2, 10, "bob's transports freed")
    wait(lambda: names_on(alice) == ["alice"], 45, "bob marked left", interval=0.5)
    elapsed = time.monotonic() - killed
    print(f"bob marked left after {elapsed:.1f} s")
    assert elapsed < 45
    assert metric(server.http_url, "switchboard_room_media_transports") == 2
    assert metric(server.http_url, "switchboard_room_media_peers") == 1
    screenshot(alice, "rooms-alice-after-crash")
    alice.context.close()


def test_network_blip_resumes_and_renegotiates(server, browser):
    alice = log_in(browser, server, "alice2")
    bob = log_in(browser, server, "bob2")
    alice.click("#create")
    alice.fill("#room-name", "Blip test")
    alice.click("#confirm-create")
    alice.wait_for_selector("#room-view:not([hidden])")
    bob.click("#refresh")
    bob.click('#rooms button:has-text("Blip test")')
    wait(lambda: names_on(alice) == ["alice2", "bob2"], 5, "both in the room")

    def packets_from_bob():
        return alice.evaluate("rooms.inbound()").get("bob2", {}).get("packetsReceived", 0)

    wait(lambda: packets_from_bob() > 0, 10, "alice hears bob")
    # Cut bob's realtime socket (not a leave): the client resumes, rejoins and publishes again.
    bob.evaluate("rooms.rt.ws.close()")
    wait(lambda: bob.evaluate("rooms.rt.state") == "reconnecting" or bob.evaluate("rooms.rt.state") == "connected", 2, "bob reconnects")
    wait(lambda: bob.evaluate("rooms.rt.state") == "connected", 10, "bob reconnected")
    start = packets_from_bob()
    wait(lambda: packets_from_bob() > start + 25, 10, "alice hears bob again after the blip")
    assert names_on(alice) == ["alice2", "bob2"]
    assert bob.is_hidden("#net")
    screenshot(bob, "rooms-bob-after-blip")
    for page in (alice, bob):
        page.context.close()
