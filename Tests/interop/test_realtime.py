"""The realtime gateway (GET /v1/realtime) over real WebSockets: ordering, resume, token expiry, heartbeats."""
import asyncio
import json
import time
import uuid

import pytest

from conv_support import App, RawWebSocket, RealtimeClient, Server, server, app  # noqa: F401 (fixtures)
from rig import run_async


def run(coro):
    return run_async(coro, 120)


def unique(*prefixes):
    tag = uuid.uuid4().hex[:6]
    return [f"{p}{tag}" for p in prefixes]


def key(e):
    """What must be identical between sessions for the same event."""
    return (e["id"], e["type"], e.get("from"), e["body"].get("member_id"), e["body"].get("user", {}).get("name"))


def test_three_users_see_the_same_member_events_in_the_same_order(server, app):
    names = unique("alice", "bob", "carol")
    for n in names:
        app.user(n)
    cid = app.conversation()["id"]

    async def main():
        clients = {n: await RealtimeClient.connect(server, app.token(n)) for n in names}
        for n in names:
            app.join(cid, n)
        alice, bob, carol = (clients[n] for n in names)
        await alice.wait_for(lambda m: m.get("type") == "member:joined" and m["body"]["user"]["name"] == names[2])
        app.leave(cid, names[1])
        app.leave(cid, names[2])
        await alice.wait_for(lambda m: m.get("id") == 5)
        await asyncio.sleep(0.3)  # nothing further may arrive
        seen = {n: [key(e) for e in clients[n].events(cid)] for n in names}
        for c in clients.values():
            await c.close()
        return seen

    seen = run(main())
    a, b, c = names
    rest = app.ok("GET", f"/v1/conversations/{cid}/events", params={"page_size": 100})["_embedded"]["events"]
    canonical = [key(e) for e in rest]
    assert [k[1] for k in canonical] == ["member:joined"] * 3 + ["member:left"] * 2
    assert [k[4] for k in canonical] == [a, b, c, b, c]
    # Each user hears from its own join on; the leaver hears its own member:left and nothing after.
    assert seen[a] == canonical
    assert seen[b] == canonical[1:4]
    assert seen[c] == canonical[2:]


def test_pushed_events_are_the_rest_events_and_invitations_arrive(server, app):
    host, guest = unique("host", "guest")
    app.user(host), app.user(guest)
    cid = app.conversation()["id"]

    async def main():
        h = await RealtimeClient.connect(server, app.token(host))
        g = await RealtimeClient.connect(server, app.token(guest))
        app.join(cid, host)
        app.ok("POST", f"/v1/conversations/{cid}/members", json={"user": {"name": guest}, "state": "invited"})
        inv = await g.wait_for(lambda m: m.get("type") == "member:invited")
        assert inv["conversation_id"] == cid and inv["body"]["user"]["name"] == guest
        e = app.ok("POST", f"/v1/conversations/{cid}/events", sub=host, json={"type": "custom:hello", "body": {"x": 1}})
        pushed = await h.wait_for(lambda m: m.get("type") == "custom:hello")
        # The invited user hears the conversation too.
        await g.wait_for(lambda m: m.get("type") == "custom:hello")
        assert {k: v for k, v in pushed.items() if k != "cid"} == e
        await h.close(), await g.close()

    run(main())


def test_login_errors_and_application_isolation(server, app):
    (name,) = unique("iso")
    app.user(name)
    other = App(server)
    other.user(name)  # same name, different application
    cid = app.conversation()["id"]

    async def main():
        c = await RealtimeClient.connect(server)
        r = await c.request("session:login", {"token": "nonsense"})
        assert r["type"] == "session:error" and r["body"]["code"] == "invalidToken"
        r = await c.request("session:login", {"token": app.token()})  # application token: no user
        assert r["type"] == "session:error" and r["body"]["code"] == "invalidToken"
        r = await c.request("session:login", {"token": app.token(name, ttl=-10, iat=int(time.time()) - 100)})
        assert r["type"] == "session:error" and r["body"]["code"] == "tokenExpired"
        r = await c.request("rtc:new", {})
        assert r["type"] == "session:error" and r["body"]["code"] == "notLoggedIn"
        r = await c.request("session:ping")
        assert r["type"] == "session:pong"
        r = await c.request("session:login", {"token": other.token(name)})
        assert r["type"] == "session:success" and r["body"]["user"]["name"] == name
        mine = await RealtimeClient.connect(server, app.token(name))
        app.join(cid, name)
        await mine.wait_for(lambda m: m.get("type") == "member:joined")
        await asyncio.sleep(0.3)
        assert c.events() == [], "app B's session got app A's events"
        await c.close(), await mine.close()

    run(main())


