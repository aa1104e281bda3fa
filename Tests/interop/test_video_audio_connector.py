"""The Audio Connector driven by the official `opentok` SDK: a video session's audio, mixed, reaches a WebSocket
server on loopback as 20 ms L16 messages after a JSON first message. aiortc peers publish tones into the session
over the `video:*` protocol; a signaling-only peer watches the connector's connection arrive and leave."""
from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time

import numpy as np
import pytest
import requests

from media_support import collect_audio, loopback_ice
from video_support import AudioConnectorSink as Sink, VideoPeer, opentok_client, publish, video_server

opentok = pytest.importorskip("opentok")


@pytest.fixture(scope="module")
def server():
    loopback_ice()
    with video_server() as s:
        yield s


def tone_level(samples, rate, frequency):
    """The spectrum's magnitude at `frequency` in dB against its strongest component (0: the loudest tone);
    -inf-ish for silence."""
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    freqs = np.fft.rfftfreq(len(samples), 1 / rate)
    near = spectrum[(freqs > frequency - 8) & (freqs < frequency + 8)]
    return float(20 * np.log10((near.max() + 1e-9) / (spectrum.max() + 1e-9)))


async def publish_tone(server, session_id, token, frequency):
    """An aiortc peer publishing a sine into the session; returns (pc, peer, stream id)."""
    return await publish(server, session_id, token, None, frequency, video=False)


def connectors(server):
    """`switchboard_video_audio_connectors` from /metrics."""
    for line in requests.get(server.http_url + "/metrics", timeout=5).text.splitlines():
        if line.startswith("switchboard_video_audio_connectors "):
            return float(line.split()[1])
    return None


