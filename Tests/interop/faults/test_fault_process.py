"""The server process dies or is told to stop while REST writes are in flight: nothing it acknowledged
is lost, and SIGTERM drains instead of cutting requests off."""
import os
import signal
import time

import requests

from faults_support import App, Server, Writers, names, stored_texts
from rig import wait_until


def crowd(app, n=3):
    users = names("load", n)
    for u in users:
        app.user(u)
    cid = app.conversation()["id"]
    for u in users:
        app.join(cid, u)
    return users, cid


def test_kill_9_under_write_load_loses_no_acknowledged_write():
    """Four writers post events as fast as the server answers; the server is killed with SIGKILL mid-load
    and restarted on the same data. Every write that got a 2xx is present after the restart, with the id
    it was acknowledged with, and ids continue after the highest one."""
    s = Server().start()
    try:
        app = App(s)
        users, cid = crowd(app)
        w = Writers(app, cid, users).start()
        wait_until(lambda: len(w.acked) >= 200, timeout=20, what="200 acknowledged writes")
        s.kill()
        w.stop()
        acked = dict(w.acked)
        s.start()
        stored = stored_texts(app, cid, users[0])
        missing = {t: i for t, i in acked.items() if stored.get(t) != i}
        assert not missing, f"{len(missing)} of {len(acked)} acknowledged writes lost or renumbered: {list(missing.items())[:5]}"
        next_id = app.ok("POST", f"/v1/conversations/{cid}/events", sub=users[0], json={"type": "text", "body": {}})["id"]
        assert next_id > max(stored.values())
    finally:
        s.kill()
        s.close()


def test_sigterm_under_write_load_drains_and_exits_zero():
    """SIGTERM while four writers post: the process exits 0 within 15 s, every reply it sent is either a
    2xx or a JSON error (no half-written responses), and every acknowledged write is there after a restart."""
    s = Server().start()
    try:
        app = App(s)
        users, cid = crowd(app)
        w = Writers(app, cid, users).start()
        wait_until(lambda: len(w.acked) >= 100, timeout=20, what="100 acknowledged writes")
        t0 = time.monotonic()
        s.proc.send_signal(signal.SIGTERM)
        code = s.proc.wait(15)
        drained = time.monotonic() - t0
        w.stop()
        assert code == 0, f"exit {code} after SIGTERM\n{s.log()}"
        assert drained < 15
        bad = [(st, body) for st, body in w.failures if isinstance(st, int) and not (body or "").lstrip().startswith("{")]
        assert not bad, f"non-JSON error replies during drain: {bad[:3]}"
        acked = dict(w.acked)
        s.start()
        stored = stored_texts(app, cid, users[0])
        assert all(stored.get(t) == i for t, i in acked.items()), "an acknowledged write is missing after SIGTERM"
    finally:
        s.kill()
        s.close()


def test_a_realtime_client_that_stops_reading_is_cut_off_and_others_are_unaffected():
    """A realtime client logs in, joins a busy conversation and stops reading its socket. Large events keep
    coming: the server's memory stays bounded (RSS grows by less than 64 MiB), the stalled socket is closed
    or counted as a slow consumer, and a reading client in the same conversation receives every event."""
    import asyncio
    import socket

    from conv_support import RawWebSocket, RealtimeClient
    from faults_support import rss_kib

    s = Server().start()
    try:
        app = App(s)
        users, cid = crowd(app, 2)
        stalled = RawWebSocket(s.port)
        stalled.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.send_text('{"type":"session:login","tid":"1","body":{"token":"%s"}}' % app.token(users[1]))
        baseline = rss_kib(s.proc.pid)
        slow0 = s.metric("switchboard_websocket_slow_consumers_total") or 0
        blob = "x" * 16_000

        n = 1500  # 1500 × 16 kB = 24 MB the stalled client will never read

        def post_all():
            session = requests.Session()
            headers = {"Authorization": "Bearer " + app.token(users[0])}
            for i in range(n):
                r = session.post(f"{s.base}/v1/conversations/{cid}/events", headers=headers,
                                 json={"type": "text", "body": {"text": f"{i}", "blob": blob}}, timeout=10)
                assert r.status_code == 201, r.status_code

        async def scenario():
            reader = await RealtimeClient.connect(s, token=app.token(users[0]))
            t0 = time.monotonic()
            # Posting from a thread keeps this event loop free to read the reader's socket.
            await asyncio.get_running_loop().run_in_executor(None, post_all)
            last = str(n - 1)
            try:
                await reader.wait_for(lambda m: m.get("type") == "text" and m.get("body", {}).get("text") == last, timeout=20)
            except (AssertionError, asyncio.TimeoutError) as e:
                texts = [m.get("body", {}).get("text") for m in reader.events(cid) if m.get("type") == "text"]
                raise AssertionError(f"the reading client stopped at event {texts[-1:]} of {n}; closed {reader.closed}") from None
            got = [m for m in reader.events(cid) if m.get("type") == "text"]
            await reader.close()
            return len(got), time.monotonic() - t0

        received, seconds = asyncio.run(scenario())
        assert received == 1500, f"the reading client got {received} of 1500 events"
        grown = rss_kib(s.proc.pid) - baseline
        # A sanitizer build keeps freed memory in quarantine (hundreds of MiB): RSS says nothing there.
        if "sanitize" not in os.environ.get("ASAN_OPTIONS", "") + os.environ.get("SWITCHBOARD_BIN", "").replace("asan", "sanitize"):
            assert grown < 64 * 1024, f"RSS grew {grown} KiB while a client did not read"
        slow = s.metric("switchboard_websocket_slow_consumers_total") or 0
        # Either counted as a slow consumer and closed, or its buffer bound kept memory flat (checked above).
        assert slow >= slow0 + 1, "the stalled client was never detected as a slow consumer"
    finally:
        s.kill()
        s.close()
