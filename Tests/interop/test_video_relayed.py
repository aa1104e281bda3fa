"""Relayed (peer-to-peer) video sessions: a session the `opentok` SDK creates with `MediaModes.relayed` carries its
clients' media between them, not through the server. Two Chromium pages in the playground see and hear each other
over a path that joins the two browsers' own sockets, while the server passes only their offers, answers and ICE
candidates (`video:relay`); the relay's rules are checked message by message with plain WebSocket clients. With
`--ice-servers` and `--turn-secret`, the pages are given a TURN server (coturn on loopback, checking the credentials the
server made for each connection with the secret they share) and, told to, send everything through it."""
import base64
import hashlib
import hmac
import json
import subprocess
import time

import pytest
import requests

from rig import REPO, chromium, client, client_lines, new_page, screenshot, wait_until
from turn_support import allocations, turn, turn_server  # noqa: F401 (fixtures)
from video_support import (CHROMIUM_ARGS, VideoPeer, VideoRequestError, decoding, join, log_lines, opentok_client, video_server,
                           wait_for_log)

opentok = pytest.importorskip("opentok")
pytest.importorskip("playwright.sync_api")

# The browsers are given only each other's IPv4 loopback candidates, so every check and every packet between them is
# sent to 127.0.0.1 (their other interfaces' candidates are dropped on arrival).
LOOPBACK_ONLY_JS = """
(() => {
  const loopback = (line) => / 127\\.\\d+\\.\\d+\\.\\d+ \\d+ typ /.test(line);
  const add = RTCPeerConnection.prototype.addIceCandidate;
  RTCPeerConnection.prototype.addIceCandidate = function (c, ...rest) {
    if (c && c.candidate && !loopback(c.candidate)) return Promise.resolve();
    return add.call(this, c, ...rest);
  };
  const setRemote = RTCPeerConnection.prototype.setRemoteDescription;
  RTCPeerConnection.prototype.setRemoteDescription = function (d, ...rest) {
    if (d && d.sdp) d = { type: d.type, sdp: d.sdp.split('\\r\\n').filter((l) => !l.startsWith('a=candidate:') || loopback(l)).join('\\r\\n') };
    return setRemote.call(this, d, ...rest);
  };
})();
"""


@pytest.fixture(scope="module")
def server():
    with video_server() as s:
        yield s


@pytest.fixture(scope="module")
def browser():
    with chromium(extra_args=CHROMIUM_ARGS[3:] + ["--disable-features=WebRtcHideLocalIpsWithMdns"]) as b:
        yield b


def pages_in(browser, server, ot, sid, query=""):
    pages = {}
    for name in ("alice", "bob"):
        page = new_page(browser)
        page.add_init_script(LOOPBACK_ONLY_JS)
        join(page, server, sid, ot.generate_token(sid, data=f"name={name}"), name, query=query)
        wait_until(lambda: "peer to peer" in page.inner_text("#status"), timeout=5, what=f"{name} sees a relayed session")
        pages[name] = page
    return pages["alice"], pages["bob"]


def paths(page):
    """The path of the stream the page receives, and of the one it sends (its one subscriber's)."""
    (entry,) = page.evaluate("window.playground.stats()").values()
    (sent,) = page.evaluate("window.playground.peerPaths()").values()
    return entry["path"], sent["path"]


def page_logs(*pages):
    return "; ".join(f"page {i}: {log_lines(page)[-12:]}" for i, page in enumerate(pages))


def relayed_session(server):
    ot = opentok_client(server)
    return ot, ot.create_session(media_mode=opentok.MediaModes.relayed).session_id


