"""`switchboard client room join` and `switchboard client video join`: headless clients on the
Swift SDK against a real server, checked by what they print."""
import json
import subprocess
from pathlib import Path

import pytest
import requests

from rig import REPO, server_binary, start_server


@pytest.fixture(scope="module")
def server():
    s = start_server(dev=True, https=False)
    yield s
    s.stop()
    s.cleanup()


def client(server, *args, seconds=6):
    return subprocess.Popen([str(server_binary()), "client", *args, "--server", server.http_url, "--seconds", str(seconds), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def lines(proc):
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return [json.loads(l) for l in out.splitlines() if l.strip()]


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
    sid = requests.post(server.http_url + "/video/api/session").json()["sessionId"]
    token = lambda name: requests.post(server.http_url + "/video/api/token",
                                       json={"sessionId": sid, "role": "publisher", "data": f"name={name}"}).json()["token"]
    ivf = REPO / "Tests" / "Fixtures" / "media" / "vp8-320x240.ivf"
    viewer = client(server, "video", "join", sid, "--token", token("bob"), seconds=8)
    publisher = client(server, "video", "join", sid, "--token", token("alice"), "--publish", str(ivf), seconds=6)
    p, v = lines(publisher), lines(viewer)
    published = next(l["published"] for l in p if "published" in l)
    assert any(l.get("event", "").startswith(f"streamCreated {published}") for l in v)
    received = next(l for l in v if l.get("received") == published)
    assert received["frames"] > 60 and received["keyframes"] >= 1
