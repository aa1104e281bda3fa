"""`switchboard client room join` and `switchboard client video join`: headless clients on the
Swift SDK against a real server, checked by what they print."""
import json
import subprocess
import time

import pytest
import requests

from rig import REPO, client, client_lines as lines, server_binary, start_server
from video_support import dev_session, dev_token
from voice_support import Hooks, application, user_jwt


@pytest.fixture(scope="module")
def server():
    s = start_server(dev=True, https=False)
    yield s
    s.stop()
    s.cleanup()


def test_two_room_clients_hear_each_others_tones_and_record(server, tmp_path):
    room = requests.post(server.http_url + "/rooms/api/rooms", json={"display_name": "cli-room"}).json()["id"]
    out = tmp_path / "bob.wav"
    alice = client(server, "room", "join", room, "--as", "alice", "--play", "tone:440")
    bob = client(server, "room", "join", room, "--as", "bob", "--play", "tone:880", "--record", str(out))
    a, b = lines(alice), lines(bob)
    a_member = next(l["member"] for l in a if "joined" in l)
    b_member = next(l["member"] for l in b if "joined" in l)
    # Whoever joined first sees the other join.
    assert any(l.get("event") == "member:joined" and l.get("user") == "bob" for l in a) or \
        any(l.get("event") == "member:joined" and l.get("user") == "alice" for l in b)
    heard_by_bob = next(l for l in b if l.get("heard") == a_member)
    heard_by_alice = next(l for l in a if l.get("heard") == b_member)
    assert abs(heard_by_bob["frequency"] - 440) < 40 and heard_by_bob["frames"] > 50
    assert abs(heard_by_alice["frequency"] - 880) < 60
    assert out.stat().st_size > 44 + 48000 * 2


def test_video_client_publishes_a_recording_another_receives(server):
    sid = dev_session(server)
    token = lambda name: dev_token(server, sid, name)
    ivf = REPO / "Tests" / "Fixtures" / "media" / "vp8-320x240.ivf"
    viewer = client(server, "video", "join", sid, "--token", token("bob"), seconds=8)
    # Its own link judged too (on loopback it carries the video: no fallback event).
    publisher = client(server, "video", "join", sid, "--token", token("alice"), "--publish", str(ivf), "--audio-fallback", seconds=6)
    p, v = lines(publisher), lines(viewer)
    published = next(l["published"] for l in p if "published" in l)
    assert any(l.get("event", "").startswith(f"streamCreated {published}") for l in v)
    received = next(l for l in v if l.get("received") == published)
    assert received["frames"] > 60 and received["keyframes"] >= 1
    assert not [l for l in p if l.get("event", "").startswith("publisher ")], p


def test_video_client_that_connects_after_a_stream_was_published_sees_it_created(server):
    """A stream published before a client connected is created for that client too (as OpenTok clients see it)."""
    sid = dev_session(server)
    token = lambda name: dev_token(server, sid, name)
    ivf = REPO / "Tests" / "Fixtures" / "media" / "vp8-320x240.ivf"
    publisher = client(server, "video", "join", sid, "--token", token("alice"), "--publish", str(ivf), seconds=12)
    time.sleep(3)
    viewer = client(server, "video", "join", sid, "--token", token("bob"), seconds=4)
    v, p = lines(viewer), lines(publisher)
    published = next(l["published"] for l in p if "published" in l)
    assert sum(l.get("event", "").startswith(f"streamCreated {published}") for l in v) == 1
    received = next(l for l in v if l.get("received") == published)
    assert received["frames"] > 20 and received["keyframes"] >= 1


def voice_app(server, hooks):
    """An application whose answer and event URLs are `hooks`, and a function that makes a user and its token."""
    app_id, key = application(server, hooks)
    return lambda name: user_jwt(server, app_id, key, name)


def answering(ncco) -> Hooks:
    """Webhooks that answer every call with `ncco`."""
    hooks = Hooks()
    hooks.ncco = lambda request: ncco
    return hooks


def test_cli_call_placed_answered_and_hung_up(server):
    hooks = answering([{"action": "connect", "endpoint": [{"type": "app", "user": "bob"}]}])
    try:
        user = voice_app(server, hooks)
        alice_token, bob_token = user("alice"), user("bob")
        base = [str(server_binary()), "client", "call", "--server", server.http_url, "--json"]
        bob = subprocess.Popen(base + ["--answer", "--as", "bob", "--token", bob_token, "--seconds", "30"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = json.loads(bob.stdout.readline())
        assert first["event"] == "waiting"
        alice = subprocess.Popen(base + ["bob", "--as", "alice", "--token", alice_token, "--seconds", "4", "--dtmf", "12"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        a = lines(alice)
        b = [first] + lines(bob)
        call = next(l["call_id"] for l in a if l["event"] == "placed")
        invite = next(l for l in b if l["event"] == "call:invite")
        assert invite["from"] == "alice" and invite["from_type"] == "app"
        assert any(l["event"] == "answered" and l["call_id"] == invite["call_id"] for l in b)
        assert any(l["event"] == "leg:status" and l["leg_id"] == invite["call_id"] and l["status"] == "answered" for l in a)
        assert a[-1] == {"event": "call:hangup", "call_id": call, "reason": "localHangup"}
        assert b[-1] == {"event": "call:hangup", "call_id": invite["call_id"], "reason": "remoteHangup"}
        deadline = time.time() + 10
        while hooks.statuses(call) != ["started", "ringing", "answered", "completed"] and time.time() < deadline:
            time.sleep(0.1)
        assert hooks.statuses(call) == ["started", "ringing", "answered", "completed"]
        assert hooks.statuses(invite["call_id"]) == ["started", "ringing", "answered", "completed"]
    finally:
        hooks.http.shutdown()


def test_cli_call_nobody_answers(server):
    hooks = answering([{"action": "connect", "timeout": 3, "endpoint": [{"type": "app", "user": "carol"}]}])
    try:
        user = voice_app(server, hooks)
        user("carol")
        alice = subprocess.Popen([str(server_binary()), "client", "call", "carol", "--as", "alice", "--token", user("alice"),
                                  "--server", server.http_url, "--json", "--seconds", "30"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        a = lines(alice)
        call = next(l["call_id"] for l in a if l["event"] == "placed")
        assert a[-1] == {"event": "call:hangup", "call_id": call, "reason": "remoteNoAnswerTimeout"}
        callee = next(l["leg_id"] for l in a if l["event"] == "leg:status" and l["leg_id"] != call)
        assert [l["status"] for l in a if l["event"] == "leg:status" and l["leg_id"] == callee][-1] == "timeout"
    finally:
        hooks.http.shutdown()
