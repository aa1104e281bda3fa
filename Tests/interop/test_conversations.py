"""Conversation API v1 (+ legacy shapes), access rules, durability and event webhooks, over real sockets."""
import http.server
import json
import socket
import threading
import time
import uuid

import pytest
import requests
import vonage_jwt
import jwt as pyjwt
import hashlib

from conv_support import App, Server, relative, wait_until, server, app  # noqa: F401 (fixtures)


def names(prefix, n):
    tag = uuid.uuid4().hex[:6]
    return [f"{prefix}{tag}{i:03d}" for i in range(n)]


# ---------- conversations ----------

def test_conversation_create_get_update_delete(app):
    c = app.conversation(name="lobby-" + uuid.uuid4().hex[:6], display_name="Lobby", image_url="https://example.com/l.png",
                         properties={"ttl": 600, "custom_data": {"floor": 3}})
    assert c["id"].startswith("CON-")
    assert c["display_name"] == "Lobby" and c["state"] == "ACTIVE"
    assert c["properties"]["ttl"] == 600 and c["properties"]["custom_data"] == {"floor": 3}

    dup = app.call("POST", "/v1/conversations", json={"name": c["name"]})
    assert dup.status_code == 409, dup.text

    got = app.ok("GET", f"/v1/conversations/{c['id']}")
    assert got["id"] == c["id"] and got["name"] == c["name"]

    upd = app.ok("PUT", f"/v1/conversations/{c['id']}", json={"display_name": "Big lobby"})
    assert upd["display_name"] == "Big lobby" and upd["name"] == c["name"]

    listed = [x["id"] for p in app.walk("/v1/conversations", page_size=100) for x in p["_embedded"]["conversations"]]
    assert c["id"] in listed

    assert app.call("DELETE", f"/v1/conversations/{c['id']}").status_code == 204
    assert app.call("GET", f"/v1/conversations/{c['id']}").status_code == 404


def test_unknown_conversation_is_404(app):
    for method, path in [("GET", ""), ("GET", "/members"), ("GET", "/events"), ("DELETE", "")]:
        r = app.call(method, f"/v1/conversations/CON-{uuid.uuid4()}{path}")
        assert r.status_code == 404, (method, path, r.text)
    r = app.call("POST", f"/v1/conversations/CON-{uuid.uuid4()}/events", json={"type": "text", "body": {"text": "hi"}})
    assert r.status_code == 404, r.text


def test_members_join_invite_media_leave_and_me(app):
    alice, bob = names("alice", 1)[0], names("bob", 1)[0]
    ua, ub = app.user(alice), app.user(bob)
    c = app.conversation()
    cid = c["id"]

    m = app.join(cid, alice)
    assert m["id"].startswith("MEM-") and m["state"] == "JOINED"
    assert m["_embedded"]["user"] == {"id": ua["id"], "name": alice, "display_name": alice.title()}
    # Joining again while joined returns the same member.
    assert app.join(cid, alice)["id"] == m["id"]

    inv = app.ok("POST", f"/v1/conversations/{cid}/members", json={"user": {"name": bob}, "state": "invited"})
    assert inv["state"] == "INVITED"
    # A user cannot invite; it joins only as itself.
    r = app.call("POST", f"/v1/conversations/{cid}/members", sub=alice, json={"user": {"id": ub["id"]}, "state": "joined"})
    assert r.status_code == 403, r.text
    # The invited user accepts by joining.
    acc = app.join(cid, bob)
    assert acc["id"] == inv["id"] and acc["state"] == "JOINED"

    me = app.ok("GET", f"/v1/conversations/{cid}/members/me", sub=bob)
    assert me["id"] == inv["id"]

    med = app.ok("PATCH", f"/v1/conversations/{cid}/members/me", sub=alice,
                 json={"media": {"audio_settings": {"enabled": True, "muted": True, "earmuffed": False}}})
    assert med["media"]["audio_settings"] == {"enabled": True, "muted": True, "earmuffed": False}

    left = app.leave(cid, alice)
    assert left["state"] == "LEFT" and "left" in left["timestamp"]

    types = [e["type"] for e in app.ok("GET", f"/v1/conversations/{cid}/events", params={"page_size": 100})["_embedded"]["events"]]
    assert types == ["member:joined", "member:invited", "member:joined", "member:media", "member:left"]

    # Users can read any member of a conversation they are in; a user cannot change another's member.
    r = app.call("PATCH", f"/v1/conversations/{cid}/members/{inv['id']}", sub=alice, json={"state": "left"})
    assert r.status_code == 403, r.text