def test_killed_socket_resumes_with_exactly_the_missed_events(server, app):
    alice, bob = unique("ra", "rb")
    app.user(alice), app.user(bob)
    cid = app.conversation()["id"]
    cid2 = app.conversation()["id"]

    async def main():
        a = await RealtimeClient.connect(server, app.token(alice))
        sid = a.session_id
        app.join(cid, alice), app.join(cid, bob), app.join(cid2, alice)
        for i in range(3):
            app.ok("POST", f"/v1/conversations/{cid}/events", sub=bob, json={"type": "text", "body": {"text": f"before{i}"}})
        await a.wait_for(lambda m: m.get("body", {}).get("text") == "before2")
        last = {cid: a.events(cid)[-1]["id"], cid2: a.events(cid2)[-1]["id"]}
        assert last == {cid: 5, cid2: 1}
        a.abort()  # TCP reset, no close frame

        for i in range(4):
            app.ok("POST", f"/v1/conversations/{cid}/events", sub=bob, json={"type": "text", "body": {"text": f"missed{i}"}})
        app.ok("POST", f"/v1/conversations/{cid2}/events", sub=alice, json={"type": "text", "body": {"text": "other"}})
        app.leave(cid, bob)

        b = await RealtimeClient.connect(server)
        r = await b.request("session:resume", {"session_id": sid, "last_event_ids": last})
        assert r["type"] == "session:success", r
        assert r["body"]["session_id"] == sid and r["body"]["replayed"] == 6 and r["body"]["incomplete"] == []
        await b.wait_for(lambda m: "conversation_id" in m, count=6)
        app.ok("POST", f"/v1/conversations/{cid}/events", sub=alice, json={"type": "text", "body": {"text": "live"}})
        await b.wait_for(lambda m: m.get("body", {}).get("text") == "live")
        await asyncio.sleep(0.3)
        got = [(e["conversation_id"], e["id"]) for e in b.events()]
        assert sorted(got[:6], key=lambda x: (x[0] != cid, x[1])) == [(cid, 6), (cid, 7), (cid, 8), (cid, 9), (cid, 10), (cid2, 2)]
        assert [g for g in got[:6] if g[0] == cid] == [(cid, i) for i in range(6, 11)]  # in order per conversation
        assert got[6:] == [(cid, 11)]  # then live, no duplicates
        # REST agrees with what the two sockets saw together.
        rest = [e["id"] for e in app.ok("GET", f"/v1/conversations/{cid}/events", params={"page_size": 100})["_embedded"]["events"]]
        assert sorted(e["id"] for e in a.events(cid) + b.events(cid)) == rest

        # A socket the server still believes alive (peer frozen, never reads) is taken over by a resume too.
        frozen_last = {cid: 11, cid2: 2}
        raw = RawWebSocket(server.port)
        raw.send_text(json.dumps({"type": "session:resume", "tid": "1", "body": {"session_id": sid, "last_event_ids": frozen_last}}))
        await asyncio.sleep(0.2)
        app.ok("POST", f"/v1/conversations/{cid}/events", sub=alice, json={"type": "text", "body": {"text": "to-frozen"}})
        c = await RealtimeClient.connect(server)
        r = await c.request("session:resume", {"session_id": sid, "last_event_ids": frozen_last})
        assert r["type"] == "session:success" and r["body"]["replayed"] == 1
        e = await c.wait_for(lambda m: "conversation_id" in m)
        assert (e["id"], e["body"]["text"]) == (12, "to-frozen")
        raw.close()

        # Unknown sessions are refused.
        d = await RealtimeClient.connect(server)
        r = await d.request("session:resume", {"session_id": "SES-" + str(uuid.uuid4()), "last_event_ids": {}})
        assert r["type"] == "session:error" and r["body"]["code"] == "invalidSession"
        for x in (b, c, d):
            await x.close()

    run(main())


