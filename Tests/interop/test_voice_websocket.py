"""NCCO `connect` to a websocket endpoint: the server opens the socket, sends its JSON first message, then 20 ms
L16 messages both ways through the conversation's mix — the app user's 440 Hz reaches the socket, the socket's
660 Hz reaches the user. Runs without a SIP edge."""

from __future__ import annotations

import asyncio
import json
import threading

import numpy as np
import pytest

from media_support import collect_audio, dominant_frequency
from rig import serve_websocket, start_server
from rooms_support import wait_for
from voice_support import Hooks, application, user_calls


class SocketPeer:
    """A WebSocket server on loopback standing in for an application's media server."""

    def __init__(self, tone=660, rate=16000):
        self.first = None
        self.frames = []
        self.sizes = set()
        self.closed = threading.Event()
        self.tone, self.rate = tone, rate
        self.loop, self.server, self.port = serve_websocket(self._handle)

    async def _handle(self, ws):
        self.first = json.loads(await ws.recv())
        sender = asyncio.ensure_future(self._send(ws))
        try:
            async for message in ws:
                if isinstance(message, bytes):
                    self.sizes.add(len(message))
                    self.frames.append(np.frombuffer(message, dtype="<i2"))
        finally:
            sender.cancel()
            self.closed.set()

    async def _send(self, ws):
        n = self.rate // 50
        t = 0
        while True:
            samples = (0.3 * 32767 * np.sin(2 * np.pi * self.tone * (np.arange(n) + t) / self.rate)).astype("<i2")
            t += n
            await ws.send(samples.tobytes())
            await asyncio.sleep(0.02)


def test_connect_to_websocket_streams_l16_both_ways():
    server = start_server(https=False)
    peer = SocketPeer()
    try:
        hooks = Hooks()
        app_id, key = application(server, hooks)
        uri = f"ws://127.0.0.1:{peer.port}/socket"
        hooks.ncco = lambda req: [{"action": "connect", "endpoint": [{"type": "websocket", "uri": uri,
                                                                      "content-type": "audio/l16;rate=16000",
                                                                      "headers": {"caller": req.get("from_user", "")}}]}]
        asyncio.run(_talk_to_socket(server, hooks, app_id, key, peer))
    finally:
        server.stop()


async def _talk_to_socket(server, hooks, app_id, key, peer):
    rt, created, member = await user_calls(server, app_id, key, "alice", "assistant")
    await wait_for(lambda: peer.first is not None, timeout=10, what=lambda: f"websocket opened; {hooks.events}\n{server.log()[-2000:]}")
    assert peer.first == {"event": "websocket:connected", "content-type": "audio/l16;rate=16000", "caller": "alice"}
    legs = lambda: list(dict.fromkeys(e["uuid"] for e in hooks.events if "status" in e))
    await wait_for(lambda: len(legs()) == 2 and "answered" in hooks.statuses(legs()[1]), timeout=10, what=lambda: f"answered; {hooks.events}")
    await wait_for(lambda: member.tracks, timeout=10, what="mix track")
    samples, rate = await collect_audio(next(iter(member.tracks.values())), 3.0)
    heard = dominant_frequency(samples[-rate:], rate)
    assert abs(heard - 660) < 15, f"the user heard {heard} Hz"
    assert peer.sizes == {640}, peer.sizes
    received = np.concatenate(peer.frames[-100:]).astype(np.float64)
    assert abs(dominant_frequency(received, 16000) - 440) < 15
    await rt.request("call:hangup", {"call_id": created["call_id"]})
    await wait_for(lambda: peer.closed.is_set(), timeout=10, what="socket closed")
    await wait_for(lambda: "completed" in hooks.statuses(legs()[1]), timeout=10, what=lambda: f"completed; {hooks.events}")
    await member.close()
    await rt.close()
