"""Video end to end: two Chromium pages with fake camera and microphone join one session through
the playground with tokens from the official `opentok` SDK, see and decode each other, signal,
and leave; a subscriber-role token cannot publish and the page says why."""
import time

import pytest

from rig import chromium, new_page, screenshot, wait_until
from video_support import (CHROMIUM_ARGS, AudioConnectorSink, decoding, join, log_lines, opentok_client, video_server,
                           wait_for_log)

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


# When the page sends `video:publish` (Date.now(), shared by the pages of one machine).
MARK_PUBLISH_SENT_JS = """() => {
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (typeof data === 'string' && data.includes('"video:publish"')) window.publishSentAt ??= Date.now();
    return send.call(this, data);
  };
}"""

# When a log line containing `fragment` first appears.
MARK_STREAM_SEEN_JS = """(fragment) => {
  const log = document.getElementById('log');
  new MutationObserver(() => {
    if (!window.streamSeenAt && [...log.querySelectorAll('li b')].some((b) => b.textContent.includes(fragment)))
      window.streamSeenAt = Date.now();
  }).observe(log, {childList: true});
}"""


def inbound(page, stream_id):
    return page.evaluate("window.playground.stats()")[stream_id]


def test_two_pages_see_decode_signal_and_leave(server, browser):
    ot = opentok_client(server)
    session = ot.create_session(media_mode=opentok.MediaModes.routed)
    sid = session.session_id
    # One JWT token and one legacy T1 token, both from the SDK.
    alice_token = ot.generate_token(sid, role=opentok.Roles.publisher, data="name=alice")
    bob_token = ot.generate_token(sid, role=opentok.Roles.publisher, data="name=bob", use_jwt=False)
    assert bob_token.startswith("T1==") and not alice_token.startswith("T1==")

    alice, bob = new_page(browser), new_page(browser)
    join(alice, server, sid, alice_token, "alice", publish=False)
    join(bob, server, sid, bob_token, "bob", publish=False)
    wait_for_log(alice, "connectionCreated bob")

    # Both publish; each sees the other's stream within 2 s of asking to publish. Timed in the pages, from the
    # `video:publish` request leaving one to the stream's line in the other's log: what comes before the request,
    # starting the fake camera and making the offer, is the browser's own work and slows with the machine's load.
    for page, other in ((alice, "bob"), (bob, "alice")):
        page.evaluate(MARK_PUBLISH_SENT_JS)
        page.evaluate(MARK_STREAM_SEEN_JS, f"streamCreated {other}")
    alice.click("#publish")
    bob.click("#publish")
    for sender, seer, name in ((alice, bob, "alice"), (bob, alice, "bob")):
        wait_for_log(seer, f"streamCreated {name}", timeout=15)
        latency = seer.evaluate("window.streamSeenAt") - sender.evaluate("window.publishSentAt")
        print(f"{name}'s stream seen {latency} ms after its publish request")
        assert 0 <= latency <= 2000, latency

    # Each decodes the other: frames and audio samples keep coming.
    first_a = wait_until(decoding(alice), timeout=15, what="alice decodes bob")
    first_b = wait_until(decoding(bob), timeout=15, what="bob decodes alice")
    # At least 10 more frames and half a second more sound each: 1.5 s at the fake camera's 30 fps, allowed up to 10 s
    # (a clean clone's run saw Chromium decode 9 frames in 1.5 s while the machine ran three suites at once).
    for page, first in ((alice, first_a), (bob, first_b)):
        (stream_id, before), = first.items()

        def progressed():
            now = inbound(page, stream_id)
            more = (now["video"]["framesDecoded"] > before["video"]["framesDecoded"] + 10
                    and now["audio"]["totalSamplesReceived"] > before["audio"]["totalSamplesReceived"] + 24000)
            return now if more else None
        after = wait_until(progressed, timeout=10, what=lambda: f"frames and sound keep coming: {before} → {inbound(page, stream_id)}")
        assert after["video"]["frameWidth"] > 0 and after["video"]["frameHeight"] > 0

    # The REST API sees both streams, by the names the pages published.
    streams = ot.list_streams(sid)
    assert sorted(s.name for s in streams.items) == ["alice", "bob"]

    # Two live tiles: alice's own preview and bob.
    wait_until(lambda: alice.evaluate(
        "[...document.querySelectorAll('.tile:not([hidden]) video')].every(v => v.videoWidth > 0 && !v.paused)"
        " && document.querySelectorAll('.tile:not([hidden])').length === 2"), timeout=10, what="two playing tiles")
    screenshot(alice, "video-playground-two-tiles.png")

    # A signal to everyone, typed into alice's page, arrives at bob.
    alice.fill("#signal-type", "chat")
    alice.fill("#signal-text", "hello from alice")
    alice.click("#signal-send")
    wait_until(lambda: "hello from alice" in bob.inner_text("#signals"), timeout=5, what="bob gets the signal")
    assert "alice" in bob.inner_text("#signals")
    # And one sent by bob to alice's connection only.
    alice_cid = alice.evaluate("window.playground.connectionId()")
    bob.select_option("#signal-to", alice_cid)
    bob.fill("#signal-text", "just for alice")
    bob.click("#signal-send")
    wait_until(lambda: "just for alice" in alice.inner_text("#signals"), timeout=5, what="alice gets the direct signal")
    assert "just for alice" not in bob.inner_text("#signals")

    # A moderator mute (REST) pauses alice's audio at the SFU: bob's audio packets stop.
    (alice_stream,) = [s.id for s in streams.items if s.name == "alice"]
    ot.mute_stream(sid, alice_stream)
    wait_for_log(bob, "hasAudio=false")
    wait_for_log(alice, "muteForced")
    time.sleep(0.5)
    p0 = inbound(bob, alice_stream)["audio"]["packetsReceived"]
    time.sleep(1.0)
    assert inbound(bob, alice_stream)["audio"]["packetsReceived"] - p0 <= 2
    # Alice turns her audio back on: packets flow again.
    alice.click("#mute-audio")
    wait_for_log(bob, "hasAudio=true")
    p1 = inbound(bob, alice_stream)["audio"]["packetsReceived"]
    time.sleep(1.0)
    assert inbound(bob, alice_stream)["audio"]["packetsReceived"] - p1 > 20

    # Bob leaves: alice gets streamDestroyed and his tile goes.
    bob.click("#leave")
    wait_for_log(alice, "streamDestroyed bob (clientDisconnected)")
    wait_for_log(alice, "connectionDestroyed bob")
    wait_until(lambda: alice.evaluate("window.playground.streamIds().length") == 0, timeout=5, what="bob's tile removed")
    assert ot.list_streams(sid).count == 1
    alice.click("#leave")
    wait_until(lambda: ot.list_streams(sid).count == 0, timeout=5, what="no streams left")
    alice.context.close()
    bob.context.close()