def test_two_pages_send_their_media_to_each_other(server, browser):
    ot, sid = relayed_session(server)
    alice, bob = pages_in(browser, server, ot, sid)

    # Each decodes the other's camera and microphone.
    for page in (alice, bob):
        stats = wait_until(decoding(page), timeout=20, what="the other's video and audio decoded")
        (entry,) = stats.values()
        assert entry["state"] == "connected" and entry["video"]["frameWidth"] > 0
    # Straight from browser to browser: what each receives comes from a socket of the other's peer connection for it
    # (the server has no socket in the path). A peer-reflexive remote (the other's socket on another interface of this
    # machine, sending to 127.0.0.1) is known by its port only: Chromium's stats leave its address out.
    (a_in, a_out), (b_in, b_out) = paths(alice), paths(bob)
    for received, sender in ((a_in, b_out), (b_in, a_out)):
        port = lambda address: address.rsplit(":", 1)[1]
        assert port(received["remote"]) in {port(c) for c in sender["localCandidates"]}, (received, sender)
        assert received["remote"].startswith("127.") if received["remoteType"] == "host" else received["remoteType"] == "prflx"
    wait_until(lambda: alice.evaluate(
        "[...document.querySelectorAll('.tile:not([hidden]) video')].every(v => v.videoWidth > 0 && !v.paused)"
        " && document.querySelectorAll('.tile:not([hidden])').length === 2"), timeout=10, what="two playing tiles")
    screenshot(alice, "video-playground-relayed.png")

    # The REST API still sees both streams, and a moderator's mute reaches the publisher, who turns its microphone off.
    streams = ot.list_streams(sid)
    assert sorted(s.name for s in streams.items) == ["alice", "bob"]
    (alice_stream,) = [s.id for s in streams.items if s.name == "alice"]
    ot.mute_stream(sid, alice_stream)
    wait_for_log(alice, "muteForced")
    wait_for_log(bob, "hasAudio=false")
    assert alice.evaluate("window.playground.state.publisher.local.getAudioTracks()[0].enabled") is False
    # Composing needs the media on the server: the live stream and captions are not offered in a relayed session.
    assert alice.is_disabled("#go-live") and alice.is_disabled("#start-captions")

    # Bob leaves: alice's peer connection to him closes, and his tile goes.
    bob.click("#leave")
    wait_for_log(alice, "streamDestroyed bob (clientDisconnected)")
    wait_until(lambda: alice.evaluate("window.playground.state.publisher.peers.size") == 0, timeout=5,
               what="alice's peer connection to bob closed")
    wait_until(lambda: alice.evaluate("window.playground.streamIds().length") == 0, timeout=5, what="bob's tile removed")
    alice.click("#leave")
    alice.context.close()
    bob.context.close()


def test_three_pages_make_a_mesh(server, browser):
    """Each publisher keeps a peer connection per subscriber: three pages, each receiving the other two from them."""
    ot, sid = relayed_session(server)
    pages = {}
    for name in ("ann", "ben", "cat"):
        page = new_page(browser)
        page.add_init_script(LOOPBACK_ONLY_JS)
        join(page, server, sid, ot.generate_token(sid, data=f"name={name}"), name)
        pages[name] = page
    for name, page in pages.items():
        wait_until(decoding(page, stream_count=2), timeout=30, what=f"{name} decodes the other two")
        wait_until(lambda: len(page.evaluate("window.playground.peerPaths()")) == 2, timeout=10, what=f"{name} sends to two peers")
    pages["cat"].click("#leave")
    for name in ("ann", "ben"):
        wait_until(lambda: len(pages[name].evaluate("window.playground.peerPaths()")) == 1, timeout=10,
                   what=f"{name}'s peer connection to cat closed")
        wait_until(lambda: len(pages[name].evaluate("window.playground.streamIds()")) == 1, timeout=10, what=f"cat's tile gone from {name}'s page")
    for page in pages.values():
        page.context.close()


# The page's WebSocket holds back its `video:publish` reply by a second, so a subscriber's `video:relay` subscribe
# comes before it.
SLOW_PUBLISH_REPLY_JS = """
(() => {
  const set = Object.getOwnPropertyDescriptor(WebSocket.prototype, 'onmessage').set;
  Object.defineProperty(WebSocket.prototype, 'onmessage', { set(handler) {
    set.call(this, (ev) => {
      if (typeof ev.data === 'string' && ev.data.includes('"video:publish:success"')) setTimeout(() => handler(ev), 1000);
      else handler(ev);
    });
  } });
})();
"""