def test_leaving_twice_is_invalid_member_state(app):
    n = names("leaver", 1)[0]
    app.user(n)
    c = app.conversation()
    m = app.join(c["id"], n)
    app.leave(c["id"], n)
    r = app.call("PATCH", f"/v1/conversations/{c['id']}/members/me", sub=n, json={"state": "left"})
    assert r.status_code == 400 and r.json()["code"] == "invalid-member-state", r.text
    r = app.call("PATCH", f"/v1/conversations/{c['id']}/members/{m['id']}", json={"state": "LEFT"})
    assert r.status_code == 400 and r.json()["code"] == "invalid-member-state", r.text


# ---------- pagination ----------

def check_walks(app, path, key, expected, sub=None):
    """Walks next to the end and prev back, in both orders and a few page sizes; every item exactly once."""
    for order in ("asc", "desc"):
        want = expected if order == "asc" else list(reversed(expected))
        for size in (100, 17):
            pages = app.walk(path, sub=sub, order=order, page_size=size)
            got = [[x["id"] for x in p["_embedded"][key]] for p in pages]
            assert [i for g in got for i in g] == want, (order, size)
            assert all(len(g) == size for g in got[:-1]) and 0 < len(got[-1]) <= size
            assert "prev" not in pages[0]["_links"]
            back = [got[-1]]
            p = pages[-1]
            while "prev" in p["_links"]:
                p = app.ok("GET", relative(p["_links"]["prev"]["href"]), sub=sub)
                back.insert(0, [x["id"] for x in p["_embedded"][key]])
            assert back == got, (order, size)


@pytest.fixture(scope="module")
def crowded(app):
    """A conversation with 105 members (ids in join order) and 130 events."""
    c = app.conversation()
    members = []
    for n in names("crowd", 105):
        app.user(n)
        members.append(app.ok("POST", f"/v1/conversations/{c['id']}/members", json={"user": {"name": n}, "state": "joined"})["id"])
    for i in range(25):
        app.ok("POST", f"/v1/conversations/{c['id']}/events", json={"type": "text", "from": members[i], "body": {"text": f"m{i}"}})
    return c["id"], members


def test_members_pagination_over_100_both_orders(app, crowded):
    cid, members = crowded
    first = app.ok("GET", f"/v1/conversations/{cid}/members", params={"page_size": 100, "order": "asc"})
    assert first["page_size"] == 100 and len(first["_embedded"]["members"]) == 100
    assert "next" in first["_links"] and "cursor=" in first["_links"]["next"]["href"]
    default = app.ok("GET", f"/v1/conversations/{cid}/members")
    assert len(default["_embedded"]["members"]) == 10
    check_walks(app, f"/v1/conversations/{cid}/members", "members", members)


def test_events_pagination_over_100_both_orders(app, crowded):
    cid, _ = crowded
    check_walks(app, f"/v1/conversations/{cid}/events", "events", list(range(1, 131)))
    # A member reads events with its user token as well.
    m = app.ok("GET", f"/v1/conversations/{cid}/members", params={"page_size": 1})["_embedded"]["members"][0]
    check_walks(app, f"/v1/conversations/{cid}/events", "events", list(range(1, 131)), sub=m["_embedded"]["user"]["name"])