def test_subscriber_role_cannot_publish_and_page_says_why(server, browser):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    pub = new_page(browser)
    join(pub, server, sid, ot.generate_token(sid, role=opentok.Roles.publisher, data="name=dave"), "dave")
    wait_for_log(pub, "publishing stream")

    carol = new_page(browser)
    join(carol, server, sid, ot.generate_token(sid, role=opentok.Roles.subscriber, data="name=carol"), "carol")
    alert = carol.locator("#alert")
    alert.wait_for(state="visible", timeout=10_000)
    text = alert.inner_text()
    assert "Not allowed to publish" in text and "subscriber" in text, text
    assert not any("publishing stream" in line for line in log_lines(carol))
    # She still watches the publisher.
    wait_until(decoding(carol), timeout=15, what="carol decodes dave")
    assert ot.list_streams(sid).count == 1
    screenshot(carol, "video-playground-subscriber-refused.png")
    pub.context.close()
    carol.context.close()


def test_page_hears_a_bidirectional_audio_connector_and_the_connector_hears_the_page(server, browser):
    """A voice agent on a WebSocket joins a session through the Audio Connector: the playground shows its
    audio-only stream and plays it; the agent's socket gets the page's microphone."""
    import numpy as np
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    page = new_page(browser)
    join(page, server, sid, ot.generate_token(sid, data="name=erin"), "erin")
    wait_for_log(page, "publishing stream")
    # Half a second ahead of real time, as an agent sending synthesized speech is: the test checks that the page
    # plays the stream without gaps, not how the test's own sender keeps time on a loaded machine (a real-time
    # sender here was 32–37 % concealed in two clean clones' runs while the machine ran three suites at once; the
    # playout buffer's jitter handling has its own tests).
    sink = AudioConnectorSink(talk={"/agent": 660}, lead=0.5)
    agent = ot.connect_audio_to_websocket(sid, ot.generate_token(sid, data="name=agent"),
                                          {"uri": sink.uri("/agent"), "bidirectional": True})
    wait_for_log(page, "streamCreated (unnamed) from agent", timeout=5)
    stream_id = next(s.id for s in ot.list_streams(sid).items if s.name == "")

    def playing():
        audio = page.evaluate("window.playground.stats()").get(stream_id, {}).get("audio") or {}
        return audio if (audio.get("totalSamplesReceived") or 0) > 96_000 and (audio.get("audioLevel") or 0) > 0.05 else None
    audio = wait_until(playing, timeout=15, what="the page plays the agent's stream")
    # Once playing, mostly decoded, not concealed: the agent speaks continuously. Judged over the next four
    # seconds, so a start-up stall on a loaded machine (the page's own, or the agent's) is not counted and one later
    # stall weighs less (a fifth to a quarter of two seconds concealed, on clean clones' runs beside other suites); a
    # stream losing every other packet would be half concealed.
    time.sleep(4)
    later = page.evaluate("window.playground.stats()")[stream_id]["audio"]
    played = later["totalSamplesReceived"] - audio["totalSamplesReceived"]
    assert played > 96_000 and later["concealedSamples"] - audio["concealedSamples"] < 0.25 * played, (audio, later)
    assert page.locator(f'figure.tile.video-off[data-stream-id="{stream_id}"] figcaption').inner_text().startswith("agent")
    # The page's fake microphone reaches the agent's socket.
    heard = np.frombuffer(b"".join(sink.frames["/agent"][-100:]), dtype="<i2")
    assert np.abs(heard).max() > 1000, "the agent hears the page"
    screenshot(page, "video-playground-audio-connector.png")
    ot.force_disconnect(sid, agent.connectionId)
    wait_for_log(page, "(forceDisconnected)", timeout=5)
    assert sink.closed["/agent"].wait(5)
    page.context.close()


