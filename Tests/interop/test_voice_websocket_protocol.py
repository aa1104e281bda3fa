"""The Voice API's WebSocket endpoint protocol, as a voice bot uses it: a reply sent faster than real time (all at
once) is buffered and heard whole and in order; `{"action": "notify"}` is answered `websocket:notify` once the audio
before it has played; `{"action": "clear"}` stops what is queued (barge-in) and is answered `websocket:cleared`;
keys pressed by the leg the socket is connected to (an app user's `call:dtmf`, a phone's RFC 4733 events) arrive as
`websocket:dtmf`; an NCCO `input` with speech on a websocket leg hears what the socket says (`rate=24000` there).
The app user hears the socket through the conversation's mix over WebRTC (aiortc)."""

from __future__ import annotations

import asyncio
import collections
import json
import subprocess
import threading
import time

import numpy as np
import pytest
import requests

from accounts_support import bearer, token
from media_support import collect_audio, sine_track, wav_samples
from rig import serve_websocket, start_server, wait_until
from rooms_support import AudioMember, Realtime, RequestError, drain, metric, tone_strength, wait_for
from voice_support import Hooks, application, user_calls, user_jwt


class Bot:
    """A WebSocket server on loopback standing in for a voice bot: keeps the first message, every later text
    message (with when it came) and the audio it hears; `send` writes a message from the test's thread."""

    def __init__(self):
        self.first = None
        self.events: list[tuple[float, dict]] = []
        self.sizes = set()
        self.closed = threading.Event()
        self.ws = None
        self.authorization = None
        self.audio = collections.deque(maxlen=150)

        async def handler(ws):
            self.authorization = ws.request.headers.get("Authorization")
            self.first = json.loads(await ws.recv())
            self.ws = ws
            try:
                async for message in ws:
                    if isinstance(message, bytes):
                        self.sizes.add(len(message))
                        self.audio.append(message)
                    else:
                        self.events.append((time.monotonic(), json.loads(message)))
            finally:
                self.closed.set()

        self.loop, self.server, self.port = serve_websocket(handler)

    @property
    def uri(self) -> str:
        return f"ws://127.0.0.1:{self.port}/bot"

    def send(self, *messages):
        """Writes `messages` (bytes: audio; dict: a JSON command) back to back; returns when they are written."""
        async def write():
            for m in messages:
                await self.ws.send(m if isinstance(m, bytes) else json.dumps(m))
        asyncio.run_coroutine_threadsafe(write(), self.loop).result(30)

    def close(self):
        if self.ws is not None:
            asyncio.run_coroutine_threadsafe(self.ws.close(), self.loop).result(10)

    def named(self, event: str) -> list[tuple[float, dict]]:
        return [(t, e) for t, e in self.events if e.get("event") == event]

    def stop(self):
        self.loop.call_soon_threadsafe(self.server.close)


@pytest.fixture
def bot_app():
    """A server, a bot, and an application whose webhooks are a `Hooks`: (server, bot, hooks, app_id, key)."""
    server = start_server(https=False)
    bot = Bot()
    hooks = Hooks()
    try:
        app_id, key = application(server, hooks)
        yield server, bot, hooks, app_id, key
    finally:
        bot.stop()
        hooks.http.shutdown()
        server.stop()


def tone_frames(frequency: float, seconds: float, rate: int = 16000) -> list[bytes]:
    """`seconds` of a tone as 20 ms L16 messages."""
    n = rate // 50
    samples = (0.3 * 32767 * np.sin(2 * np.pi * frequency * np.arange(int(seconds * rate)) / rate)).astype("<i2")
    return [samples[i:i + n].tobytes() for i in range(0, len(samples) - n + 1, n)]


def seconds_of(tone: float, samples, rate, step=0.1) -> float:
    """How long `tone` clearly dominates in `samples`, in 100 ms windows."""
    w = int(rate * step)
    return step * sum(1 for i in range(0, len(samples) - w, w)
                      if np.abs(samples[i:i + w]).max() > 1000 and tone_strength(samples[i:i + w], rate, tone) > 20)