def test_page_size_and_cursor_validation(app, crowded):
    cid, _ = crowded
    for path in (f"/v1/conversations/{cid}/members", f"/v1/conversations/{cid}/events", "/v1/conversations"):
        for q in ({"page_size": 101}, {"page_size": 0}, {"page_size": "x"}, {"cursor": "not-a-cursor"},
                  {"cursor": "bm90OmEgY3Vyc29y"}, {"order": "sideways"}):
            r = app.call("GET", path, params=q)
            assert r.status_code == 400, (path, q, r.status_code, r.text)
        assert app.call("GET", path, params={"page_size": 100}).status_code == 200


def test_events_get_and_delete(app):
    n = names("poster", 1)[0]
    app.user(n)
    c = app.conversation()
    m = app.join(c["id"], n)
    e = app.ok("POST", f"/v1/conversations/{c['id']}/events", sub=n, json={"type": "custom:reaction", "body": {"emoji": ":)"}})
    assert e["id"] == 2 and e["from"] == m["id"] and e["type"] == "custom:reaction"
    assert app.ok("GET", f"/v1/conversations/{c['id']}/events/2", sub=n)["body"] == {"emoji": ":)"}
    assert app.call("POST", f"/v1/conversations/{c['id']}/events", sub=n, json={"type": "member:joined"}).status_code == 400
    assert app.call("DELETE", f"/v1/conversations/{c['id']}/events/2", sub=n).status_code == 403
    assert app.call("DELETE", f"/v1/conversations/{c['id']}/events/2").status_code == 204
    assert app.call("GET", f"/v1/conversations/{c['id']}/events/2").status_code == 404
    e3 = app.ok("POST", f"/v1/conversations/{c['id']}/events", sub=n, json={"type": "text", "body": {"text": "after"}})
    assert e3["id"] == 3


# ---------- access rules ----------

def test_user_cannot_post_as_another_member(app):
    a, b = names("pa", 1)[0], names("pb", 1)[0]
    app.user(a), app.user(b)
    c = app.conversation()
    app.join(c["id"], a)
    mb = app.join(c["id"], b)
    r = app.call("POST", f"/v1/conversations/{c['id']}/events", sub=a, json={"type": "text", "from": mb["id"], "body": {"text": "x"}})
    assert r.status_code == 403, r.text
    # The application may post as any member.
    assert app.call("POST", f"/v1/conversations/{c['id']}/events", json={"type": "text", "from": mb["id"], "body": {"text": "x"}}).status_code == 201


def test_user_cannot_read_a_conversation_it_is_not_in(app):
    inside, outside = names("in", 1)[0], names("out", 1)[0]
    app.user(inside), app.user(outside)
    c = app.conversation()
    app.join(c["id"], inside)
    for path in ("/members", "/events", "/events/1", "/members/me"):
        r = app.call("GET", f"/v1/conversations/{c['id']}{path}", sub=outside)
        assert r.status_code in (403, 404) if path == "/members/me" else r.status_code == 403, (path, r.status_code, r.text)
    r = app.call("POST", f"/v1/conversations/{c['id']}/events", sub=outside, json={"type": "text", "body": {}})
    assert r.status_code == 403, r.text
    mine = [x["id"] for x in app.ok("GET", "/v1/conversations", sub=outside, params={"page_size": 100})["_embedded"]["conversations"]]
    assert c["id"] not in mine
    theirs = [x["id"] for x in app.ok("GET", "/v1/conversations", sub=inside, params={"page_size": 100})["_embedded"]["conversations"]]
    assert theirs == [c["id"]]
    # After leaving, reading is over too.
    app.leave(c["id"], inside)
    assert app.call("GET", f"/v1/conversations/{c['id']}/events", sub=inside).status_code == 403
    # Users never change conversations themselves.
    assert app.call("PUT", f"/v1/conversations/{c['id']}", sub=inside, json={"display_name": "mine"}).status_code == 403
    assert app.call("DELETE", f"/v1/conversations/{c['id']}", sub=inside).status_code == 403