def test_playground_creates_session_and_token(server, browser):
    page = new_page(browser)
    page.goto(server.http_url + "/video")
    page.click("#create-session")
    wait_until(lambda: page.input_value("#session-id").startswith("1_"), timeout=5, what="session id")
    page.select_option("#role", "moderator")
    page.fill("#token-data", "name=erin")
    page.click("#make-token")
    wait_until(lambda: page.input_value("#token").startswith("T1=="), timeout=5, what="token")
    page.fill("#name", "erin")
    page.fill("#token-data", "name=erin")
    page.uncheck("#auto-publish")
    page.click("#join")
    wait_for_log(page, "connected as")
    assert "erin" in " ".join(log_lines(page))
    page.click("#leave")
    wait_for_log(page, "left the session")
    page.context.close()


def test_playground_goes_live_as_low_latency_hls_and_plays_it(server, browser):
    """Go live: the session composed on the server as a low-latency HLS broadcast, played back in the page's
    own `<video>` (Chromium's HLS player) beside the WebRTC tiles; Stop ends the broadcast."""
    import requests
    page = new_page(browser)
    page.goto(server.http_url + "/video")
    page.click("#create-session")
    wait_until(lambda: page.input_value("#session-id").startswith("1_"), timeout=5, what="session id")
    page.click("#make-token")
    wait_until(lambda: page.input_value("#token").startswith("T1=="), timeout=5, what="token")
    assert page.is_disabled("#go-live"), "only once joined"
    page.click("#join")
    wait_for_log(page, "connected as")
    wait_until(lambda: page.evaluate("document.getElementById('own-video').videoWidth") > 0, timeout=10, what="the camera")
    page.click("#go-live")
    wait_for_log(page, "live stream playing", timeout=40)
    wait_until(lambda: page.evaluate("document.getElementById('live-video').currentTime") > 1, timeout=15, what="the live stream to play")
    shown = page.evaluate("""() => {
        const v = document.getElementById('live-video');
        const c = document.createElement('canvas');
        c.width = v.videoWidth; c.height = v.videoHeight;
        const g = c.getContext('2d');
        g.drawImage(v, 0, 0);
        const d = g.getImageData(0, 0, c.width, c.height).data;
        let sum = 0;
        for (let i = 0; i < d.length; i += 4) sum += d[i] + d[i + 1] + d[i + 2];
        return {width: v.videoWidth, height: v.videoHeight, mean: sum / (d.length / 4) / 3, audio: v.webkitAudioDecodedByteCount,
                url: document.getElementById('live-url').href};
    }""")
    screenshot(page, "video-playground-live")
    assert (shown["width"], shown["height"]) == (640, 480) and shown["audio"] > 0, shown
    assert shown["mean"] > 20, "the camera's picture, not the black of an empty session"
    assert "#EXT-X-PART:" in requests.get(shown["url"], timeout=5).text, "low-latency HLS"
    page.click("#stop-live")
    wait_for_log(page, "live stream ended")
    assert requests.get(shown["url"], timeout=5).text.endswith("#EXT-X-ENDLIST\n")
    assert page.is_hidden("#live-tile") and not page.is_disabled("#go-live")
    page.click("#leave")
    wait_for_log(page, "left the session")
    page.context.close()


@pytest.mark.parametrize("codec", ["VP8", "H264"])
def test_video_codec_passes_through(server, browser, codec):
    """The publisher's preferred codec reaches the subscriber unchanged (no transcoding)."""
    page = new_page(browser)
    page.goto(server.http_url + "/video")
    available = page.evaluate("RTCRtpSender.getCapabilities('video').codecs.map(c => c.mimeType)")
    if f"video/{codec}" not in available:
        pytest.skip(f"this Chromium cannot send {codec}")
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    join(page, server, sid, ot.generate_token(sid, data="name=sender"), "sender", query=f"?codec={codec}")
    wait_for_log(page, "publishing stream")
    viewer = new_page(browser)
    join(viewer, server, sid, ot.generate_token(sid, role=opentok.Roles.subscriber, data="name=viewer"), "viewer",
         publish=False)
    stats = wait_until(decoding(viewer), timeout=15, what=f"viewer decodes {codec}")
    (entry,) = stats.values()
    assert entry["video"]["codec"] == f"video/{codec}", entry
    # The first decoded frame was a key frame requested for the new subscriber.
    assert entry["video"]["keyFramesDecoded"] >= 1
    page.context.close()
    viewer.context.close()
