"""Host names in the URLs an application gives the server: its answer and event webhooks, an NCCO `stream`
URL and a WebSocket endpoint are named, not numeric, and the server resolves them as the system does.

The server runs in a mount namespace of its own (rig.start_server `hosts`) whose /etc/hosts names the test's
loopback servers and whose nsswitch.conf reads that file alone: a real lookup through getaddrinfo, no DNS
query leaves the machine, and a name not listed fails at once. `hooks.switchboard.test` resolves to ::1 first,
where nothing listens, then to 127.0.0.1: the server goes on to the next address as a browser would."""

from __future__ import annotations

import os

import numpy as np
import pytest
import requests

from accounts_support import bearer, token
from media_support import dominant_frequency
from phone_support import tone_wav
from rig import start_server, wait_until
from sip_support import api
from test_voice_websocket import SocketPeer
from voice_support import Hooks

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a private /etc/hosts needs root (a mount namespace)")

HOSTS = {"hooks.switchboard.test": ["::1", "127.0.0.1"], "media.switchboard.test": ["127.0.0.1"]}


def named_application(server, answer: str, event: str) -> tuple[str, str]:
    r = api(server, "POST", "/v2/applications", json={"name": "named hooks", "capabilities": {"voice": {"webhooks": {
        "answer_url": {"address": answer, "http_method": "POST"}, "event_url": {"address": event, "http_method": "POST"}}}}})
    assert r.status_code == 201, r.text
    return r.json()["id"], r.json()["keys"]["private_key"]


def call_socket(server, app_id, key, uri) -> str:
    r = requests.post(server.http_url + "/v1/calls", headers={"Authorization": bearer(token(app_id, key))}, timeout=10, json={
        "to": [{"type": "websocket", "uri": uri, "content-type": "audio/l16;rate=16000"}],
        "from": {"type": "phone", "number": "14155550100"}})
    assert r.status_code == 201, r.text
    return r.json()["uuid"]


def test_named_webhooks_stream_url_and_websocket_endpoint():
    server = start_server(https=False, hosts=HOSTS)
    hooks = Hooks()
    peer = SocketPeer(tone=660)
    try:
        named = hooks.url.replace("127.0.0.1", "hooks.switchboard.test")
        hooks.files["/tone.wav"] = tone_wav(800, seconds=3, rate=16000).read_bytes()
        hooks.ncco = lambda req: [{"action": "stream", "streamUrl": [named + "/tone.wav"]}]
        app_id, key = named_application(server, named + "/answer", named + "/event")
        uuid = call_socket(server, app_id, key, f"ws://media.switchboard.test:{peer.port}/socket")
        # The socket at its name opens, the answer webhook at its name is asked, and the streamed file at its
        # name is what the socket hears.
        wait_until(lambda: peer.first is not None, timeout=15, what=lambda: f"socket opened; {hooks.events}\n{server.log()[-3000:]}")
        assert peer.first["content-type"] == "audio/l16;rate=16000"
        wait_until(lambda: len(peer.frames) >= 100, timeout=15, what=lambda: f"2 s of audio; {hooks.events}\n{server.log()[-3000:]}")
        assert hooks.answers and hooks.answers[0]["uuid"] == uuid
        heard = np.concatenate(peer.frames[-75:]).astype(np.float64)
        assert abs(dominant_frequency(heard, 16000) - 800) < 15
        wait_until(lambda: "answered" in hooks.statuses(uuid), timeout=10, what=lambda: f"answered event; {hooks.events}")
        wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=15, what=lambda: f"completed after the stream; {hooks.events}")
        assert hooks.statuses(uuid)[0] == "started"
    finally:
        peer.loop.call_soon_threadsafe(peer.server.close)
        hooks.http.shutdown()
        server.stop()


def test_a_name_that_does_not_resolve_is_a_clear_failure():
    server = start_server(https=False, hosts=HOSTS)
    hooks = Hooks()
    peer = SocketPeer(tone=660)
    try:
        named = hooks.url.replace("127.0.0.1", "hooks.switchboard.test")
        port = hooks.url.rsplit(":", 1)[1]
        app_id, key = named_application(server, f"http://nowhere.switchboard.test:{port}/answer", named + "/event")
        uuid = call_socket(server, app_id, key, f"ws://media.switchboard.test:{peer.port}/socket")
        wait_until(lambda: "failed" in hooks.statuses(uuid), timeout=20, what=lambda: f"failed; {hooks.events}\n{server.log()[-2000:]}")
        errors = [e for e in hooks.events if e.get("type") == "error" and e.get("uuid") == uuid]
        assert errors and "cannot resolve nowhere.switchboard.test" in errors[0]["reason"], hooks.events
        # The server goes on serving: a named webhook still works for the next application.
        assert requests.get(server.http_url + "/health", timeout=5).status_code == 200
    finally:
        peer.loop.call_soon_threadsafe(peer.server.close)
        hooks.http.shutdown()
        server.stop()