async def until(condition, timeout, what):
    """Waits without blocking the event loop (the aiortc peers run on it)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def test_connector_streams_the_session_mix_and_leaves_on_force_disconnect(server):
    asyncio.run(_connector_session(server))


async def _connector_session(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    sink = Sink()
    watcher = await asyncio.to_thread(VideoPeer, server, sid, ot.generate_token(sid, data="name=watcher"))
    pc440, peer440, s440 = await publish_tone(server, sid, ot.generate_token(sid, data="name=low"), 440)
    peers, pcs = [peer440], [pc440]
    try:
        # Every stream, later ones too, at 16 kHz, with the caller's headers in the first message.
        everything = await asyncio.to_thread(ot.connect_audio_to_websocket, sid,
                                             ot.generate_token(sid, data="name=transcriber"),
                                             {"uri": sink.uri("/all"), "headers": {"lang": "en-US", "meeting": 7}})
        assert everything.connectionId and everything.id
        created = await asyncio.to_thread(watcher.wait_push, "video:connectionCreated",
                                          where=lambda b: b["connection"]["data"] == "name=transcriber")
        assert created["connection"]["connectionId"] == everything.connectionId
        await until(lambda: "/all" in sink.first, 5, "the connector's first message")
        assert sink.first["/all"] == {"content-type": "audio/l16;rate=16000", "lang": "en-US", "meeting": 7}
        assert connectors(server) == 1

        pc1000, peer1000, s1000 = await publish_tone(server, sid, ot.generate_token(sid, data="name=high"), 1000)
        peers.append(peer1000)
        pcs.append(pc1000)
        # One stream only, at 8 kHz.
        only_low = await asyncio.to_thread(ot.connect_audio_to_websocket, sid, ot.generate_token(sid),
                                           {"uri": sink.uri("/low"), "streams": [s440], "audioRate": 8000})
        await until(lambda: len(sink.frames.get("/low", [])) >= 150 and len(sink.frames["/all"]) >= 250, 15,
                 "three seconds of audio on both sockets")
        assert {len(f) for f in sink.frames["/all"]} == {640}
        assert {len(f) for f in sink.frames["/low"]} == {320}

        mixed, rate = sink.samples("/all", 2, 16000)
        assert np.abs(mixed).max() > 3000, "the mix is not silent"
        assert tone_level(mixed, rate, 440) > -6, "the first stream is in the mix"
        assert tone_level(mixed, rate, 1000) > -6, "a stream published after the connector started is in the mix"
        low, rate = sink.samples("/low", 2, 8000)
        assert np.abs(low).max() > 3000
        assert tone_level(low, rate, 440) == 0
        assert tone_level(low, rate, 1000) < -40, "a stream the connector did not ask for is not in its mix"

        # Force disconnect ends the connector: its socket closes, the session sees the connection go.
        await asyncio.to_thread(ot.force_disconnect, sid, everything.connectionId)
        await until(sink.closed["/all"].is_set, 5, "the connector's socket to close")
        gone = await asyncio.to_thread(watcher.wait_push, "video:connectionDestroyed",
                                       where=lambda b: b["connection"]["connectionId"] == everything.connectionId)
        assert gone["reason"] == "forceDisconnected"
        assert not sink.closed["/low"].is_set()
        # Its one stream ends: the connector stays, with a steady stream of silence, until it is disconnected.
        await asyncio.to_thread(peer440.request, "video:unpublish", {"streamId": s440})
        await asyncio.to_thread(watcher.wait_push, "video:streamDestroyed", where=lambda b: b["stream"]["streamId"] == s440)
        count = len(sink.frames["/low"])
        await until(lambda: len(sink.frames["/low"]) >= count + 50, 5, "a second more on the connector")
        quiet, _ = sink.samples("/low", 0.5, 8000)
        assert np.abs(quiet).max() < 50
        await asyncio.to_thread(ot.force_disconnect, sid, only_low.connectionId)
        await until(sink.closed["/low"].is_set, 5, "the second connector's socket to close")
        await until(lambda: connectors(server) == 0, 5, "the connectors gauge back at 0")
    finally:
        for pc in pcs:
            await pc.close()
        for p in peers + [watcher]:
            p.close()


async def subscribe_stream(peer, stream_id):
    """An aiortc peer receiving one stream through `peer`'s connection; returns (pc, its track once it arrives)."""
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    tracks = []
    pc.on("track", tracks.append)
    offer = await asyncio.to_thread(peer.request, "video:subscribe", {"streamId": stream_id})
    await pc.setRemoteDescription(RTCSessionDescription(sdp=offer["offer"], type="offer"))
    await pc.setLocalDescription(await pc.createAnswer())
    await asyncio.to_thread(peer.request, "video:subscribe:answer", {"streamId": stream_id, "answer": pc.localDescription.sdp})
    await until(lambda: tracks, 5, "the subscribed track")
    return pc, tracks[0]


@contextlib.asynccontextmanager
async def caller_session(server):
    """A routed session with a signaling-only watcher and an aiortc caller publishing 440 Hz; yields
    (ot, session id, watcher, the peer connections to close afterwards)."""
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    watcher = await asyncio.to_thread(VideoPeer, server, sid, ot.generate_token(sid, data="name=watcher"))
    pc440, peer440, _ = await publish_tone(server, sid, ot.generate_token(sid, data="name=caller"), 440)
    pcs = [pc440]
    try:
        yield ot, sid, watcher, pcs
    finally:
        for pc in pcs:
            await pc.close()
        peer440.close()
        watcher.close()


async def hear(watcher, connection_id, pcs):
    """Subscribes (as the watcher) to the stream `connection_id` publishes; returns its track and 1.5 s of it."""
    created = await asyncio.to_thread(watcher.wait_push, "video:streamCreated",
                                      where=lambda b: b["stream"]["connectionId"] == connection_id)
    pc, track = await subscribe_stream(watcher, created["stream"]["streamId"])
    pcs.append(pc)
    await collect_audio(track, 0.5)
    heard, rate = await collect_audio(track, 1.5)
    return created["stream"], track, heard, rate


def test_bidirectional_connector_publishes_what_its_socket_says(server):
    asyncio.run(_bidirectional(server))