def page_and_sdk_client(server, browser, ot, sid, page_query="", sdk_args=(), checks=lambda page, entry: None):
    """A page of the playground in relayed session `sid`, and `switchboard client video join` (publishing a VP8 recording
    and a tone, subscribing) beside it for 8 s: once the page decodes the client's video and audio (320×240), `checks`
    runs with the page and its stream's stats. Returns the page and what the client printed, after it checked that
    the client received the page's video and met no error."""
    page = new_page(browser)
    page.add_init_script(LOOPBACK_ONLY_JS)
    join(page, server, sid, ot.generate_token(sid, data="name=page"), "page", query=page_query)
    wait_until(lambda: "peer to peer" in page.inner_text("#status"), timeout=5, what="the page sees a relayed session")
    recording = REPO / "Tests" / "Fixtures" / "media" / "vp8-320x240.ivf"
    sdk = client(server, "video", "join", sid, "--token", ot.generate_token(sid, data="name=sdk"), "--publish", str(recording),
                 "--name", "sdk", *sdk_args, seconds=8)
    try:
        stats = wait_until(decoding(page), timeout=25, what="the page decodes the SDK client's video and audio")
        (entry,) = stats.values()
        assert (entry["video"]["frameWidth"], entry["video"]["frameHeight"]) == (320, 240), entry
        checks(page, entry)
        lines = client_lines(sdk, timeout=40)
    finally:
        if sdk.poll() is None:
            sdk.kill()
    print("sdk:", [l for l in lines if "relay" not in l.get("event", "")])
    page_stream = next(l["event"].split()[1] for l in lines if l.get("event", "").startswith("streamCreated") and l["event"].endswith(" page"))
    got = next(l for l in lines if l.get("received") == page_stream)
    assert got["frames"] > 30 and got["width"] > 0, got
    assert not [l for l in lines if l.get("event", "").startswith("error")], lines
    return page, lines


def test_a_page_and_an_sdk_client_send_their_media_to_each_other(server, browser):
    """The Swift SDK's own media in a relayed session: `switchboard client video join` publishes a VP8 recording and
    a tone, and subscribes; a Chromium page publishes its camera and microphone. Each end's publisher offers the other
    a connection through `video:relay` (the SDK with its host candidate, here 127.0.0.1 alone; the page trickling its
    own), ICE picks the loopback pair, and each decodes the other's video and audio; when the SDK client leaves, the
    page's connection to it closes."""
    def over_loopback(page, entry):
        (received, _) = paths(page)
        assert received["remote"].startswith("127.0.0.1:"), received
        screenshot(page, "video-playground-relayed-sdk.png")

    ot, sid = relayed_session(server)
    page, _ = page_and_sdk_client(server, browser, ot, sid, sdk_args=("--media-address", "127.0.0.1"), checks=over_loopback)
    wait_for_log(page, "streamDestroyed sdk")
    wait_until(lambda: page.evaluate("window.playground.state.publisher.peers.size") == 0, timeout=10,
               what="the page's connection to the SDK client closed")
    page.click("#leave")
    page.context.close()


def test_a_subscriber_announced_before_the_publish_reply_is_offered_to(server, browser):
    """The server may push a subscriber's `video:relay` subscribe before the publisher has its `video:publish` reply
    (they come from different sockets' requests): the page keeps it until the reply comes, then offers."""
    ot, sid = relayed_session(server)
    watcher = VideoPeer(server, sid, ot.generate_token(sid, data="name=watcher"))
    page = new_page(browser)
    page.add_init_script(SLOW_PUBLISH_REPLY_JS)
    try:
        join(page, server, sid, ot.generate_token(sid, data="name=slow"), "slow")
        stream = watcher.wait_push("video:streamCreated", timeout=15)["stream"]["streamId"]
        assert watcher.request("video:subscribe", {"streamId": stream})["relayed"] is True
        offer = watcher.wait_push("video:relay", timeout=10, where=lambda b: b["event"] == "description")
        assert offer["description"]["type"] == "offer" and "m=video" in offer["description"]["sdp"]
    finally:
        watcher.close()
        page.context.close()


