"""A bad network between a client and the server: loss, jitter with reordering, a blackout.

The impairment sits in a relay the test owns (this kernel has no netem qdisc, `tc qdisc add … netem`
answers "Specified qdisc kind is unknown", so packets are dropped, delayed and reordered in user space).
A listener's media goes through a UDP relay: the server's ICE candidate in the listener's offer is
rewritten to the relay's address, so every datagram between them (STUN checks and consent, SRTP, SRTCP)
crosses it. A realtime client's WebSocket goes through a TCP relay that can cut every connection."""
import asyncio
import random
import re
import time

import numpy as np
import pytest
import requests

from conv_support import App, RealtimeClient, Server
from faults_support import names
from rig import start_server
from rooms_support import (AudioMember, Realtime, auth, collect_audio, create_room, dominant_frequency, loopback_ice,
                           sine_track, wait_for)


class _Datagrams(asyncio.DatagramProtocol):
    def __init__(self, on_packet):
        self.on_packet = on_packet

    def datagram_received(self, data, addr):
        self.on_packet(data, addr)


class UDPImpairment:
    """Relays datagrams between one client and `target`, dropping a `loss` fraction, delaying each by up
    to `jitter` seconds (so later packets overtake earlier ones), and dropping everything in a blackout."""

    def __init__(self, target):
        self.target = target
        self.loss = 0.0
        self.jitter = 0.0
        self.blackout_until = 0.0
        self.client = None
        self.passed = self.dropped = 0
        self.random = random.Random(7)

    async def start(self):
        loop = asyncio.get_running_loop()
        self.loop = loop
        self.down, _ = await loop.create_datagram_endpoint(lambda: _Datagrams(self._from_client), local_addr=("127.0.0.1", 0))
        self.up, _ = await loop.create_datagram_endpoint(lambda: _Datagrams(self._from_server), local_addr=("127.0.0.1", 0))
        self.port = self.down.get_extra_info("sockname")[1]
        return self

    def _from_client(self, data, addr):
        self.client = addr
        self._forward(data, lambda d: self.up.sendto(d, self.target))

    def _from_server(self, data, addr):
        if self.client:
            self._forward(data, lambda d: self.down.sendto(d, self.client))

    def _forward(self, data, send):
        if time.monotonic() < self.blackout_until or self.random.random() < self.loss:
            self.dropped += 1
            return
        self.passed += 1
        if self.jitter:
            self.loop.call_later(self.random.uniform(0, self.jitter), send, data)
        else:
            send(data)

    def close(self):
        self.down.close()
        self.up.close()


class ImpairedListener(AudioMember):
    """An AudioMember whose subscribe connection reaches the server only through a UDPImpairment."""

    relay = None

    async def _apply(self, offer, tracks):
        match = re.search(r"a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 (\d+) typ host", offer)
        assert match, "no loopback host candidate in the server's offer"
        if self.relay is None:
            self.relay = await UDPImpairment(("127.0.0.1", int(match.group(1)))).start()
        offer = offer.replace(f" 127.0.0.1 {match.group(1)} typ host", f" 127.0.0.1 {self.relay.port} typ host")
        await super()._apply(offer, tracks)


class Recorder:
    """Reads a remote audio track continuously and keeps (arrival time, samples) per frame."""

    def __init__(self, track):
        self.frames = []
        self.task = asyncio.create_task(self._run(track))

    async def _run(self, track):
        while True:
            try:
                frame = await track.recv()
            except Exception:
                return
            data = frame.to_ndarray()
            mono = data.reshape(-1, len(frame.layout.channels))[:, 0] if data.shape[0] == 1 else data[0]
            self.frames.append((time.monotonic(), mono.astype(np.float64), frame.sample_rate))

    def window(self, start, end):
        picked = [(s, r) for t, s, r in self.frames if start <= t < end]
        if not picked:
            return np.zeros(0), 48000
        return np.concatenate([s for s, _ in picked]), picked[0][1]


@pytest.fixture(scope="module")
def rooms_server():
    s = start_server(["--media-port", "0"], https=False, dev=True)
    yield s
    s.stop()
    s.cleanup()