async def _bidirectional(server):
    sink = Sink(talk={"/agent": 660})
    async with caller_session(server) as (ot, sid, watcher, pcs):
        agent = await asyncio.to_thread(ot.connect_audio_to_websocket, sid, ot.generate_token(sid, data="name=agent"),
                                        {"uri": sink.uri("/agent"), "bidirectional": True})
        assert agent.bidirectional is True
        # A subscriber of the agent's stream hears what the socket says, and only that.
        stream, track, heard, rate = await hear(watcher, agent.connectionId, pcs)
        assert stream["hasAudio"] is True and stream["hasVideo"] is False
        assert np.abs(heard).max() > 3000, "the agent's stream is not silent (int16 scale)"
        assert tone_level(heard, rate, 660) == 0 and tone_level(heard, rate, 440) < -40
        # The socket hears the session, not itself.
        await until(lambda: len(sink.frames.get("/agent", [])) >= 100, 5, "two seconds on the agent's socket")
        said, rate = sink.samples("/agent", 1.5, 16000)
        assert tone_level(said, rate, 440) == 0 and tone_level(said, rate, 660) < -40
        # The Voice API's WebSocket commands work here too: notify once what was sent before it has played, clear.
        await asyncio.to_thread(sink.send, "/agent", {"action": "notify", "payload": {"mark": 1}})
        await until(lambda: sink.events["/agent"], 2, "websocket:notify")
        await asyncio.to_thread(sink.send, "/agent", {"action": "clear"})
        await until(lambda: len(sink.events["/agent"]) == 2, 2, "websocket:cleared")
        assert sink.events["/agent"] == [{"event": "websocket:notify", "payload": {"mark": 1}}, {"event": "websocket:cleared"}]

        # Muting the agent's stream (moderation) silences it for its subscribers.
        await asyncio.to_thread(ot.mute_stream, sid, stream["streamId"])
        await collect_audio(track, 0.5)
        muted, _ = await collect_audio(track, 1.0)
        assert np.abs(muted).max() < 50

        # Force disconnect ends the socket and takes the stream with the connection.
        await asyncio.to_thread(ot.force_disconnect, sid, agent.connectionId)
        await until(sink.closed["/agent"].is_set, 5, "the agent's socket to close")
        gone = await asyncio.to_thread(watcher.wait_push, "video:streamDestroyed",
                                       where=lambda b: b["stream"]["streamId"] == stream["streamId"])
        assert gone["reason"] == "forceDisconnected"


def test_json_transport_carries_base64_audio_both_ways(server):
    asyncio.run(_json_transport(server))


async def _json_transport(server):
    sink = Sink(talk={"/bot": 660}, json_fields={"/bot": ("payload", "reply")})
    async with caller_session(server) as (ot, sid, watcher, pcs):
        bot = await asyncio.to_thread(ot.connect_audio_to_websocket, sid, ot.generate_token(sid, data="name=bot"), {
            "uri": sink.uri("/bot"), "bidirectional": True,
            "audio_transport": {"transport": "json", "encoding": "base64", "audio_field": "payload",
                                "receive_audio_field": "reply", "static_fields": {"meeting": "m-1"}}})
        await until(lambda: len(sink.frames.get("/bot", [])) >= 100, 5, "two seconds of JSON messages")
        assert sink.first["/bot"] == {"content-type": "audio/l16;rate=16000"}
        assert {tuple(sorted(t)) for t in sink.texts["/bot"]} == {("meeting", "payload")}
        assert {t["meeting"] for t in sink.texts["/bot"]} == {"m-1"}
        assert {len(f) for f in sink.frames["/bot"]} == {640}
        said, rate = sink.samples("/bot", 1.5, 16000)
        assert tone_level(said, rate, 440) == 0 and tone_level(said, rate, 660) < -40
        # What the socket sent in its JSON messages is the bot's stream.
        _, _, heard, rate = await hear(watcher, bot.connectionId, pcs)
        assert np.abs(heard).max() > 3000 and tone_level(heard, rate, 660) == 0
        await asyncio.to_thread(ot.force_disconnect, sid, bot.connectionId)
        await until(sink.closed["/bot"].is_set, 5, "the bot's socket to close")


