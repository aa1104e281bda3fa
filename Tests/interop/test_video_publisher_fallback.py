"""The Video API's publisher audio fallback: a publisher that asks for it (`video:publish` with `audioFallback:
{publisher: true}`; the playground's "audio only on a weak uplink") has its own link judged by the server, from the
loss of what reaches it of the video. Too lossy, it is warned, then told to stop sending its video (its audio goes on
and its subscribers are told the video went off); now and then it is told to try the video again, and kept on once
the server finds it carried."""
import subprocess
import time
from types import SimpleNamespace

import pytest

from rig import chromium, new_page, wait_until
from video_support import (CHROMIUM_ARGS, NAMESPACES, NamespacePage, VideoPeer, VideoRequestError, beyond_loopback_server, join,
                           linked_namespace, opentok_client)

opentok = pytest.importorskip("opentok")
pytest.importorskip("playwright.sync_api")


@pytest.fixture
def browser():
    with chromium(extra_args=CHROMIUM_ARGS[3:]) as b:
        yield b


def received(page, stream):
    """What `page` has of `stream`: video frames decoded, audio packets received, its audio fallback events."""
    s = page.evaluate("window.playground.stats()").get(stream, {})
    events = [e["event"] + (f" {e['reason']}" if e.get("reason") else "") for e in page.evaluate("window.playground.qualityEvents()").get(stream, [])]
    return (s.get("video") or {}).get("framesDecoded") or 0, (s.get("audio") or {}).get("packetsReceived") or 0, events


def uplink(namespace, veth, action, rate):
    """What the page in the namespace sends leaves through a bucket of `rate`, queueing up to 200 ms beyond it."""
    return ["ip", "netns", "exec", namespace, "tc", "qdisc", action, "dev", f"{veth}1", "root", "tbf", "rate", rate, "burst", "20kb",
            "latency", "200ms"]


@pytest.mark.skipif(not NAMESPACES, reason="network namespaces and shaping need root, iproute2 and tc")
def test_a_publisher_on_a_lossy_uplink_sends_audio_only_until_its_video_is_carried_again(browser):
    """Alice publishes from a network namespace of the test's own; bob subscribes on loopback. When her uplink narrows
    to less than her audio and video need (a queue losing what overflows it), the server warns her, then tells her to stop her video
    (`video:publisherAudioFallback`, `sendVideo: false`): her page sets its encoding inactive and sends no video
    while its audio goes on, and bob is told the video went off (`video:videoDisabled`, reason quality) while her
    audio keeps reaching him. With the link wide again, the server's next try of her video finds it carried: she is told
    `videoEnabled` and sends it, and bob decodes it again."""
    with linked_namespace("pubfall") as (namespace, veth):
        server = beyond_loopback_server()
        alice = None
        try:
            ot = opentok_client(server)
            sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
            token = lambda name: ot.generate_token(sid, role=opentok.Roles.publisher, data=f"name={name}")
            # A publish asking for a fallback in a shape the Video API does not have is refused.
            peer = VideoPeer(SimpleNamespace(ws_url=f"ws://127.0.0.1:{server.http_port}"), sid, token("dave"))
            try:
                for bad in ("yes", {"publisher": "yes"}, {"publisher": True, "both": True}):
                    with pytest.raises(VideoRequestError) as e:
                        peer.request("video:publish", {"name": "dave", "offer": "v=0", "audioFallback": bad})
                    assert e.value.code == "invalidAudioFallback", bad
            finally:
                peer.close()

            alice = NamespacePage(namespace, "publisher", server, sid, token("alice"))
            alice.read_until(lambda line: line["t"] >= 2, 30, "alice sending")
            bob = new_page(browser)
            join(bob, SimpleNamespace(http_url=f"http://127.0.0.1:{server.http_port}"), sid, token("bob"), "bob", publish=False)
            wait_until(lambda: bob.evaluate("window.playground.streamIds()"), timeout=10, what="bob subscribed")
            (stream,) = bob.evaluate("window.playground.streamIds()")
            wait_until(lambda: received(bob, stream)[0] > 10, timeout=20, what="bob decoding alice")

            # Her uplink narrowed to 64 kb/s: her audio fits it, her audio and video together do not, so the queue
            # drops what overflows (the kernel's token bucket filter; a browser's video does not go below ~30 kb/s).
            if subprocess.run(uplink(namespace, veth, "add", "64kbit"), capture_output=True).returncode != 0:
                pytest.skip("the kernel has no token bucket filter (sch_tbf) to shape the link with")
            off = alice.read_until(lambda line: "videoDisabled quality" in line["events"], 45, "alice's video turned off")
            events = [e for line in off for e in line["events"]]
            print("lossy:", [(line["t"], line["sent"], line["active"], line["events"]) for line in off])
            assert events.index("videoDisableWarning") < events.index("videoDisabled quality"), events
            bob_then = received(bob, stream)
            quiet = alice.read_until(lambda line: line["t"] >= off[-1]["t"] + 4, 10, "4 s of audio only")
            bob_now = received(bob, stream)
            print("audio only:", [(line["t"], line["sent"], line["audio"], line["active"]) for line in quiet], bob_then, bob_now)
            assert not quiet[-1]["active"], "her video encoding is off"
            # Over the 4 s since she was told (about 200 packets at 50 a second; the page's lines can come late).
            assert quiet[-1]["audio"] - off[-1]["audio"] > 150, "she sends her audio: " + str(off[-1:] + quiet)
            assert "videoDisabled quality" in bob_now[2], bob_now
            assert bob_now[1] - bob_then[1] > 80, "her audio reaches bob through the lossy link"
            assert bob_now[0] - bob_then[0] < 10, "no video reaches bob"

            subprocess.run(uplink(namespace, veth, "change", "2mbit"), check=True)
            back = alice.read_until(lambda line: "videoEnabled quality" in line["events"], 40, "alice's video on again")
            print("loss gone:", [(line["t"], line["sent"], line["active"], line["events"]) for line in back])
            assert back[-1]["active"]
            wait_until(lambda: "videoEnabled quality" in received(bob, stream)[2], timeout=5, what="bob told the video is back")
            frames = received(bob, stream)[0]
            # About 20 frames a second once it comes; an encoder that has just had its link back can start slower.
            wait_until(lambda: received(bob, stream)[0] > frames + 20, timeout=20,
                       what=lambda: f"bob decoding alice again (from {frames} frames): {bob.evaluate('window.playground.stats()').get(stream)}")
        finally:
            if alice is not None:
                alice.stop()
            server.stop()
            server.cleanup()
