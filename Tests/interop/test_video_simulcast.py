"""Simulcast through the SFU: a Chromium page publishes its camera in three sizes (the playground's "simulcast"
box: 960×540, 480×270 and 240×135, each an RTP stream of its own named by its rid), and each subscriber decodes the
size it asked for — the largest by default, the smallest at least as large as its preferred resolution otherwise —
changing on request without a new offer; when the publisher stops a size (as a browser short of bandwidth does),
its subscribers get the next size down until it comes back. A publisher sending one size ignores preferences, and
bad preferences are refused."""
import pytest

from rig import chromium, new_page, screenshot, wait_until
from video_support import CHROMIUM_ARGS, VideoPeer, VideoRequestError, join, opentok_client, video_server, wait_for_log

opentok = pytest.importorskip("opentok")
pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def server():
    with video_server() as s:
        yield s


@pytest.fixture(scope="module")
def browser():
    with chromium(extra_args=CHROMIUM_ARGS[3:]) as b:
        yield b


def width_of(page, stream_id):
    video = page.evaluate("window.playground.stats()").get(stream_id, {}).get("video") or {}
    return video.get("frameWidth") or 0


def decodes_width(page, stream_id, width, timeout=20.0, what=""):
    """Waits until the page decodes `stream_id` at `width` pixels, with frames still coming after it did."""
    wait_until(lambda: width_of(page, stream_id) == width, timeout=timeout,
               what=lambda: f"{what}: {width} wide (now {width_of(page, stream_id)})")
    frames = page.evaluate("window.playground.stats()")[stream_id]["video"]["framesDecoded"]
    wait_until(lambda: page.evaluate("window.playground.stats()")[stream_id]["video"]["framesDecoded"] > frames + 5,
               timeout=10, what=f"{what}: frames keep coming")
    assert width_of(page, stream_id) == width


def test_each_subscriber_gets_the_size_it_prefers_and_a_smaller_one_when_a_size_stops(server, browser):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    token = lambda name: ot.generate_token(sid, role=opentok.Roles.publisher, data=f"name={name}")
    alice, bob, carol = new_page(browser), new_page(browser), new_page(browser)
    join(alice, server, sid, token("alice"), "alice", publish=False)
    alice.check("#simulcast")
    alice.click("#publish")
    wait_for_log(alice, "publishing stream", timeout=15)
    join(bob, server, sid, token("bob"), "bob", publish=False)
    join(carol, server, sid, token("carol"), "carol", publish=False)
    wait_until(lambda: bob.evaluate("window.playground.streamIds()") and carol.evaluate("window.playground.streamIds()"),
               timeout=10, what="both subscribed")
    (stream,) = bob.evaluate("window.playground.streamIds()")

    # The largest size by default, once the publisher's bandwidth estimate affords it.
    decodes_width(bob, stream, 960, timeout=30, what="bob, by default")
    decodes_width(carol, stream, 960, what="carol, by default")

    # Bob asks for the smallest, then for at least 320×180 (the 480×270 size), in the tile's menu; carol keeps 960.
    bob.select_option(f".tile[data-stream-id='{stream}'] .preferred", "1x1")
    decodes_width(bob, stream, 240, timeout=10, what="bob, smallest")
    bob.select_option(f".tile[data-stream-id='{stream}'] .preferred", "320x180")
    decodes_width(bob, stream, 480, timeout=10, what="bob, ≥ 320×180")
    assert width_of(carol, stream) == 960
    screenshot(bob, "video-playground-simulcast.png")

    # The publisher stops its largest size: carol gets the next one down, and the largest again once it is back.
    assert alice.evaluate("window.playground.setSimulcastLayer('f', false)")
    decodes_width(carol, stream, 480, timeout=10, what="carol, largest size stopped")
    assert alice.evaluate("window.playground.setSimulcastLayer('f', true)")
    decodes_width(carol, stream, 960, timeout=20, what="carol, largest size back")
    # Through all of it bob kept the size he asked for.
    assert width_of(bob, stream) == 480

    # Back to the largest on request.
    bob.select_option(f".tile[data-stream-id='{stream}'] .preferred", "")
    decodes_width(bob, stream, 960, timeout=10, what="bob, largest again")


def test_one_size_publishers_ignore_preferences_and_bad_ones_are_refused(server, browser):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    alice, bob = new_page(browser), new_page(browser)
    join(alice, server, sid, ot.generate_token(sid, data="name=alice"), "alice")
    wait_for_log(alice, "publishing stream", timeout=15)
    join(bob, server, sid, ot.generate_token(sid, data="name=bob"), "bob", publish=False)
    wait_until(lambda: bob.evaluate("window.playground.streamIds()"), timeout=10, what="bob subscribed")
    (stream,) = bob.evaluate("window.playground.streamIds()")
    wait_until(lambda: width_of(bob, stream) == 640, timeout=20, what="640 wide")
    bob.select_option(f".tile[data-stream-id='{stream}'] .preferred", "1x1")
    frames = bob.evaluate("window.playground.stats()")[stream]["video"]["framesDecoded"]
    wait_until(lambda: bob.evaluate("window.playground.stats()")[stream]["video"]["framesDecoded"] > frames + 15,
               timeout=10, what="frames keep coming")
    assert width_of(bob, stream) == 640

    # Refusals, over a plain WebSocket client subscribed to alice's stream.
    peer = VideoPeer(server, sid, ot.generate_token(sid, data="name=dave"))
    try:
        peer.request("video:subscribe", {"streamId": stream, "preferredResolution": {"width": 320, "height": 180}})
        for body in ({"streamId": stream, "preferredResolution": {"width": 0, "height": 180}},
                     {"streamId": stream, "preferredResolution": {"width": 320}},
                     {"streamId": stream, "preferredResolution": "small"},
                     {"streamId": stream, "preferredResolution": {"width": 9000, "height": 180}},
                     {"streamId": stream}):
            with pytest.raises(VideoRequestError) as e:
                peer.request("video:subscriberPreferences", body)
            assert e.value.code == "invalidPreference", body
        with pytest.raises(VideoRequestError) as e:
            peer.request("video:subscribe", {"streamId": stream, "preferredResolution": {"width": -1, "height": 1}})
        assert e.value.code == "invalidPreference"
        with pytest.raises(VideoRequestError) as e:
            peer.request("video:subscriberPreferences", {"streamId": "no-such-stream", "preferredResolution": None})
        assert e.value.code == "notFound"
        assert peer.request("video:subscriberPreferences", {"streamId": stream, "preferredResolution": None}) == {}
    finally:
        peer.close()