def test_resume_beyond_the_replay_buffer_says_incomplete(server, app):
    (name,) = unique("big")
    app.user(name)
    cid = app.conversation()["id"]

    async def main():
        a = await RealtimeClient.connect(server, app.token(name))
        app.join(cid, name)
        await a.wait_for(lambda m: m.get("id") == 1)
        a.abort()
        import requests
        s = requests.Session()
        h = {"Authorization": "Bearer " + app.token(name)}
        for i in range(1005):
            assert s.post(f"{server.base}/v1/conversations/{cid}/events", headers=h, json={"type": "text", "body": {"i": i}}).status_code == 201
        b = await RealtimeClient.connect(server)
        r = await b.request("session:resume", {"session_id": a.session_id, "last_event_ids": {cid: 1}})
        assert r["type"] == "session:success" and r["body"]["replayed"] == 1000 and r["body"]["incomplete"] == [cid]
        evs = await b.wait_for(lambda m: "conversation_id" in m, count=1000, timeout=20)
        assert [e["id"] for e in evs] == list(range(7, 1007))
        await b.close()

    run(main())


def test_expiring_token_gets_token_expired_then_close(server, app):
    (name,) = unique("exp")
    app.user(name)

    async def main():
        t0 = time.monotonic()
        # One clock-skew rule for login and for the session: a token is good until 60 s after its exp.
        # This one expired 57 s ago, so the login succeeds and the session ends 3 s later.
        c = await RealtimeClient.connect(server, app.token(name, ttl=-57))
        err = await c.wait_for(lambda m: m.get("type") == "session:error", timeout=8)
        elapsed = time.monotonic() - t0
        assert err["body"]["code"] == "tokenExpired"
        assert 2.0 <= elapsed <= 4.5, elapsed
        code, _ = await c.wait_closed()
        assert code == 4001
        # The ended session cannot be resumed.
        d = await RealtimeClient.connect(server)
        r = await d.request("session:resume", {"session_id": c.session_id, "last_event_ids": {}})
        assert r["body"]["code"] == "invalidSession"
        await d.close()

    run(main())


def test_login_with_a_token_that_expired_within_the_leeway_is_not_cut_short(server, app):
    """Expired 30 s ago: inside the 60 s clock-skew leeway, so the session lives until exp + 60 s."""
    (name,) = unique("skew")
    app.user(name)

    async def main():
        c = await RealtimeClient.connect(server, app.token(name, ttl=-30))
        await asyncio.sleep(3)
        assert c.closed is None and not any(m.get("type") == "session:error" for m in c.messages), c.messages
        r = await c.request("session:refresh", {"token": app.token(name, ttl=600)})
        assert r["type"] == "session:refresh:success"
        late = await RealtimeClient.connect(server)
        r = await late.request("session:login", {"token": app.token(name, ttl=-61)})
        assert r["type"] == "session:error" and r["body"]["code"] == "tokenExpired", r
        await late.close()
        await c.close()

    run(main())