async def user_calls_the_bot(server, bot):
    """An app user (alice) calls the application, whose answer NCCO connects her to the bot; returns her realtime
    connection, the call, her audio member and the mix track she hears, once the bot's socket is open."""
    hooks = Hooks()
    app_id, key = application(server, hooks)
    hooks.ncco = lambda req: [{"action": "connect", "endpoint": [{"type": "websocket", "uri": bot.uri,
                                                                  "content-type": "audio/l16;rate=16000"}]}]
    rt, created, member = await user_calls(server, app_id, key, "alice", "bot", amplitude=0.05)
    await wait_for(lambda: bot.first is not None and bot.ws is not None, timeout=10, what=lambda: f"socket opened; {hooks.events}")
    await wait_for(lambda: member.tracks, timeout=10, what="mix track")
    track = next(iter(member.tracks.values()))
    await drain(track)
    return rt, created, member, track


def with_bot(scenario):
    """Runs `scenario(server, bot)` against a fresh server and bot."""
    server = start_server(https=False)
    bot = Bot()
    try:
        asyncio.run(scenario(server, bot))
    finally:
        bot.stop()
        server.stop()


def test_a_reply_sent_at_once_is_heard_whole_and_notify_says_when_it_has_played():
    with_bot(_reply_at_once)


async def _reply_at_once(server, bot):
    rt, created, member, track = await user_calls_the_bot(server, bot)
    # Three seconds of 500 Hz then three of 900 Hz, written in one go, then a notify.
    sent = time.monotonic()
    await asyncio.to_thread(bot.send, *tone_frames(500, 3), *tone_frames(900, 3), {"action": "notify", "payload": {"reply": "r1"}})
    samples, rate = await collect_audio(track, 7.5)
    heard_500, heard_900 = seconds_of(500, samples, rate), seconds_of(900, samples, rate)
    assert 2.6 <= heard_500 <= 3.3 and 2.6 <= heard_900 <= 3.3, (heard_500, heard_900)
    first_900 = next(i for i in range(0, len(samples) - rate // 10, rate // 10)
                     if tone_strength(samples[i:i + rate // 10], rate, 900) > 20 and np.abs(samples[i:i + rate // 10]).max() > 1000)
    last_500 = max(i for i in range(0, len(samples) - rate // 10, rate // 10)
                   if tone_strength(samples[i:i + rate // 10], rate, 500) > 20 and np.abs(samples[i:i + rate // 10]).max() > 1000)
    assert last_500 <= first_900, "in the order sent"  # equal: the change falls inside one 100 ms window
    notified = bot.named("websocket:notify")
    print(f"heard 500 Hz {heard_500:.1f} s, 900 Hz {heard_900:.1f} s; notify {notified[0][0] - sent if notified else None} s after sending")
    assert len(notified) == 1 and notified[0][1]["payload"] == {"reply": "r1"}, bot.events
    assert 5.7 <= notified[0][0] - sent <= 7.5, f"notify {notified[0][0] - sent:.2f} s after the reply was sent"
    assert bot.sizes == {640}, bot.sizes
    await rt.request("call:hangup", {"call_id": created["call_id"]})
    await wait_for(lambda: bot.closed.is_set(), timeout=10, what="socket closed")
    await member.close()
    await rt.close()


def test_clear_stops_what_is_queued_and_keys_arrive_as_dtmf_events():
    with_bot(_clear_and_keys)


async def _clear_and_keys(server, bot):
    rt, created, member, track = await user_calls_the_bot(server, bot)
    # Twenty seconds queued with a notify behind them; two seconds in, the bot is interrupted and clears.
    await asyncio.to_thread(bot.send, *tone_frames(700, 20), {"action": "notify", "payload": {"n": 1}})
    before, rate = await collect_audio(track, 2.0)
    assert seconds_of(700, before, rate) >= 1.2, "the reply plays"
    cleared_at = time.monotonic()
    await asyncio.to_thread(bot.send, {"action": "clear"})
    await wait_for(lambda: bot.named("websocket:cleared"), timeout=2, what=lambda: f"websocket:cleared; {bot.events}")
    assert bot.named("websocket:cleared")[0][1] == {"event": "websocket:cleared"}
    assert bot.named("websocket:cleared")[0][0] - cleared_at < 1.0
    await collect_audio(track, 0.5)
    after, rate = await collect_audio(track, 2.0)
    assert seconds_of(700, after, rate) == 0, "nothing queued plays after clear"
    assert not bot.named("websocket:notify"), "the notify behind the cleared audio is gone"
    # A notify with nothing queued comes back at once.
    await asyncio.to_thread(bot.send, {"action": "notify", "payload": {"n": 2}})
    await wait_for(lambda: bot.named("websocket:notify"), timeout=2, what=lambda: f"websocket:notify; {bot.events}")
    assert [e["payload"] for _, e in bot.named("websocket:notify")] == [{"n": 2}]
    # Alice presses keys: the bot she is connected to gets each as an event.
    await rt.request("call:dtmf", {"call_id": created["call_id"], "digits": "1#"})
    await wait_for(lambda: len(bot.named("websocket:dtmf")) == 2, timeout=5, what=lambda: f"dtmf events; {bot.events}")
    assert [e for _, e in bot.named("websocket:dtmf")] == [{"event": "websocket:dtmf", "digit": "1", "duration": 100},
                                                           {"event": "websocket:dtmf", "digit": "#", "duration": 100}]
    await rt.request("call:hangup", {"call_id": created["call_id"]})
    await wait_for(lambda: bot.closed.is_set(), timeout=10, what="socket closed")
    await member.close()
    await rt.close()


def test_a_phone_s_keys_reach_the_bot_it_is_connected_to(tmp_path):
    """SIPp calls the application's number and presses 2 then 4 (RFC 4733); the answer NCCO connects it to the bot,
    which gets both keys and then closes its socket, which ends the call (SIPp gets the BYE)."""
    from test_voice_phone import sipp_presses_2_then_4
    from sip_support import start_sip_server
    bot = Bot()
    server, port = start_sip_server()

    def close_after_two_keys():
        wait_until(lambda: len(bot.named("websocket:dtmf")) >= 2, timeout=20, what=lambda: f"two keys; {bot.events}")
        bot.close()

    closer = threading.Thread(target=close_after_two_keys, daemon=True)
    closer.start()
    try:
        sipp_presses_2_then_4((server, port), tmp_path, lambda hooks: [
            {"action": "connect", "endpoint": [{"type": "websocket", "uri": bot.uri, "content-type": "audio/l16;rate=8000"}]}])
        closer.join(5)
        assert [e["digit"] for _, e in bot.named("websocket:dtmf")] == ["2", "4"], bot.events
        assert bot.sizes == {320}, bot.sizes
    finally:
        bot.stop()
        server.stop()


MENU = ["sales", "support", "billing", "speak to an agent"]


def test_an_input_on_a_websocket_leg_hears_what_the_socket_says(tmp_path, bot_app):
    """`POST /v1/calls` to a websocket at 24 kHz whose NCCO is a speech `input`: the bot says "support" (espeak-ng,
    sent in one go, as a bot would send a synthesized reply) and the input's event URL gets it."""
    server, bot, hooks, app_id, key = bot_app
    voice, word = tmp_path / "voice.wav", tmp_path / "word.wav"
    subprocess.run(["espeak-ng", "-v", "en-us+f2", "-w", str(voice), "support"], check=True)
    subprocess.run(["sox", str(voice), "-r", "24000", "-c", "1", "-b", "16", str(word), "pad", "1", "3"], check=True)
    samples, rate = wav_samples(word)
    assert rate == 24000
    pcm = np.asarray(samples).astype("<i2")
    frames = [pcm[i:i + 480].tobytes() for i in range(0, len(pcm) - 480 + 1, 480)]
    ncco = [{"action": "input", "type": ["speech"], "speech": {"context": MENU, "endOnSilence": 1},
             "eventUrl": [hooks.url + "/event/input"]}]
    r = requests.post(server.http_url + "/v1/calls", headers={"Authorization": bearer(token(app_id, key))}, timeout=10, json={
        "to": [{"type": "websocket", "uri": bot.uri, "content-type": "audio/l16;rate=24000"}],
        "from": {"type": "phone", "number": "14155550100"}, "ncco": ncco})
    assert r.status_code == 201, r.text
    uuid = r.json()["uuid"]
    wait_until(lambda: bot.ws is not None, timeout=10, what=lambda: f"socket opened; {hooks.events}")
    assert bot.first == {"event": "websocket:connected", "content-type": "audio/l16;rate=24000"}
    wait_until(lambda: "answered" in hooks.statuses(uuid), timeout=10, what=lambda: f"answered; {hooks.events}")
    bot.send(*frames)
    results = lambda: [e for e in hooks.events if e.get("uuid") == uuid and "speech" in e]
    wait_until(results, timeout=20, what=lambda: f"the input's result: {hooks.events}\n{server.log()[-2000:]}")
    speech = results()[0]["speech"]
    assert speech["timeout_reason"] == "end_on_silence_timeout", speech
    assert speech["results"] and speech["results"][0]["text"] == "support", speech
    assert bot.sizes == {960}, bot.sizes
    # The NCCO ends with the input: the call completes and the socket is closed.
    wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=15, what=lambda: f"completed: {hooks.events}")
    assert bot.closed.wait(10)


def test_a_synchronous_connect_falls_back_when_the_bot_goes_away_or_cannot_be_reached(bot_app):
    """`eventType: synchronous` on a websocket `connect`: the bot closing its socket is `disconnected` (with the
    endpoint's `headers`) and the NCCO the connect's event URL answers with replaces the rest of the caller's;
    a socket that cannot be opened is `failed`, answered the same way. Without it the bot's close is `completed`
    and the NCCO goes on."""
    server, bot, hooks, app_id, key = bot_app
    closed_port = socket_port()

    def ncco(uri, synchronous):
        connect = {"action": "connect", "eventUrl": [hooks.url + "/event/connect"],
                   "endpoint": [{"type": "websocket", "uri": uri, "content-type": "audio/l16;rate=16000",
                                 "headers": {"original_from": "alice"}}]}
        if synchronous:
            connect["eventType"] = "synchronous"
        return [connect, {"action": "notify", "payload": {"step": "next"}, "eventUrl": [hooks.url + "/event/notify"]}]

    def fallback(path, event):
        if path.startswith("/event/connect") and event.get("status") in ("disconnected", "failed"):
            return [{"action": "notify", "payload": {"step": "fallback", "after": event["status"]},
                     "eventUrl": [hooks.url + "/event/notify"]}]
        return None

    hooks.reply = fallback
    steps = lambda call: [e for e in hooks.events if e.get("uuid") == call and "step" in e]

    async def call(to):
        rt = await Realtime(server.ws_url).connect()
        await rt.login(user_jwt(server, app_id, key, "alice"))
        created = await rt.request("call:create", {"to": to})
        return rt, created["call_id"]

    async def scenario():
        # The bot goes away mid-call: `disconnected`, then the fallback instead of the next action.
        hooks.ncco = lambda req: ncco(bot.uri, synchronous=True)
        rt, leg = await call("bot")
        await wait_for(lambda: bot.ws is not None, timeout=10, what=lambda: f"socket opened; {hooks.events}")
        socket_leg = lambda: next((e["uuid"] for e in hooks.events if e.get("to") == bot.uri), None)
        await wait_for(lambda: socket_leg() and "answered" in hooks.statuses(socket_leg()), timeout=10,
                       what=lambda: f"the socket's leg answered; {hooks.events}")
        await asyncio.to_thread(bot.close)
        await wait_for(lambda: steps(leg), timeout=10, what=lambda: f"the fallback's notify; {hooks.events}")
        assert [e["step"] for e in steps(leg)] == ["fallback"] and steps(leg)[0]["after"] == "disconnected", hooks.events
        gone = [e for e in hooks.events if e.get("uuid") == socket_leg() and e.get("status") == "disconnected"]
        assert gone and gone[0]["headers"] == {"original_from": "alice"} and gone[0]["to"] == bot.uri, hooks.events
        await rt.close()

        # Nothing listens at the URI: `failed`, answered with the fallback.
        hooks.ncco = lambda req: ncco(f"ws://127.0.0.1:{closed_port}/bot", synchronous=True)
        rt, leg = await call("nobody")
        await wait_for(lambda: steps(leg), timeout=15, what=lambda: f"the fallback's notify; {hooks.events}")
        assert [(e["step"], e.get("after")) for e in steps(leg)] == [("fallback", "failed")], hooks.events
        await rt.close()

        # Not synchronous: the bot's close is `completed`, and the NCCO goes on with its next action.
        bot.ws = None
        hooks.ncco = lambda req: ncco(bot.uri, synchronous=False)
        rt, leg = await call("bot")
        await wait_for(lambda: bot.ws is not None, timeout=10, what=lambda: f"socket opened; {hooks.events}")
        await asyncio.sleep(0.5)
        await asyncio.to_thread(bot.close)
        await wait_for(lambda: steps(leg), timeout=10, what=lambda: f"the next action's notify; {hooks.events}")
        assert [e["step"] for e in steps(leg)] == ["next"], hooks.events
        # The socket leg's own events come in its own lane: its `completed` may follow the parent's notify.
        socket_status = lambda: [e for e in hooks.events if e.get("to") == bot.uri and "status" in e][-1]["status"]
        await wait_for(lambda: socket_status() == "completed", timeout=10, what=lambda: f"the socket leg completed; {hooks.events}")
        await rt.close()

    asyncio.run(scenario())


def socket_port() -> int:
    """A loopback TCP port nothing listens on (bound, then closed)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_handshake_carries_the_authorization_asked_for(bot_app):
    """A websocket endpoint's `authorization` (built with the official `vonage` SDK's models): `custom` sends its value
    as the handshake's Authorization header, `vonage` the JWT that signs the application's webhooks (HS256 with its
    signature secret, checked with PyJWT); the credential is not shown back in the call's `to`. A bad one is 400."""
    import hashlib

    import jwt as pyjwt
    import vonage_voice
    from vonage_voice.models.common import WebsocketAuthorization
    from sip_support import api

    server, bot, hooks, app_id, key = bot_app
    secret = api(server, "GET", f"/v2/applications/{app_id}").json()["signature_secret"]
    ncco = [{"action": "talk", "text": "Hello."}]

    def call(authorization):
        to = {"type": "websocket", "uri": bot.uri, "content-type": "audio/l16;rate=16000", "authorization": authorization}
        body = vonage_voice.CreateCallRequest(to=[to], from_={"type": "phone", "number": "14155550100"},
                                              ncco=ncco).model_dump(by_alias=True, exclude_none=True)
        return requests.post(server.http_url + "/v1/calls", json=body, headers={"Authorization": bearer(token(app_id, key))}, timeout=10)

    r = call(WebsocketAuthorization(type="custom", value="Bearer abc123").model_dump(exclude_none=True))
    assert r.status_code == 201, r.text
    wait_until(lambda: bot.ws is not None, timeout=10, what=lambda: f"socket opened; {hooks.events}")
    assert bot.authorization == "Bearer abc123"
    shown = requests.get(server.http_url + f"/v1/calls/{r.json()['uuid']}", headers={"Authorization": bearer(token(app_id, key))}, timeout=10).json()
    assert shown["to"] == {"type": "websocket", "uri": bot.uri, "content-type": "audio/l16;rate=16000"}, shown
    assert "abc123" not in json.dumps(shown)
    assert bot.closed.wait(15), "the call ends after its talk"

    bot.ws, bot.authorization = None, None
    bot.closed.clear()
    r = call(WebsocketAuthorization(type="vonage").model_dump(exclude_none=True))
    assert r.status_code == 201, r.text
    wait_until(lambda: bot.ws is not None, timeout=10, what=lambda: f"socket opened; {hooks.events}")
    scheme, _, jwt_text = bot.authorization.partition(" ")
    assert scheme == "Bearer"
    claims = pyjwt.decode(jwt_text, secret, algorithms=["HS256"])
    assert claims["application_id"] == app_id and claims["iss"] == "Vonage", claims
    assert claims["payload_hash"] == hashlib.sha256(b"").hexdigest(), claims

    for authorization, field in [({"type": "basic"}, "to[0].authorization.type"), ({"type": "custom"}, "to[0].authorization.value"),
                                 ({"type": "custom", "value": "a\nb"}, "to[0].authorization.value"),
                                 ({"type": "vonage", "scope": "x"}, "to[0].authorization.scope")]:
        r = requests.post(server.http_url + "/v1/calls", headers={"Authorization": bearer(token(app_id, key))}, timeout=10, json={
            "to": [{"type": "websocket", "uri": bot.uri, "authorization": authorization}],
            "from": {"type": "phone", "number": "14155550100"}, "ncco": ncco})
        assert r.status_code == 400 and field in r.text, (authorization, r.status_code, r.text)


def test_what_a_socket_sends_beyond_a_minute_ahead_or_malformed_is_dropped_and_counted(bot_app):
    """The playout buffer holds 3,072 frames (61.44 s): a bot that writes 50 more at once loses those 50, and a message
    that is not 20 ms of audio is dropped; both are counted in /metrics, and the call goes on."""
    server, bot, hooks, app_id, key = bot_app
    r = requests.post(server.http_url + "/v1/calls", headers={"Authorization": bearer(token(app_id, key))}, timeout=10, json={
        "to": [{"type": "websocket", "uri": bot.uri, "content-type": "audio/l16;rate=8000"}],
        "from": {"type": "phone", "number": "14155550100"}, "ncco": [{"action": "conversation", "name": "bot-room"}]})
    assert r.status_code == 201, r.text
    uuid = r.json()["uuid"]
    wait_until(lambda: bot.ws is not None, timeout=10, what=lambda: f"socket opened; {hooks.events}")
    dropped = lambda reason: metric(server.http_url, f'switchboard_websocket_audio_dropped_total{{reason="{reason}"}}')
    assert dropped("overflow") == 0 and dropped("malformed") == 0
    sent = time.monotonic()
    bot.send(*tone_frames(500, (3072 + 50) / 50, rate=8000), b"\x00" * 100)
    wait_until(lambda: dropped("malformed") == 1, timeout=10, what=lambda: requests.get(server.http_url + "/metrics").text[-1500:])
    # Frames played while the rest arrived (one each 20 ms from the first) made room: at most that many fewer dropped.
    played = int((time.monotonic() - sent) / 0.02) + 1
    assert max(1, 50 - played) <= dropped("overflow") <= 50, (dropped("overflow"), played)
    assert "completed" not in hooks.statuses(uuid) and not bot.closed.is_set()


def test_a_bot_in_a_named_conversation_hears_it_and_gets_its_keys(bot_app):
    """A bot placed with `POST /v1/calls` into the named conversation "desk" (NCCO `conversation`, as a transcription
    or assistant bot joins a call), and an app user whose call's NCCO puts it there too: the bot hears the user (its
    socket's line moved into the desk's mix) and each key the user presses reaches it once as `websocket:dtmf` — any
    party on the call, not only a leg the socket was connected to."""
    server, bot, hooks, app_id, key = bot_app
    desk = [{"action": "conversation", "name": "desk"}]
    r = requests.post(server.http_url + "/v1/calls", headers={"Authorization": bearer(token(app_id, key))}, timeout=10, json={
        "to": [{"type": "websocket", "uri": bot.uri, "content-type": "audio/l16;rate=16000"}],
        "from": {"type": "phone", "number": "14155550100"}, "ncco": desk})
    assert r.status_code == 201, r.text
    wait_until(lambda: bot.ws is not None, timeout=10, what=lambda: f"socket opened; {hooks.events}")
    hooks.ncco = lambda req: desk

    async def press():
        rt = await Realtime(server.ws_url).connect()
        await rt.login(user_jwt(server, app_id, key, "alice"))
        created = await rt.request("call:create", {"to": "desk"})
        await wait_for(lambda: rt.seen("call:transfer"), timeout=10, what=lambda: f"moved into the desk; {hooks.events}")
        # The client follows its call into the desk (as the dialer does) and publishes there once its member is in.
        member = AudioMember(rt, rt.seen("call:transfer")[0]["body"]["conversation_id"])
        for attempt in range(40):
            try:
                await member.publish(sine_track(440))
                break
            except RequestError as e:
                if "notJoined" not in str(e) or attempt == 39:
                    raise
                await asyncio.sleep(0.25)
        await asyncio.sleep(2.5)
        heard = np.concatenate([np.frombuffer(m, dtype="<i2") for m in list(bot.audio)[-50:]]).astype(np.float64)
        assert np.abs(heard).max() > 1000 and tone_strength(heard, 16000, 440) > 20, "the bot hears the user in the desk"
        await rt.request("call:dtmf", {"call_id": created["call_id"], "digits": "42"})
        await wait_for(lambda: len(bot.named("websocket:dtmf")) >= 2, timeout=5, what=lambda: f"keys at the bot; {bot.events}")
        await asyncio.sleep(0.5)
        assert [e["digit"] for _, e in bot.named("websocket:dtmf")] == ["4", "2"], bot.events
        await member.close()
        await rt.close()

    asyncio.run(press())
