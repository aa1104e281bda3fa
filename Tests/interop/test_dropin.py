"""switchboard-dropin (the reference app server of the drop-in audio rooms app) against a live Switchboard.

Replays the reference iOS client's flow: POST /auth → JWT; GET /rooms; POST /rooms; realtime login with the
JWT; get the conversation; join; members page of 100 ascending; leave. Then Switchboard goes away and the
app server must answer a JSON 502 rather than crash.
"""
import asyncio
import os
import subprocess
import tempfile
import types

import jwt as pyjwt
import pytest
import requests

from conv_support import App, RealtimeClient, Server, binary, free_port, wait_until
from rig import client, client_lines, run_async


@pytest.fixture(scope="module")
def stack():
    s = Server().start()
    a = App(s, name="dropin")
    work = tempfile.mkdtemp(prefix="dropin-")
    key = os.path.join(work, "app.key")
    with open(key, "w") as f:
        f.write(a.private_key)
    port = free_port()
    log = open(os.path.join(work, "dropin.log"), "wb")
    proc = subprocess.Popen([binary("switchboard-dropin", "SWITCHBOARD_DROPIN_BIN"), "--switchboard", s.base, "--app-id", a.id,
                             "--key-file", key, "--listen", f"127.0.0.1:{port}", "--data", os.path.join(work, "dropin.db")],
                            stdout=log, stderr=subprocess.STDOUT, cwd=work)
    base = f"http://127.0.0.1:{port}"

    def up():
        assert proc.poll() is None, open(os.path.join(work, "dropin.log")).read()
        try:
            requests.get(base + "/rooms", timeout=1)
            return True
        except requests.ConnectionError:
            return False
    wait_until(up, timeout=15, what="switchboard-dropin")
    yield s, a, base, proc
    proc.terminate()
    proc.wait(10)
    s.close()


def test_reference_ios_client_flow(stack):
    s, a, dropin, _ = stack
    r = requests.post(dropin + "/auth", json={"name": "alice"})
    assert r.status_code == 200, r.text
    auth = r.json()
    assert auth["name"] == "alice"
    token = auth["jwt"]
    claims = pyjwt.decode(token, options={"verify_signature": False})
    assert claims["sub"] == "alice" and claims["application_id"] == a.id
    assert "/*/conversations/**" in claims["acl"]["paths"] and "/*/sessions/**" in claims["acl"]["paths"]
    # A second login of the same name reuses the user.
    again = requests.post(dropin + "/auth", json={"name": "alice"})
    assert again.status_code == 200, again.text
    users = a.ok("GET", "/v1/users", params={"name": "alice"})["_embedded"]["users"]
    assert len(users) == 1

    assert requests.post(dropin + "/auth", json={}).status_code == 400

    rooms = requests.get(dropin + "/rooms")
    assert rooms.status_code == 200 and isinstance(rooms.json(), list)
    created = requests.post(dropin + "/rooms", json={"display_name": "Friday call"})
    assert created.status_code == 201, created.text
    rid = created.json()["id"]
    assert rid.startswith("CON-")
    assert {"id": rid, "display_name": "Friday call"} in requests.get(dropin + "/rooms").json()
    conv = a.ok("GET", f"/v1/conversations/{rid}")
    assert conv["properties"]["ttl"] > 0

    bearer = {"Authorization": "Bearer " + token}

    async def client():
        rt = await RealtimeClient.connect(s, token)
        assert rt.login["body"]["user"]["name"] == "alice"
        # The client SDK reads the conversation, then joins it.
        got = requests.get(f"{s.base}/v1/conversations/{rid}", headers=bearer)
        assert got.status_code == 200 and got.json()["display_name"] == "Friday call"
        j = requests.post(f"{s.base}/v1/conversations/{rid}/members", headers=bearer,
                          json={"state": "joined", "user": {"name": "alice"}, "channel": {"type": "app"}})
        assert j.status_code == 201, j.text
        member_id = j.json()["id"]
        ev = await rt.wait_for(lambda m: m.get("type") == "member:joined")
        assert ev["conversation_id"] == rid and ev["body"]["member_id"] == member_id and ev["body"]["user"]["name"] == "alice"

        page = requests.get(f"{s.base}/v1/conversations/{rid}/members", headers=bearer, params={"page_size": 100, "order": "asc"})
        assert page.status_code == 200, page.text
        members = page.json()["_embedded"]["members"]
        assert page.json()["page_size"] == 100
        assert [(m["id"], m["_embedded"]["user"]["name"], m["state"]) for m in members] == [(member_id, "alice", "JOINED")]

        left = requests.patch(f"{s.base}/v1/conversations/{rid}/members/me", headers=bearer, json={"state": "left"})
        assert left.status_code == 200 and left.json()["state"] == "LEFT"
        ev = await rt.wait_for(lambda m: m.get("type") == "member:left")
        assert ev["body"]["member_id"] == member_id
        await rt.close()

    run_async(client(), 30)


def test_swift_sdk_clients_drop_in_through_the_app_server(stack):
    """The Swift SDK's rooms flow against the reference app server: each `switchboard client room join` logs in
    through its `/auth`, finds the room by name in `/rooms` (the first one creates it) and joins; they hear each other."""
    s, _, dropin, _ = stack
    server = types.SimpleNamespace(http_url=s.base)
    carol = client(server, "room", "join", "Standup", "--as", "carol", "--app", dropin, "--play", "tone:440", seconds=12)
    wait_until(lambda: any(r["display_name"] == "Standup" for r in requests.get(dropin + "/rooms", timeout=5).json()),
               timeout=15, what="the room created through the app server")
    dave = client(server, "room", "join", "Standup", "--as", "dave", "--app", dropin, "--play", "tone:880", seconds=6)
    a, b = client_lines(carol), client_lines(dave)
    room = next(l["joined"] for l in a if "joined" in l)
    assert next(l["joined"] for l in b if "joined" in l) == room
    assert [r["id"] for r in requests.get(dropin + "/rooms", timeout=5).json() if r["display_name"] == "Standup"] == [room]
    a_member = next(l["member"] for l in a if "joined" in l)
    b_member = next(l["member"] for l in b if "joined" in l)
    assert any(l.get("event") == "member:joined" and l.get("user") == "dave" for l in a), a
    heard_by_dave = next(l for l in b if l.get("heard") == a_member)
    heard_by_carol = next(l for l in a if l.get("heard") == b_member)
    assert abs(heard_by_dave["frequency"] - 440) < 40 and heard_by_dave["frames"] > 50, heard_by_dave
    assert abs(heard_by_carol["frequency"] - 880) < 60, heard_by_carol


def test_switchboard_down_is_a_json_502(stack):
    s, _, dropin, proc = stack
    s.stop()
    for method, path, body in [("GET", "/rooms", None), ("POST", "/rooms", {"display_name": "x"}), ("POST", "/auth", {"name": "bob"})]:
        r = requests.request(method, dropin + path, json=body, timeout=15)
        assert r.status_code == 502, (path, r.status_code, r.text)
        assert r.headers["Content-Type"].startswith("application/") and "json" in r.headers["Content-Type"]
        assert r.json()["code"] == "upstream-error"
    assert proc.poll() is None, "the app server must keep running"
    # And it recovers once Switchboard is back.
    s.start()
    assert requests.get(dropin + "/rooms", timeout=15).status_code == 200