def test_nothing_crosses_applications(server, app):
    other = App(server)
    n = names("iso", 1)[0]
    app.user(n)
    c = app.conversation()
    app.join(c["id"], n)
    for path in ("", "/members", "/events", "/events/1"):
        r = other.call("GET", f"/v1/conversations/{c['id']}{path}")
        assert r.status_code == 404, (path, r.text)
    assert other.call("POST", f"/v1/conversations/{c['id']}/members", json={"user": {"name": n}}).status_code == 404
    assert other.call("DELETE", f"/v1/conversations/{c['id']}").status_code == 404
    listed = [x["id"] for x in other.ok("GET", "/v1/conversations", params={"page_size": 100})["_embedded"]["conversations"]]
    assert c["id"] not in listed
    # The same name is free in another application.
    assert other.call("POST", "/v1/conversations", json={"name": c["name"]}).status_code == 201
    # A token whose sub exists only in app A is not a user of app B.
    assert other.call("GET", "/v1/conversations", sub=n).status_code in (401, 403, 404)


def test_legacy_v01_create_and_v02_list(app):
    name = "legacy-" + uuid.uuid4().hex[:6]
    r = app.call("POST", "/v0.1/conversations", json={"name": name, "display_name": "Legacy", "properties": {"ttl": 300}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"id", "href"} and body["id"].startswith("CON-") and body["href"].endswith("/v0.1/conversations/" + body["id"])
    lst = app.ok("GET", "/v0.2/conversations", params={"page_size": 100})
    assert lst["page_size"] == 100 and "_links" in lst
    convs = lst["_embedded"]["data"]["conversations"]
    assert any(c["id"] == body["id"] and c["name"] == name and c["display_name"] == "Legacy" for c in convs)


def test_conversation_with_ttl_disappears_after_everyone_left(app):
    n = names("ttl", 1)[0]
    app.user(n)
    c = app.conversation(properties={"ttl": 2})
    app.join(c["id"], n)
    time.sleep(2.5)
    assert app.call("GET", f"/v1/conversations/{c['id']}").status_code == 200, "a conversation with a member stays"
    app.leave(c["id"], n)
    t0 = time.monotonic()
    wait_until(lambda: app.call("GET", f"/v1/conversations/{c['id']}").status_code == 404, timeout=4.5, what="ttl expiry")
    assert time.monotonic() - t0 >= 1.5


# ---------- durability ----------

def test_events_survive_kill_9():
    s = Server().start()
    try:
        a = App(s)
        users = names("dur", 3)
        for n in users:
            a.user(n)
        c = a.conversation()
        for n in users:
            a.join(c["id"], n)
        for i in range(40):
            a.ok("POST", f"/v1/conversations/{c['id']}/events", sub=users[i % 3], json={"type": "text", "body": {"text": f"t{i}"}})
        a.leave(c["id"], users[0])
        before = [e for p in a.walk(f"/v1/conversations/{c['id']}/events", page_size=100) for e in p["_embedded"]["events"]]
        assert len(before) == 44
        s.restart()  # SIGKILL, then start on the same data directory
        after = [e for p in a.walk(f"/v1/conversations/{c['id']}/events", page_size=100) for e in p["_embedded"]["events"]]
        strip = lambda es: [{k: v for k, v in e.items() if k != "_links"} for e in es]
        assert strip(after) == strip(before)
        # Ids continue where they stopped.
        assert a.ok("POST", f"/v1/conversations/{c['id']}/events", sub=users[1], json={"type": "text", "body": {}})["id"] == 45
    finally:
        s.close()


# ---------- webhooks ----------

class Receiver:
    """A loopback HTTP server standing in for the application's rtc.event_url."""

    def __init__(self, fail_first=0, hang=False):
        self.requests = []
        self.fail_first = fail_first
        self.hang = hang
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if receiver.hang:
                    time.sleep(30)
                    return
                with receiver.lock:
                    receiver.requests.append((dict(self.headers), body))
                    status = 500 if len(receiver.requests) <= receiver.fail_first else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/events"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def events(self):
        with self.lock:
            return [json.loads(b) for _, b in self.requests]

    def close(self):
        self.httpd.shutdown()


def rtc_capabilities(url, signed):
    return {"rtc": {"webhooks": {"event_url": {"address": url, "http_method": "POST"}}, "signed_callbacks": signed}}


def test_webhooks_deliver_every_event_in_order_signed(server):
    rx = Receiver()
    try:
        a = App(server)
        a.update({"name": a.json["name"], "capabilities": rtc_capabilities(rx.url, True)})
        secret = a.json["signature_secret"]
        assert secret and a.ok  # noqa
        got = requests.get(f"{server.base}/v2/applications/{a.id}", auth=server.auth).json()
        assert got["signature_secret"] == secret
        users = names("wh", 2)
        for n in users:
            a.user(n)
        c = a.conversation()
        for n in users:
            a.join(c["id"], n)
        for i in range(30):
            a.ok("POST", f"/v1/conversations/{c['id']}/events", sub=users[i % 2], json={"type": "text", "body": {"text": str(i)}})
        a.leave(c["id"], users[0])
        wait_until(lambda: len(rx.events()) >= 33, timeout=15, what="33 webhook deliveries")
        time.sleep(0.3)
        evs = rx.events()
        assert [e["id"] for e in evs] == list(range(1, 34))
        assert [e["type"] for e in evs][:2] == ["member:joined"] * 2 and evs[-1]["type"] == "member:left"
        assert all(e["conversation_id"] == c["id"] and e["application_id"] == a.id for e in evs)
        for headers, body in rx.requests:
            auth = headers.get("Authorization", "")
            assert auth.startswith("Bearer "), headers
            token = auth.split(" ", 1)[1]
            assert vonage_jwt.verify_signature(token, secret)
            assert not vonage_jwt.verify_signature(token, "0" * 64)
            claims = pyjwt.decode(token, secret, algorithms=["HS256"])
            assert claims["iss"] == "Vonage" and claims["application_id"] == a.id
            assert claims["payload_hash"] == hashlib.sha256(body).hexdigest()
    finally:
        rx.close()


def test_webhook_retried_after_500s_and_unsigned_by_default(server):
    rx = Receiver(fail_first=2)
    try:
        a = App(server, capabilities=rtc_capabilities(rx.url, False))
        n = names("retry", 1)[0]
        a.user(n)
        c = a.conversation()
        a.join(c["id"], n)
        before = server.metric("switchboard_webhook_delivered_total")
        wait_until(lambda: len(rx.requests) >= 3, timeout=10, what="two failures and a retry")
        evs = rx.events()
        assert [e["id"] for e in evs] == [1, 1, 1] and evs[0]["type"] == "member:joined"
        assert all("Authorization" not in h for h, _ in rx.requests)
        wait_until(lambda: server.metric("switchboard_webhook_delivered_total") >= before + 1, what="delivered counter")
    finally:
        rx.close()


def test_webhook_queue_overflow_is_counted_in_metrics():
    """A receiver that never answers fills the bounded queue; what does not fit is dropped and counted."""
    s = Server().start()
    rx = Receiver(hang=True)
    try:
        text = s.metrics()
        for name in ("switchboard_webhook_dropped_total", "switchboard_webhook_failed_total", "switchboard_webhook_delivered_total"):
            assert name in text
        assert s.metric("switchboard_webhook_dropped_total") == 0
        a = App(s, capabilities=rtc_capabilities(rx.url, False))
        n = names("flood", 1)[0]
        a.user(n)
        c = a.conversation()
        a.join(c["id"], n)
        session = requests.Session()
        headers = {"Authorization": "Bearer " + a.token(n)}
        # Lane capacity is 10,000 / 8 per conversation lane: 1,300 events overflow one lane.
        for i in range(1300):
            r = session.post(f"{s.base}/v1/conversations/{c['id']}/events", headers=headers, json={"type": "text", "body": {"i": i}})
            assert r.status_code == 201
        dropped = s.metric("switchboard_webhook_dropped_total")
        assert dropped and dropped >= 40, dropped
    finally:
        s.kill()
        s.close()
        rx.httpd.server_close()