def test_the_relay_passes_each_message_to_the_other_end_only(server):
    ot, sid = relayed_session(server)
    token = lambda name, role=opentok.Roles.publisher: ot.generate_token(sid, role=role, data=f"name={name}")
    pub, sub, other = (VideoPeer(server, sid, token(n)) for n in ("pub", "sub", "other"))
    try:
        assert pub.connect_reply["mediaMode"] == "relayed"
        # An offer to the server has nowhere to go: media is the clients' own.
        with pytest.raises(VideoRequestError) as refused:
            pub.request("video:publish", {"name": "pub", "offer": "v=0\r\n"})
        assert refused.value.code == "relayedSession"
        stream = pub.publish("pub")
        sub.wait_push("video:streamCreated")

        # Subscribing asks the publisher to offer; the reply carries no offer of the server's.
        reply = sub.request("video:subscribe", {"streamId": stream})
        assert reply == {"streamId": stream, "subscriberId": sub.connection_id, "relayed": True}
        asked = pub.wait_push("video:relay")
        assert asked == {"streamId": stream, "subscriberId": sub.connection_id, "event": "subscribe"}

        pair = {"streamId": stream, "subscriberId": sub.connection_id}
        offer = {"type": "offer", "sdp": "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\n"}
        pub.request("video:relay", {**pair, "description": offer})
        assert sub.wait_push("video:relay") == {**pair, "event": "description", "description": offer}
        answer = {"type": "answer", "sdp": "v=0\r\no=- 2 1 IN IP4 127.0.0.1\r\n"}
        sub.request("video:relay", {**pair, "description": answer})
        assert pub.wait_push("video:relay") == {**pair, "event": "description", "description": answer}
        candidate = {"candidate": "candidate:1 1 udp 2122260223 127.0.0.1 50000 typ host", "sdpMid": "0", "sdpMLineIndex": 0}
        sub.request("video:relay", {**pair, "candidate": candidate})
        assert pub.wait_push("video:relay") == {**pair, "event": "candidate", "candidate": candidate}
        pub.request("video:relay", {**pair, "candidate": {"candidate": ""}})  # the end of gathering
        assert sub.wait_push("video:relay") == {**pair, "event": "candidate", "candidate": {"candidate": ""}}

        # Nobody else can speak for either end, and what is relayed must be a description or a candidate.
        for who, body, code in (
            (other, {**pair, "description": offer}, "notFound"),
            (pub, {"streamId": stream, "subscriberId": other.connection_id, "description": offer}, "notFound"),
            (pub, {**pair, "description": {"type": "bogus", "sdp": ""}}, "invalidRelay"),
            (pub, {**pair, "description": {"type": "offer", "sdp": "x" * 70_000}}, "invalidRelay"),
            (pub, {**pair, "candidate": {"candidate": "c", "sdpMLineIndex": -1}}, "invalidRelay"),
            (pub, {**pair, "candidate": {"candidate": "c" * 2000}}, "invalidRelay"),
            (pub, {**pair, "description": offer, "candidate": candidate}, "invalidRelay"),
            (pub, pair, "invalidRelay"),
        ):
            with pytest.raises(VideoRequestError) as e:
                who.request("video:relay", body)
            assert e.value.code == code, (body, e.value)
        assert not [m for m in sub.pushes + other.pushes if m["type"] == "video:relay"]

        # Unsubscribing ends the pair: the publisher is told to close that peer connection, and the pair is gone.
        sub.request("video:unsubscribe", {"streamId": stream})
        assert pub.wait_push("video:relay") == {**pair, "event": "end"}
        with pytest.raises(VideoRequestError) as e:
            sub.request("video:relay", {**pair, "description": answer})
        assert e.value.code == "notFound"

        # So does a subscriber leaving.
        other.request("video:subscribe", {"streamId": stream})
        assert pub.wait_push("video:relay")["event"] == "subscribe"
        other.close()
        assert pub.wait_push("video:relay") == {"streamId": stream, "subscriberId": other.connection_id, "event": "end"}
    finally:
        for p in (pub, sub, other):
            p.close()


