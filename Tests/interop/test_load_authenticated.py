"""`switchboard load` on the authenticated path, against a production server (no --dev): every member is
a user of an application with its own JWT, logs in over /v1/realtime and joins with rtc:* (or video:*);
the media it then sends is forwarded without loss, and the server's own records show the members."""

import json
import subprocess
import time

import jwt as pyjwt
import pytest
import requests

from rig import server_binary, start_server


@pytest.fixture
def server():
    s = start_server(https=False)
    yield s
    s.cleanup()


def account(server):
    acc = json.loads((server.data_dir / "account.json").read_text())
    return acc["api_key"], acc["api_secret"]


def run_load(server, *args, timeout=120):
    run = subprocess.run([str(server_binary()), "load", "--server", server.http_url, "--warmup", "1", "--duration", "3",
                          "--json", *args], capture_output=True, text=True, timeout=timeout)
    return run


def test_rooms_through_real_logins_forward_every_packet_and_the_members_are_on_record(server, tmp_path):
    # The application is made here, over the Applications API, and handed to the load command to reuse.
    made = requests.post(server.http_url + "/v2/applications", auth=account(server),
                         json={"name": "load-test", "capabilities": {}}, timeout=10)
    assert made.status_code == 201, made.text
    app = made.json()
    key_file = tmp_path / "app.key"
    key_file.write_text(app["keys"]["private_key"])

    run = run_load(server, "--data", str(server.data_dir), "--app-id", app["id"], "--key-file", str(key_file),
                   "--rooms", "1", "--publishers", "2", "--subscribers", "3")
    assert run.returncode == 0, run.stderr
    r = json.loads(run.stdout.strip().splitlines()[-1])
    assert r["signaling"] == "authenticated", r
    assert r["application_id"] == app["id"]
    # 2 speakers x 3 listeners x 50 packets/s, every one received in order.
    assert r["loss_percent"] == 0, r
    assert r["received_packets_per_s"] > 0.8 * 300, r
    assert r["members_joined"] == 5 and r["server_members_joined"] == 5, r
    assert r["join_ms_p50"] > 0, r

    # The server's events say the same: five users joined, two of them turned their audio on.
    token = pyjwt.encode({"application_id": app["id"], "iat": int(time.time()), "exp": int(time.time()) + 300,
                          "jti": str(time.time())}, app["keys"]["private_key"], algorithm="RS256")
    [cid] = r["conversations"]
    events = requests.get(f"{server.http_url}/v1/conversations/{cid}/events", params={"page_size": 100},
                          headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert events.status_code == 200, events.text
    items = events.json()["_embedded"]["events"]
    joined = {e["body"]["user"]["name"] for e in items if e["type"] == "member:joined"}
    assert len(joined) == 5, joined
    media_on = [e for e in items if e["type"] == "member:media" and e["body"].get("audio") is True]
    assert len(media_on) == 2, [e["type"] for e in items]


def test_video_one_to_one_sessions_through_video_tokens(server):
    # Two sessions of two connections that each publish audio and video and receive the other's stream.
    run = run_load(server, "--data", str(server.data_dir), "--video", "--video-kbps", "300",
                   "--rooms", "2", "--publishers", "2", "--legs")
    assert run.returncode == 0, run.stderr
    r = json.loads(run.stdout.strip().splitlines()[-1])
    assert r["signaling"] == "authenticated" and len(r["video_sessions"]) == 2, r
    assert r["members_joined"] == 4, r
    assert r["consumers"] == 8, r  # each of 4 connections receives one stream of 2 tracks
    assert r["loss_percent"] == 0, r
    # Audio 50 packets/s plus the synthetic video's packets, received by one peer per stream.
    assert r["received_packets_per_s"] > 0.8 * r["sent_packets_per_s"], r


def test_wrong_account_credentials_fail_clearly(server):
    run = run_load(server, "--api-key", "nobody", "--api-secret", "wrong", "--subscribers", "1", timeout=30)
    assert run.returncode != 0
    assert "401" in run.stderr, run.stderr


def test_development_routes_are_not_served_in_production(server):
    run = run_load(server, "--dev-routes", "--subscribers", "1", "--timeout", "20", timeout=30)
    assert run.returncode != 0
    assert "404" in run.stderr, run.stderr