def test_pipelined_requests_are_handled_in_arrival_order(server, app):
    """1,000 alternating rtc:earmuff on/off sent without waiting: answers, events and the final state follow
    the order they were sent in (one queue per session, not a task per message)."""
    (name,) = unique("order")
    app.user(name)
    cid = app.conversation()["id"]
    n = 1000

    async def main():
        c = await RealtimeClient.connect(server, app.token(name))
        joined = await c.request("rtc:join", {"conversation_id": cid})
        assert joined["type"] == "rtc:join:success", joined
        member_id = joined["body"]["member_id"]
        tids = [await c.send("rtc:earmuff", {"conversation_id": cid, "earmuffed": i % 2 == 0}) for i in range(n)]
        wanted = set(tids)
        replies = await c.wait_for(lambda m: m.get("rid") in wanted, timeout=60, count=n)
        assert [r["rid"] for r in replies] == tids
        assert [r["body"]["earmuffed"] for r in replies] == [i % 2 == 0 for i in range(n)]
        events = await c.wait_for(lambda m: m.get("type", "").startswith("audio:earmuff:") and m.get("conversation_id") == cid,
                                  timeout=30, count=n)
        assert [e["type"] for e in events] == ["audio:earmuff:on" if i % 2 == 0 else "audio:earmuff:off" for i in range(n)]
        assert [e["id"] for e in events] == sorted(e["id"] for e in events)
        member = app.ok("GET", f"/v1/conversations/{cid}/members/{member_id}")
        assert member["media"]["audio_settings"]["earmuffed"] is False
        await c.close()

    run(main())


def test_refresh_before_expiry_keeps_the_session(server, app):
    name, other = unique("ref", "refo")
    app.user(name), app.user(other)

    async def main():
        c = await RealtimeClient.connect(server, app.token(name, ttl=3))
        await asyncio.sleep(1)
        r = await c.request("session:refresh", {"token": app.token(other)})
        assert r["type"] == "session:refresh:error", "a token for another user must not refresh"
        r = await c.request("session:refresh", {"token": app.token(name, ttl=600)})
        assert r["type"] == "session:refresh:success"
        await asyncio.sleep(4)
        assert not any(m.get("type") == "session:error" for m in c.messages)
        r = await c.request("session:ping")
        assert r["type"] == "session:pong"
        await c.close()

    run(main())


def ping_timeout(port, token, limit):
    """Logs in over a raw socket that reads but never pongs; returns (seconds until pingTimeout, pings seen, close code)."""
    raw = RawWebSocket(port)
    raw.send_text(json.dumps({"type": "session:login", "tid": "1", "body": {"token": token}}))
    t0 = time.monotonic()
    error_at, close_code = None, None
    seen = []
    for kind, value in raw.messages(limit):
        seen.append((round(time.monotonic() - t0, 2), kind, value))
        if kind == "text" and value["type"] == "session:error":
            assert value["body"]["code"] == "pingTimeout"
            error_at = time.monotonic() - t0
        elif kind == "text":
            assert value["type"] == "session:success"
        elif kind == "close":
            close_code = value
            break
    raw.close()
    print(seen)
    return error_at, raw.pings, close_code


def test_client_that_stops_answering_pings_is_dropped_fast_interval(server, app):
    """--realtime-ping-interval 1: pinged every second, dropped after two unanswered pings."""
    (name,) = unique("mute")
    app.user(name)

    async def healthy():
        # A client whose library answers pings stays connected meanwhile.
        c = await RealtimeClient.connect(server, app.token(name), ping_interval=None)
        await asyncio.sleep(4.5)
        assert c.closed is None and not any(m.get("type") == "session:error" for m in c.messages)
        await c.close()

    async def main():
        h = asyncio.create_task(healthy())
        result = await asyncio.to_thread(ping_timeout, server.port, app.token(name), 10)
        await h
        return result

    error_at, pings, code = run(main())
    assert error_at is not None and 0.9 <= error_at <= 2.5, error_at
    assert pings >= 2 and code == 4002


def test_client_that_stops_answering_pings_is_dropped_within_45s_default():
    s = Server().start()  # default interval: 15 s
    try:
        a = App(s)
        (name,) = unique("slow")
        a.user(name)
        error_at, pings, code = ping_timeout(s.port, a.token(name), 60)
        # One ping when the socket opens, one at login, one at the next tick; the tick after that ends it:
        # 15-30 s after login.
        assert error_at is not None and 14 <= error_at <= 45, error_at
        assert pings == 3 and code == 4002
    finally:
        s.close()