@pytest.mark.slow
def test_room_audio_survives_loss_jitter_reordering_and_recovers_after_a_blackout(rooms_server):
    """A speaker sends a 440 Hz tone; a listener receives it through a relay that applies, in turn, 10 %
    loss, 20 % loss, 50 ms of jitter (reordering), and a 3 s blackout. In every impaired phase but the
    blackout the listener keeps receiving packets and the tone stays 440 Hz; during the blackout nothing
    arrives; within 3 s after it the tone is back, on the same transport (no new negotiation)."""
    loopback_ice()
    api = rooms_server.http_url + "/rooms/api"
    room = create_room(api, "Impaired")

    async def member(name, cls=AudioMember):
        rt = await Realtime(rooms_server.ws_url).connect()
        await rt.login(auth(api, name)["jwt"])
        joined = await rt.request("rtc:join", {"conversation_id": room})
        return rt, cls(rt, room), joined["member_id"]

    async def scenario():
        speaker_rt, speaker, speaker_id = await member("speaker")
        await speaker.publish(sine_track(440.0))
        listener_rt, listener, _ = await member("listener", ImpairedListener)
        await listener.subscribe()
        await wait_for(lambda: listener.track_of(speaker_id) is not None, timeout=20, what="the speaker's track")
        recorder = Recorder(listener.track_of(speaker_id))
        relay = listener.relay
        await asyncio.sleep(2.0)
        offers_before = listener.offers
        results = {}

        async def phase(name, seconds, loss=0.0, jitter=0.0, blackout=False):
            relay.loss, relay.jitter = loss, jitter
            if blackout:
                relay.blackout_until = time.monotonic() + seconds
            before = (await listener.packets_by_member()).get(speaker_id, 0)
            start = time.monotonic()
            await asyncio.sleep(seconds)
            after = (await listener.packets_by_member()).get(speaker_id, 0)
            # Frames decoded in the second half of the phase (the jitter buffer has adapted by then).
            samples, rate = recorder.window(start + seconds / 2, time.monotonic())
            results[name] = {"packets": after - before, "seconds": seconds,
                             "tone": dominant_frequency(samples, rate) if len(samples) > 4800 else None}

        await phase("clean", 3)
        await phase("loss10", 4, loss=0.10)
        await phase("loss20", 4, loss=0.20)
        await phase("jitter50ms", 4, jitter=0.050)
        await phase("blackout", 3, blackout=True)
        relay.loss = relay.jitter = 0.0
        await phase("recovered", 3)
        offers_after = listener.offers
        recorder.task.cancel()
        for m in (speaker, listener):
            await m.close()
        for rt in (speaker_rt, listener_rt):
            await rt.close()
        relay.close()
        return results, offers_before, offers_after, relay.dropped

    results, offers_before, offers_after, dropped = asyncio.run(asyncio.wait_for(scenario(), 120))
    print(results, "relay dropped", dropped)
    # Opus at 20 ms: 50 packets a second leave the SFU.
    for name, keep in (("clean", 1.0), ("loss10", 0.9), ("loss20", 0.8), ("jitter50ms", 1.0), ("recovered", 1.0)):
        r = results[name]
        expected = 50 * r["seconds"] * keep
        assert r["packets"] >= 0.6 * expected, f"{name}: {r['packets']} packets in {r['seconds']}s, expected ~{expected:.0f}"
        assert r["tone"] is not None and abs(r["tone"] - 440) < 15, f"{name}: heard {r['tone']} Hz"
    assert results["blackout"]["packets"] <= 5, results["blackout"]
    assert offers_after == offers_before, "the listener was renegotiated: media did not recover on its transport"


def test_realtime_session_resumes_after_its_connection_is_cut_for_three_seconds():
    """A realtime client's connection goes through a relay that cuts it (RST) and refuses reconnects for
    3 s while 5 events are posted. After the blackout the client reconnects, sends session:resume with the
    last event id it processed, and gets exactly the 5 missed events, in order, then live ones."""
    s = Server().start()
    relay_server = None

    async def scenario():
        nonlocal relay_server
        app = App(s)
        [user] = names("resume", 1)
        app.user(user)
        cid = app.conversation()["id"]
        app.join(cid, user)
        conns = []
        blocked = {"until": 0.0}

        async def handle(reader, writer):
            if time.monotonic() < blocked["until"]:
                writer.transport.abort()
                return
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", s.port)
            conns.extend([writer, up_writer])

            async def pipe(r, w):
                try:
                    while data := await r.read(65536):
                        w.write(data)
                        await w.drain()
                except (ConnectionError, OSError):
                    pass
                finally:
                    w.transport.abort()
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

        relay_server = await asyncio.start_server(handle, "127.0.0.1", 0)
        relay_port = relay_server.sockets[0].getsockname()[1]

        class Via:
            ws_url = f"ws://127.0.0.1:{relay_port}/v1/realtime"

        client = await RealtimeClient.connect(Via, token=app.token(user))
        session_id = client.session_id

        def post(text):
            return app.ok("POST", f"/v1/conversations/{cid}/events", sub=user, json={"type": "text", "body": {"text": text}})

        last = post("before")["id"]
        await client.wait_for(lambda m: m.get("id") == last and m.get("type") == "text", timeout=5)
        blocked["until"] = time.monotonic() + 3
        for w in conns:
            w.transport.abort()
        missed = [post(f"missed-{i}")["id"] for i in range(5)]
        await asyncio.sleep(max(0.0, blocked["until"] - time.monotonic()) + 0.1)
        again = await RealtimeClient.connect(Via)
        reply = await again.request("session:resume", {"session_id": session_id, "last_event_ids": {cid: last}})
        assert reply["type"] == "session:success" and reply["body"]["resumed"] is True, reply
        assert reply["body"]["replayed"] == 5 and reply["body"]["incomplete"] == []
        replayed = await again.wait_for(lambda m: m.get("type") == "text" and m.get("id") in missed, count=5, timeout=5)
        live = post("after")["id"]
        await again.wait_for(lambda m: m.get("id") == live, timeout=5)
        texts = [m["id"] for m in again.messages if m.get("type") == "text"]
        await again.close()
        await client.close()
        return [m["id"] for m in replayed], missed, texts, live

    try:
        replayed, missed, texts, live = asyncio.run(asyncio.wait_for(scenario(), 60))
        assert replayed == missed
        assert texts == missed + [live], f"duplicates or gaps: {texts}"
    finally:
        if relay_server:
            relay_server.close()
        s.kill()
        s.close()