def test_a_routed_session_says_so_and_relays_nothing(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    peer = VideoPeer(server, sid, ot.generate_token(sid))
    try:
        assert peer.connect_reply["mediaMode"] == "routed"
        stream = peer.publish("me")
        with pytest.raises(VideoRequestError) as e:
            peer.request("video:relay", {"streamId": stream, "subscriberId": peer.connection_id,
                                         "description": {"type": "offer", "sdp": "v=0\r\n"}})
        assert e.value.code == "notFound"
    finally:
        peer.close()


def test_the_playground_makes_relayed_sessions(server):
    import requests
    r = requests.post(server.http_url + "/video/api/session", json={"mediaMode": "relayed"}, timeout=10)
    assert r.status_code == 200 and r.json()["mediaMode"] == "relayed"
    ot = opentok_client(server)
    # The archive, broadcast, captions, Audio Connector and SIP dial refusals for relayed sessions hold for it.
    archive = requests.post(f"{server.http_url}/v2/project/{ot.api_key}/archive", headers=ot.get_json_headers(),
                            data=json.dumps({"sessionId": r.json()["sessionId"]}), timeout=10)
    assert archive.status_code == 409
    r = requests.post(server.http_url + "/video/api/session", json={"mediaMode": "p2p"}, timeout=10)
    assert r.status_code == 400
    assert requests.post(server.http_url + "/video/api/session", timeout=10).json()["mediaMode"] == "routed"


def test_pages_told_to_go_through_turn_connect_through_the_turn_server(turn, turn_server, browser):
    server = turn_server
    ot, sid = relayed_session(server)
    # Each connection gets the STUN server and the TURN server with a credential of its own, valid for a day.
    peer = VideoPeer(server, sid, ot.generate_token(sid))
    stun, relay = peer.connect_reply["iceServers"]
    peer.close()
    assert stun == {"urls": ["stun:127.0.0.1:3478"]} and relay["urls"] == [turn["url"]]
    expiry, name = relay["username"].split(":")
    assert name == peer.connection_id and 86_000 < int(expiry) - time.time() <= 86_400
    assert relay["credential"] == base64.b64encode(
        hmac.new(turn["secret"].encode(), relay["username"].encode(), hashlib.sha1).digest()).decode()

    # Both pages send only through TURN: the other's media arrives, from the TURN server's relay ports.
    alice, bob = pages_in(browser, server, ot, sid, query="?iceTransportPolicy=relay")
    for page in (alice, bob):
        # Two TURN allocations a page and checks through both relays: slower than loopback on a loaded machine.
        wait_until(decoding(page), timeout=40,
                   what=lambda: f"the other's video and audio decoded through TURN; {page_logs(alice, bob)}")
    for received, sent in (paths(alice), paths(bob)):
        assert received["localType"] == "relay" and sent["localType"] == "relay", (received, sent)
    # coturn accepted the credentials the server made for these connections (a wrong one is refused with 401, and
    # nothing would connect).
    for page in (alice, bob):
        assert allocations(turn, page.evaluate("window.playground.connectionId()")), open(turn["log"]).read()[-3000:]
    alice.context.close()
    bob.context.close()


def test_a_routed_session_s_pages_reach_the_server_through_turn(turn, turn_server, browser):
    """A client whose network lets only the TURN server through still reaches the SFU (an ICE-lite server answers the
    TURN server's relayed checks as any other)."""
    ot = opentok_client(turn_server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    pages = []
    for name in ("carol", "dave"):
        page = new_page(browser)
        join(page, turn_server, sid, ot.generate_token(sid, data=f"name={name}"), name, query="?iceTransportPolicy=relay")
        pages.append(page)
    for page in pages:
        stats = wait_until(decoding(page), timeout=20, what="the other's stream decoded through TURN and the SFU")
        (entry,) = stats.values()
        assert entry["path"]["localType"] == "relay", entry["path"]
        assert allocations(turn, page.evaluate("window.playground.connectionId()"))
    for page in pages:
        page.context.close()


def test_a_page_and_an_sdk_client_both_told_to_use_only_turn_send_each_other_media(turn, turn_server, browser):
    """Peer to peer through TURN: the SDK client offers its relayed address as its one candidate and sends everything
    in the allocation (Send and Data indications, a permission for each of the page's addresses); the page does the
    same with its own allocation; each decodes the other."""
    def through_turn(page, entry):
        assert entry["path"]["localType"] == "relay", entry["path"]

    ot = opentok_client(turn_server)
    sid = ot.create_session(media_mode=opentok.MediaModes.relayed).session_id
    page, lines = page_and_sdk_client(turn_server, browser, ot, sid, page_query="?iceTransportPolicy=relay",
                                      sdk_args=("--ice-transport", "relay"), checks=through_turn)
    connection = next(l["event"].split()[1] for l in lines if l.get("event", "").startswith("connected "))
    assert allocations(turn, connection), "no TURN allocation for the SDK client"
    page.context.close()


def test_rooms_pages_talk_through_turn(turn, turn_server, browser):
    """The rooms web app's conversation audio uses the ICE servers of its login (`ice_servers` in `session:success`)."""
    pages = {}
    for name in ("erin", "frank"):
        page = new_page(browser)
        page.goto(turn_server.http_url + "/rooms/?iceTransportPolicy=relay")
        page.wait_for_selector("#login-view:not([hidden])")
        page.fill("#name", name)
        page.click("#login")
        page.wait_for_selector("#list-view:not([hidden])")
        pages[name] = page
    erin, frank = pages["erin"], pages["frank"]
    erin.click("#create")
    erin.fill("#room-name", "Through the relay")
    erin.click("#confirm-create")
    erin.wait_for_selector("#room-view:not([hidden])")
    frank.click("#refresh")
    frank.click('#rooms button:has-text("Through the relay")')
    frank.wait_for_selector("#room-view:not([hidden])")
    def media_state(page):
        return page.evaluate("""async () => ({inbound: await rooms.inbound(), outbound: rooms.media && await rooms.media.outbound(),
            publishing: rooms.media && rooms.media.pub && rooms.media.pub.connectionState,
            receiving: rooms.media && rooms.media.sub && rooms.media.sub.connectionState})""")

    for name, page in pages.items():
        (other,) = [n for n in pages if n != name]
        wait_until(lambda: page.evaluate("rooms.inbound()").get(other, {}).get("packetsReceived", 0) > 50, timeout=20,
                   what=lambda: f"{name} hears {other} through TURN: {name} {media_state(page)}, {other} {media_state(pages[other])}; "
                                f"coturn: {open(turn['log']).read()[-2000:]}")
    # Two allocations per page (its publishing and its receiving peer connections), each with its login's credential.
    assert len(allocations(turn, ":SES-")) >= 4, open(turn["log"]).read()[-3000:]
    for page in pages.values():
        page.context.close()


@pytest.mark.parametrize("args, says", [
    (["--ice-servers", "turn:127.0.0.1:3478"], "--ice-servers: TURN servers need --turn-secret"),
    (["--ice-servers", "http://127.0.0.1"], "is not a stun:, turn: or turns: URI"),
    (["--turn-secret", "s"], "--turn-secret: there are no TURN servers"),
])
def test_bad_ice_server_settings_stop_the_server_at_start(args, says):
    from rig import server_binary
    out = subprocess.run([str(server_binary()), "serve", *args, "--listen", "127.0.0.1:0", "--sip-port", "0"],
                         capture_output=True, text=True, timeout=20)
    assert out.returncode != 0 and says in out.stderr + out.stdout, out.stderr
