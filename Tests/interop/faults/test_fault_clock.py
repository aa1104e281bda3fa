"""Wall-clock jumps (an NTP step, a VM restored from a snapshot) while sessions are live. Token expiry is a
wall-clock instant, so a jump forward ends the sessions whose tokens it put past `exp` + the 60 s leeway, and
only those; heartbeats, login deadlines and retention run on the monotonic clock, so neither direction of
jump starts a wave of ping timeouts or ends a session early.

The jump: `PUT /test/clock` (development mode) moves the wall clock the server judges tokens by, as a step
of the system clock would; the monotonic clocks do not move."""
import asyncio
import time

import requests

from conv_support import App, RealtimeClient, Server
from faults_support import names
from rig import run_async


def jump(s, seconds):
    r = requests.put(s.base + "/test/clock", json={"offset_seconds": seconds}, timeout=5)
    assert r.status_code == 200 and r.json()["offset_seconds"] == seconds, r.text


def test_wall_clock_jumps_end_only_the_sessions_whose_tokens_they_expire():
    s = Server("--dev", "--sip-port", "0", "--realtime-ping-interval", "1").start()
    try:
        app = App(s)
        short_user, long_user = names("clock", 2)
        app.user(short_user)
        app.user(long_user)
        short_token, long_token = app.token(short_user, ttl=3600), app.token(long_user, ttl=4 * 3600)

        async def main():
            short = await RealtimeClient.connect(s, short_token)
            long = await RealtimeClient.connect(s, long_token)
            # Two hours ahead: the first token is past its exp (1 h) and the leeway; the second is not.
            t0 = time.monotonic()
            jump(s, 7200)
            err = await short.wait_for(lambda m: m.get("type") == "session:error", timeout=5)
            assert err["body"]["code"] == "tokenExpired", err
            # The expiry check runs every 250 ms; 3 s leaves room for a busy machine and still means "at the jump",
            # not the hour the token had left by the monotonic clock.
            assert time.monotonic() - t0 < 3.0
            code, _ = await short.wait_closed()
            assert code == 4001
            # Three ping intervals later the other session is still up: its heartbeats kept their pace.
            await asyncio.sleep(3)
            assert long.closed is None, long.closed
            r = await long.request("session:refresh", {"token": long_token})
            assert r["type"] == "session:refresh:success", r
            # Two hours behind real time: nothing that is up ends because the clock went back. A token is now
            # issued in the server's future (beyond the 60 s leeway) and is refused, the session stays.
            jump(s, -7200)
            await asyncio.sleep(3)
            assert long.closed is None, long.closed
            r = await long.request("session:refresh", {"token": app.token(long_user, ttl=600)})
            assert r["type"] == "session:refresh:error" and r["body"]["code"] == "invalidToken", r
            await asyncio.sleep(1.5)
            assert long.closed is None, long.closed
            await long.close()

        run_async(main(), 40)
        # REST judges tokens by the same clock. Still two hours behind: the short token's own iat is now in the
        # server's future too, so it is refused; on time it is good; two hours ahead it has expired, and the
        # long one is still accepted.
        user_path = f"/v1/users?name={short_user}"
        assert app.call("GET", user_path, token=short_token).status_code == 401
        jump(s, 0)
        assert app.call("GET", user_path, token=short_token).status_code == 200
        jump(s, 7200)
        r = app.call("GET", user_path, token=short_token)
        assert r.status_code == 401 and "title" in r.json(), r.text
        assert app.call("GET", user_path, token=long_token).status_code == 200
        # A token signed at the real time, which a server two hours behind sees as issued in its future;
        # back on time, it is good.
        jump(s, -7200)
        assert app.call("GET", user_path, token=app.token(short_user, ttl=600)).status_code == 401
        jump(s, 0)
        assert app.call("GET", user_path, token=app.token(short_user, ttl=600)).status_code == 200
        assert s.proc.poll() is None
    finally:
        s.close()


def test_the_clock_route_exists_only_in_development_mode():
    s = Server("--sip-port", "0").start()
    try:
        assert requests.put(s.base + "/test/clock", json={"offset_seconds": 60}, timeout=5).status_code == 404
    finally:
        s.close()