def test_connector_far_end_closing_ends_the_connection(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    watcher = VideoPeer(server, sid, ot.generate_token(sid, data="name=watcher"))

    closing = threading.Event()

    async def hang_up_after_first(ws):
        await ws.recv()
        await ws.recv()  # one audio message
        await ws.close()
        closing.set()

    async def serve(ready, box):
        import websockets
        box["server"] = await websockets.serve(hang_up_after_first, "127.0.0.1", 0)
        box["port"] = box["server"].sockets[0].getsockname()[1]
        ready.set()
        await asyncio.sleep(30)

    ready, box = threading.Event(), {}
    threading.Thread(target=lambda: asyncio.run(serve(ready, box)), daemon=True).start()
    assert ready.wait(10)
    connector = ot.connect_audio_to_websocket(sid, ot.generate_token(sid, data="name=bot"),
                                              {"uri": f"ws://127.0.0.1:{box['port']}/x"})
    assert closing.wait(5)
    gone = watcher.wait_push("video:connectionDestroyed", timeout=5,
                             where=lambda b: b["connection"]["connectionId"] == connector.connectionId)
    assert gone["reason"] == "clientDisconnected"
    # Gone from the session: a force disconnect finds nothing.
    with pytest.raises(opentok.exceptions.OpenTokException):
        ot.force_disconnect(sid, connector.connectionId)
    watcher.close()


def test_connector_refuses_bad_requests_with_clear_errors(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    other = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    url = server.http_url + f"/v2/project/{ot.api_key}/connect"

    def post(body):
        return requests.post(url, json=body, headers=ot.get_json_headers(), timeout=15)

    sink = Sink()
    good = {"uri": sink.uri("/refused")}
    token = ot.generate_token(sid)
    cases = [
        ({"token": token, "websocket": good}, "sessionId is required"),
        ({"sessionId": sid, "websocket": good}, "token is required"),
        ({"sessionId": sid, "token": token}, "websocket must be an object"),
        ({"sessionId": sid, "token": token, "websocket": {"uri": "http://127.0.0.1/"}}, "ws:// or wss://"),
        ({"sessionId": sid, "token": token, "websocket": {**good, "audioRate": 44100}}, "8000 or 16000"),
        ({"sessionId": sid, "token": token, "websocket": {**good, "audioTransport": {"transport": "json"}}}, "base64"),
        ({"sessionId": sid, "token": token, "websocket": {**good, "headers": {"x": "y" * 600}}}, "512 bytes"),
        ({"sessionId": sid, "token": token, "websocket": {**good, "streams": []}}, "1 to 50 stream ids"),
        ({"sessionId": sid, "token": token, "websocket": {**good, "streams": ["no-such-stream"]}}, "not in the session"),
        ({"sessionId": sid, "token": ot.generate_token(other), "websocket": good}, "another session"),
        ({"sessionId": sid, "token": ot.generate_token(sid, role=opentok.Roles.publisher_only), "websocket": good},
         "may not subscribe"),
        ({"sessionId": "1_bm8tc3VjaC1zZXNzaW9u", "token": token, "websocket": good}, "not a session of this project"),
    ]
    for body, said in cases:
        r = post(body)
        assert r.status_code == 400, (body, r.status_code, r.text)
        assert said in r.json()["detail"], (body, r.json())
    assert "/refused" not in sink.first, "nothing was opened for a refused request"

    # Nothing listening: refused within the 6 s the connector waits, naming the URI.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"ws://127.0.0.1:{s.getsockname()[1]}/"
    started = time.monotonic()
    r = post({"sessionId": sid, "token": token, "websocket": {"uri": dead}})
    assert r.status_code == 400 and r.json()["code"] == "websocket-failed" and dead in r.json()["detail"]
    assert time.monotonic() - started < 8

    # A relayed session has no mix to take: 409, as the SDK expects.
    relayed = ot.create_session(media_mode=opentok.MediaModes.relayed).session_id
    with pytest.raises(opentok.exceptions.InvalidMediaModeError):
        ot.connect_audio_to_websocket(relayed, ot.generate_token(relayed), good)
    # Another project's credentials: 403.
    r = requests.post(server.http_url + "/v2/project/someone-else/connect", json={}, headers=ot.get_json_headers(), timeout=5)
    assert r.status_code == 403
    assert ot.list_streams(sid).count == 0
