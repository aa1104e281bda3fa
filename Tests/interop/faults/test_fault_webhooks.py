"""Webhook receivers that are down, slow or failing: REST keeps answering, retries are bounded, and the
delivered/failed counters in /metrics say exactly what happened.

The dispatcher (Sources/Platform/Webhooks/WebhookDispatcher.swift) makes 5 attempts per event with
backoff 0.5 s, 1 s, 2 s, 4 s and a 5 s timeout per attempt, on 8 lanes chosen by conversation."""
import time

import pytest
import requests

from faults_support import App, Receiver, Server, names, timed_post, webhook_capabilities
from rig import free_port, wait_until


@pytest.fixture
def server():
    s = Server().start()
    yield s
    s.kill()
    s.close()


def counters(s):
    return s.metric("switchboard_webhook_delivered_total"), s.metric("switchboard_webhook_failed_total")


def rest_stays_fast(app, users, cid, n=10, bound=1.0):
    """n REST writes while webhooks misbehave; returns the slowest. Each must be acknowledged."""
    worst = 0.0
    for i in range(n):
        r, seconds = timed_post(app, f"/v1/conversations/{cid}/events", users[0], {"type": "text", "body": {"text": str(i)}})
        assert r.status_code == 201, r.text
        worst = max(worst, seconds)
    assert worst < bound, f"a REST write took {worst:.2f}s while webhooks were failing"
    return worst


def test_receiver_down_costs_one_counted_failure_per_event_and_rest_stays_fast(server):
    """A receiver whose port refuses connections: the one event is retried, then counted once in
    switchboard_webhook_failed_total (never as delivered), and REST writes answer within 1 s throughout."""
    dead = f"http://127.0.0.1:{free_port()}/events"
    app = App(server, capabilities=webhook_capabilities(dead))
    [user] = names("down", 1)
    app.user(user)
    delivered0, failed0 = counters(server)
    cid = app.conversation()["id"]
    app.join(cid, user)  # one event: member:joined
    rest_stays_fast(app, [user], cid, n=5)
    wait_until(lambda: counters(server)[1] >= failed0 + 1, timeout=15, what="the first event counted as failed")
    assert counters(server)[0] == delivered0
    assert requests.get(server.base + "/health", timeout=1).status_code == 200


def test_receiver_answering_500_gets_exactly_five_attempts_per_event(server):
    """A receiver that answers 500: the event is attempted exactly 5 times (bounded), with growing gaps,
    then counted failed once; nothing is attempted again afterwards."""
    rx = Receiver(status=500)
    try:
        app = App(server, capabilities=webhook_capabilities(rx.url))
        [user] = names("five", 1)
        app.user(user)
        delivered0, failed0 = counters(server)
        cid = app.conversation()["id"]
        app.join(cid, user)
        wait_until(lambda: counters(server)[1] >= failed0 + 1, timeout=15, what="failure counted after the retries")
        time.sleep(1.5)  # would be past the next backoff if a sixth attempt were coming
        attempts = [t for t, e in rx.attempts if e["conversation_id"] == cid and e["id"] == 1]
        assert len(attempts) == 5, attempts
        gaps = [b - a for a, b in zip(attempts, attempts[1:])]
        assert all(later > earlier for earlier, later in zip(gaps, gaps[1:])), f"backoff does not grow: {gaps}"
        assert counters(server) == (delivered0, failed0 + 1)
    finally:
        rx.close()


def test_a_slow_receiver_holds_at_most_one_request_per_lane_and_rest_stays_fast(server):
    """A receiver that takes 10 s to answer events of 20 conversations: the server keeps at most 8
    requests open to it (one per lane, memory and sockets bounded) and REST writes still answer within 1 s."""
    rx = Receiver(status=200, delay=10)
    try:
        app = App(server, capabilities=webhook_capabilities(rx.url))
        users = names("slow", 2)
        for u in users:
            app.user(u)
        cids = [app.conversation()["id"] for _ in range(20)]
        for cid in cids:
            app.join(cid, users[0])
        wait_until(lambda: rx.in_flight >= 4, timeout=5, what="webhook requests in flight")
        rest_stays_fast(app, users, cids[0], n=10)
        t0 = time.monotonic()
        assert requests.get(server.base + "/health", timeout=2).status_code == 200
        assert time.monotonic() - t0 < 1
        assert rx.max_in_flight <= 8, rx.max_in_flight
    finally:
        rx.close()


def test_a_slow_receiver_does_not_hold_back_another_applications_webhooks(server):
    """One application's receiver takes 10 s on every lane; a second application's receiver is healthy.
    The second application's event is delivered within 3 s: one slow customer does not stall the others."""
    slow, fast = Receiver(status=200, delay=10), Receiver(status=200)
    try:
        a = App(server, capabilities=webhook_capabilities(slow.url))
        b = App(server, capabilities=webhook_capabilities(fast.url))
        [ua] = names("hog", 1)
        [ub] = names("victim", 1)
        a.user(ua)
        b.user(ub)
        for _ in range(24):  # enough conversations to occupy every lane
            a.join(a.conversation()["id"], ua)
        wait_until(lambda: slow.in_flight >= 6, timeout=5, what="slow receiver busy on the lanes")
        cid = b.conversation()["id"]
        t0 = time.monotonic()
        b.join(cid, ub)
        wait_until(lambda: fast.count(conversation=cid) >= 1, timeout=3,
                   what="the healthy application's webhook while another's receiver is slow")
        assert time.monotonic() - t0 < 3
    finally:
        slow.close()
        fast.close()


@pytest.mark.slow
def test_a_receiver_that_never_answers_in_time_is_abandoned_after_five_timeouts(server):
    """A receiver that answers after 10 s (past the 5 s timeout): the event gets exactly 5 attempts, each
    abandoned at the timeout, then one counted failure and no delivery (~33 s)."""
    rx = Receiver(status=200, delay=10)
    try:
        app = App(server, capabilities=webhook_capabilities(rx.url))
        [user] = names("timeout", 1)
        app.user(user)
        delivered0, failed0 = counters(server)
        cid = app.conversation()["id"]
        app.join(cid, user)
        wait_until(lambda: counters(server)[1] >= failed0 + 1, timeout=50, what="failure after five timeouts")
        assert rx.count(event_id=1, conversation=cid) == 5
        assert counters(server) == (delivered0, failed0 + 1)
    finally:
        rx.close()
