"""App-to-phone and phone-to-app calls through the whole path: an application's answer webhook returns the
tutorial's NCCO (talk, then connect to a phone), the call leaves over a SIP trunk to baresip, and the phone's
RTP joins the conversation's mix with the logged-in client's WebRTC audio, so each side hears the other's tone."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import time

import numpy as np
import pytest
import requests

from accounts_support import bearer, token
from media_support import collect_audio, dominant_frequency, sine_track, wav_samples
from rig import wait_until
from rooms_support import AudioMember, Realtime, drain, join_rest, tone_strength, wait_for
from phone_support import tone_wav
from sip_support import SIPP_SCENARIOS, Baresip, FreePort, SippPBX, api, metric, sipp, start_sip_server, trunk_and_number
from voice_support import Hooks, application, client_call, client_call_started, user_calls, user_jwt

PHONE = "15557654321"
APP_NUMBER = "15550142"


@pytest.fixture
def sip_server():
    server, port = start_sip_server()
    yield server, port
    server.stop()


@pytest.fixture
def answering_phone(sip_server, tmp_path):
    """An application whose webhooks are a `Hooks`, and an auto-answering baresip at PHONE (a 660 Hz tone) on a trunk
    that owns APP_NUMBER: (server, hooks, app_id, key, phone)."""
    server, _ = sip_server
    hooks = Hooks()
    app_id, key = application(server, hooks)
    phone = Baresip(f"<sip:{PHONE}@127.0.0.1>;regint=0;answermode=auto", tmp_path, tone=660)
    try:
        trunk_and_number(server, phone, app_id, APP_NUMBER)
        yield server, hooks, app_id, key, phone
    finally:
        phone.stop()


def frequency_of(samples, rate):
    return dominant_frequency(samples[-min(len(samples), rate):], rate)


def test_app_to_phone_tutorial_flow(answering_phone):
    server, hooks, app_id, key, phone = answering_phone
    # The tutorial's answer webhook: a prompt, then connect from the application's number to the dialled phone.
    hooks.ncco = lambda req: [{"action": "talk", "text": "Please wait while we connect you."},
                              {"action": "connect", "from": APP_NUMBER, "endpoint": [{"type": "phone", "number": req["to"]}]}]
    asyncio.run(_client_calls_phone(server, hooks, app_id, key, phone))


async def _client_calls_phone(server, hooks, app_id, key, phone):
    rt, created, member = await user_calls(server, app_id, key, "alice", PHONE, custom_data={"ref": "tutorial"})
    call_id, conversation = created["call_id"], created["conversation_id"]
    # The answer webhook saw the client's call as the tutorial's server does.
    await wait_for(lambda: hooks.answers, timeout=10, what="answer webhook")
    answer = hooks.answers[0]
    assert answer["to"] == PHONE and answer["from_user"] == "alice" and answer["custom_data"] == {"ref": "tutorial"}
    assert answer["uuid"] == call_id and answer["conversation_uuid"] == conversation

    # The connect leg reaches baresip through the trunk and is answered.
    await wait_for(lambda: len(hooks.legs()) == 2 and "answered" in hooks.statuses(hooks.legs()[1]), timeout=20,
                   what=lambda: f"phone leg answered; events {hooks.events}; baresip:\n{phone.log()[-2000:]}\nserver:\n{server.log()[-3000:]}")
    phone_leg = hooks.legs()[1]
    assert hooks.statuses(phone_leg)[:3] == ["started", "ringing", "answered"], hooks.events

    # The client hears the phone's 660 Hz through the conversation's mix.
    await wait_for(lambda: member.tracks, timeout=10, what="mix track")
    track = next(iter(member.tracks.values()))
    samples, rate = await collect_audio(track, 3.0)
    assert np.sqrt(np.mean(samples[-rate:] ** 2)) > 100, "the client hears nothing"
    heard = frequency_of(samples, rate)
    assert abs(heard - 660) < 15, f"client heard {heard} Hz"

    # Keys the client presses reach the phone as RFC 4733 events.
    await rt.request("call:dtmf", {"call_id": call_id, "digits": "5#"})
    await wait_for(lambda: "received event: '5'" in phone.log() and "received event: '#'" in phone.log(), timeout=10,
                   what=lambda: f"DTMF at the phone:\n{phone.log()[-1500:]}")

    # Hang up from the client: both legs complete, the phone is released.
    await rt.request("call:hangup", {"call_id": call_id})
    await wait_for(lambda: "completed" in hooks.statuses(phone_leg) and "completed" in hooks.statuses(call_id), timeout=10,
                   what=lambda: f"completed; events {hooks.events}")
    completed = [e for e in hooks.events if e.get("uuid") == phone_leg and e.get("status") == "completed"][0]
    assert int(completed["duration"]) >= 3 and completed["start_time"] and completed["end_time"]
    assert hooks.statuses(phone_leg) == ["started", "ringing", "answered", "completed"], hooks.events
    await member.close()
    await rt.close()
    # The phone heard the client's 440 Hz.
    played, rate = phone.played_once_ended()
    assert len(played) > rate * 2, "the phone recorded nothing"
    tone = played[-int(rate * 2.5):-int(rate * 0.5)]
    heard = dominant_frequency(tone, rate)
    assert abs(heard - 440) < 15, f"phone heard {heard} Hz"


def test_phone_to_app_rings_the_user_who_answers_and_hears_the_phone(sip_server, tmp_path):
    server, sip_port = sip_server
    hooks = Hooks()
    app_id, key = application(server, hooks)
    caller = Baresip(f"<sip:{PHONE}@127.0.0.1>;regint=0", tmp_path, tone=660)
    try:
        trunk_and_number(server, caller, app_id, APP_NUMBER)
        hooks.ncco = lambda req: [{"action": "connect", "endpoint": [{"type": "app", "user": "bob"}]}]
        asyncio.run(_phone_calls_user(server, hooks, app_id, key, caller, sip_port))
    finally:
        caller.stop()


async def _phone_calls_user(server, hooks, app_id, key, caller, sip_port):
    rt = await Realtime(server.ws_url).connect()
    await rt.login(user_jwt(server, app_id, key, "bob"))
    caller.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{sip_port}")
    await wait_for(lambda: rt.seen("call:invite"), timeout=15,
                   what=lambda: f"call:invite; events {hooks.events}\nbaresip:\n{caller.log()[-2000:]}\nserver:\n{server.log()[-2000:]}")
    invite = rt.seen("call:invite")[0]["body"]
    assert invite["from"] == {"type": "phone", "number": PHONE} and invite["channel_type"] == "phone"
    answer = hooks.answers[0]
    assert answer["to"] == APP_NUMBER and answer["from"] == PHONE
    await rt.request("call:answer", {"call_id": invite["call_id"]})
    member = AudioMember(rt, invite["conversation_id"])
    await member.publish(sine_track(440))
    await member.subscribe()
    await wait_for(lambda: member.tracks, timeout=10, what="mix track")
    samples, rate = await collect_audio(next(iter(member.tracks.values())), 3.0)
    heard = frequency_of(samples, rate)
    assert abs(heard - 660) < 15, f"the user heard {heard} Hz"
    inbound = hooks.legs()[0]
    assert hooks.statuses(inbound)[:3] == ["started", "ringing", "answered"], hooks.events
    # The phone hangs up: both legs complete and the user hears of it.
    caller.command("/hangup")
    await wait_for(lambda: "completed" in hooks.statuses(inbound) and "completed" in hooks.statuses(invite["call_id"]), timeout=10,
                   what=lambda: f"completed; events {hooks.events}")
    await member.close()
    await rt.close()
    time.sleep(0.5)
    played, rate = caller.played()
    tone = played[-int(rate * 2.5):-int(rate * 0.5)]
    heard = dominant_frequency(tone, rate)
    assert abs(heard - 440) < 15, f"the phone heard {heard} Hz"


def test_phone_to_app_rejected_and_unanswered(sip_server, tmp_path):
    server, sip_port = sip_server
    hooks = Hooks()
    app_id, key = application(server, hooks)
    caller = Baresip(f"<sip:{PHONE}@127.0.0.1>;regint=0", tmp_path, tone=660)
    try:
        trunk_and_number(server, caller, app_id, APP_NUMBER)
        hooks.ncco = lambda req: [{"action": "connect", "timeout": 3, "endpoint": [{"type": "app", "user": "carol"}]}]
        asyncio.run(_reject_then_ignore(server, hooks, app_id, key, caller, sip_port))
    finally:
        caller.stop()


async def _reject_then_ignore(server, hooks, app_id, key, caller, sip_port):
    rt = await Realtime(server.ws_url).connect()
    await rt.login(user_jwt(server, app_id, key, "carol"))
    caller.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{sip_port}")
    await wait_for(lambda: rt.seen("call:invite"), timeout=15, what="first invite")
    first = rt.seen("call:invite")[0]["body"]["call_id"]
    await rt.request("call:reject", {"call_id": first})
    await wait_for(lambda: "rejected" in hooks.statuses(first), timeout=10, what=lambda: f"rejected; {hooks.events}")
    inbound = hooks.legs()[0]
    # The call was never answered (a lone connect rings the user): the phone is refused with 603 Decline.
    await wait_for(lambda: "rejected" in hooks.statuses(inbound), timeout=10, what=lambda: f"inbound rejected; {hooks.events}")
    assert hooks.statuses(inbound) == ["started", "ringing", "rejected"], hooks.events
    wait_until(lambda: "603" in caller.log(), timeout=10, what=lambda: f"603 at the phone:\n{caller.log()[-1500:]}")
    await asyncio.sleep(1)
    caller.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{sip_port}")
    await wait_for(lambda: len(rt.seen("call:invite")) == 2, timeout=15, what="second invite")
    second = rt.seen("call:invite")[1]["body"]["call_id"]
    # Nobody answers within the connect's timeout: the app leg times out and the invite is withdrawn.
    await wait_for(lambda: "timeout" in hooks.statuses(second), timeout=15, what=lambda: f"timeout; {hooks.events}")
    await wait_for(lambda: rt.seen("call:invite:cancel", call_id=second), timeout=5, what="invite cancelled")
    assert rt.seen("call:invite:cancel", call_id=second)[0]["body"]["reason"] == "remoteTimeout"
    second_inbound = hooks.legs()[2]
    await wait_for(lambda: "timeout" in hooks.statuses(second_inbound), timeout=10, what=lambda: f"inbound timeout; {hooks.events}")
    wait_until(lambda: "480" in caller.log(), timeout=10, what=lambda: f"480 at the phone:\n{caller.log()[-1500:]}")
    await rt.close()


def test_development_test_phone_answers_says_its_prompt_and_echoes(tmp_path):
    """`serve --dev` puts a test phone on a loopback trunk: a call to it goes out over SIP to the server's own
    edge, which answers, says a prompt, then sends back what it hears."""
    server, _ = start_sip_server(dev=True)
    try:
        hooks = Hooks()
        app_id, key = application(server, hooks)
        numbers = api(server, "GET", "/account/numbers").json()["numbers"]
        assert [n["msisdn"] for n in numbers] == ["15550100"]
        trunks = api(server, "GET", "/v1/sip/trunks").json()
        trunks = trunks.get("trunks", trunks) if isinstance(trunks, dict) else trunks
        assert [t["name"] for t in trunks] == ["dev-loopback"]
        hooks.ncco = lambda req: [{"action": "connect", "endpoint": [{"type": "phone", "number": req["to"]}]}]
        asyncio.run(_call_test_phone(server, hooks, app_id, key))
    finally:
        server.stop()


async def _call_test_phone(server, hooks, app_id, key):
    rt, created, member = await user_calls(server, app_id, key, "newcomer", "15550100")
    await wait_for(lambda: len(hooks.legs()) == 2 and "answered" in hooks.statuses(hooks.legs()[1]), timeout=15,
                   what=lambda: f"test phone answered; {hooks.events}\n{server.log()[-3000:]}")
    await wait_for(lambda: member.tracks, timeout=10, what="mix track")
    track = next(iter(member.tracks.values()))
    # The prompt first: speech, not the caller's tone.
    prompt, rate = await collect_audio(track, 2.0)
    assert np.sqrt(np.mean(prompt ** 2)) > 100, "no prompt"
    # Speech spreads its energy; the caller's echoed tone would hold nearly all of it at 440 Hz (a voice's
    # harmonic can be the strongest single bin there, so the share is what is checked, not the peak).
    power = np.abs(np.fft.rfft(prompt)) ** 2
    freqs = np.fft.rfftfreq(len(prompt), 1 / rate)
    at_tone = power[(freqs > 425) & (freqs < 455)].sum() / power.sum()
    assert at_tone < 0.5, f"the first 2 s are the caller's tone ({at_tone:.0%} of the energy at 440 Hz), not the prompt"
    # Then the caller's own 440 Hz comes back.
    deadline = time.time() + 15
    while True:
        samples, rate = await collect_audio(track, 1.0)
        if np.sqrt(np.mean(samples ** 2)) > 100 and abs(dominant_frequency(samples, rate) - 440) < 15:
            break
        assert time.time() < deadline, "the test phone never echoed the caller's tone"
    await rt.request("call:hangup", {"call_id": created["call_id"]})
    await wait_for(lambda: "completed" in hooks.statuses(hooks.legs()[1]), timeout=10, what="completed")
    await member.close()
    await rt.close()


def sipp_presses_2_then_4(sip_server, tmp_path, ncco):
    """An application whose answer webhook returns `ncco(hooks)`; SIPp calls its number, sends the RFC 4733 keys 2
    (about 1 s after the answer) and 4 (about 2 s), and waits for the server's BYE. Returns the hooks, the
    application's id and key, and how long the call took."""
    from sip_support import SIPP_SCENARIOS, FreePort, sipp
    server, sip_port = sip_server
    hooks = Hooks()
    app_id, key = application(server, hooks)
    hooks.app = (app_id, key)
    phone = Baresip(f"<sip:{PHONE}@127.0.0.1>;regint=0", tmp_path)  # owns the trunk's address; SIPp calls from 127.0.0.1 too
    try:
        trunk_and_number(server, phone, app_id, APP_NUMBER)
        hooks.ncco = lambda req: ncco(hooks)
        started = time.monotonic()
        p = sipp(["-sf", str(SIPP_SCENARIOS / "uac-dtmf-input.xml"), f"127.0.0.1:{sip_port}", "-i", "127.0.0.1",
                  "-p", FreePort(), "-mp", FreePort(), "-m", "1", "-s", APP_NUMBER], timeout=40)
        took = time.monotonic() - started
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:] + server.log()[-2000:]
        return hooks, app_id, key, took
    finally:
        phone.stop()


def test_input_collects_rfc4733_digits_from_sipp(sip_server, tmp_path):
    hooks, _, _, _ = sipp_presses_2_then_4(sip_server, tmp_path, lambda hooks: [
        {"action": "input", "type": ["dtmf"], "dtmf": {"maxDigits": 2, "timeOut": 10}, "eventUrl": [hooks.url + "/event/input"]}])
    inputs = [e for e in hooks.events if "dtmf" in e]
    assert inputs and inputs[0]["dtmf"]["digits"] == "24" and inputs[0]["dtmf"]["timed_out"] is False, hooks.events
    wait_until(lambda: "completed" in hooks.statuses(hooks.legs()[0]), timeout=10, what=lambda: f"completed: {hooks.events}")


def test_record_holds_what_the_phone_says(sip_server, tmp_path):
    server, sip_port = sip_server
    hooks = Hooks()
    app_id, key = application(server, hooks)
    caller = Baresip("<sip:15550111@127.0.0.1>;regint=0", tmp_path, tone=660)
    try:
        trunk_and_number(server, caller, app_id, APP_NUMBER)
        # Record, then wait for a key that never comes: the call ends after the input's time-out, and the recording with it.
        hooks.ncco = lambda req: [{"action": "record", "format": "wav", "eventUrl": [hooks.url + "/event/record"]},
                                  {"action": "input", "type": ["dtmf"], "dtmf": {"timeOut": 4}}]
        caller.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{sip_port}")
        try:
            wait_until(lambda: [e for e in hooks.events if "recording_url" in e], timeout=20, what="record event")
        except TimeoutError:
            raise AssertionError(f"{hooks.events}\n{server.log()[-3000:]}")
        record = [e for e in hooks.events if "recording_url" in e][0]
        r = requests.get(record["recording_url"], headers={"Authorization": bearer(token(app_id, key))}, timeout=10)
        assert r.status_code == 200 and r.content[:4] == b"RIFF", r.status_code
        data, rate = wav_samples(io.BytesIO(r.content))
        assert len(data) > rate * 2, f"{len(data) / rate:.1f} s recorded"
        assert abs(dominant_frequency(data[-rate * 2:], rate) - 660) < 15
    finally:
        caller.stop()


def test_voicemail_record_ends_on_its_key_then_the_ncco_goes_on(sip_server, tmp_path):
    """A voicemail NCCO: a record with `endOnKey` holds the NCCO (a record with a condition that ends it is
    synchronous) until SIPp presses the key (RFC 4733 '2' at about 1 s is not it, '4' at about 2 s is), and
    begins with its beep; the `notify` after it runs once the recording has ended."""
    hooks, app_id, key, took = sipp_presses_2_then_4(sip_server, tmp_path, lambda hooks: [
        {"action": "record", "format": "wav", "endOnKey": "4", "beepStart": True, "timeOut": 30, "eventUrl": [hooks.url + "/event/record"]},
        {"action": "notify", "payload": {"step": "after the recording"}, "eventUrl": [hooks.url + "/event/notify"]}])
    # The NCCO ended (the server's BYE) well before the record's 30 s time-out.
    assert took < 15, f"the call took {took:.1f} s"
    # Both are webhooks in flight at once, so they may arrive in either order: wait for both.
    wait_until(lambda: any("step" in e for e in hooks.events) and any("recording_url" in e for e in hooks.events), timeout=10,
               what=lambda: f"the recording and the notify: {hooks.events}")
    records = [e for e in hooks.events if "recording_url" in e]
    notify = [e for e in hooks.events if "step" in e][0]
    assert len(records) == 1, hooks.events
    record = records[0]
    # The notify was made after.
    assert notify["timestamp"] >= record["timestamp"], (record, notify)
    r = requests.get(record["recording_url"], headers={"Authorization": bearer(token(app_id, key))}, timeout=10)
    assert r.status_code == 200 and r.content[:4] == b"RIFF", r.status_code
    data, rate = wav_samples(io.BytesIO(r.content))
    seconds = len(data) / rate
    print("recorded", seconds, "s;", record)
    # Answered, then '4' about 2 s later (the recorder starts once the leg's audio is in the mix).
    assert 0.8 < seconds < 4.0, f"{seconds:.2f} s recorded"
    beep = data[: rate // 5]
    assert np.abs(beep).max() > 1000 and abs(dominant_frequency(beep, rate) - 1000) < 30, "no beep at the start"


def test_conversation_joins_two_phones_and_a_browser(sip_server, tmp_path):
    server, sip_port = sip_server
    hooks = Hooks()
    app_id, key = application(server, hooks)
    first = Baresip("<sip:15550111@127.0.0.1>;regint=0", tmp_path / "a", tone=660)
    second = Baresip("<sip:15550222@127.0.0.1>;regint=0", tmp_path / "b", tone=880)
    try:
        trunk_and_number(server, first, app_id, APP_NUMBER)
        jwt = user_jwt(server, app_id, key, "carol")
        r = requests.post(server.http_url + "/v1/conversations", headers={"Authorization": bearer(token(app_id, key))},
                          json={"name": "standup"}, timeout=10)
        assert r.status_code in (200, 201), r.text
        conversation = r.json()["id"]
        hooks.ncco = lambda req: [{"action": "conversation", "name": "standup"}]
        asyncio.run(_standup(server, hooks, jwt, conversation, first, second, sip_port))
    finally:
        first.stop()
        second.stop()


def peaks(samples, rate, near):
    """Relative spectral energy at each frequency in `near` (±10 Hz), against the strongest of them."""
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    freqs = np.fft.rfftfreq(len(samples), 1 / rate)
    energy = {f: spectrum[(freqs > f - 10) & (freqs < f + 10)].max() for f in near}
    top = max(energy.values())
    return {f: e / top for f, e in energy.items()}


async def _standup(server, hooks, jwt, conversation, first, second, sip_port):
    from rooms_support import join_rest
    rt = await Realtime(server.ws_url).connect()
    await rt.login(jwt)
    join_rest(server.http_url, jwt, conversation)
    carol = AudioMember(rt, conversation)
    await carol.publish(sine_track(440))
    await carol.subscribe()
    first.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{sip_port}")
    second.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{sip_port}")
    await wait_for(lambda: len([l for l in hooks.legs() if "answered" in hooks.statuses(l)]) == 2, timeout=15,
                   what=lambda: f"both phones answered: {hooks.events}")
    await wait_for(lambda: carol.tracks, timeout=10, what=lambda: f"mix track; {hooks.events}\n{server.log()[-3000:]}")
    await asyncio.sleep(1.5)
    samples, rate = await collect_audio(next(iter(carol.tracks.values())), 3.0)
    heard = peaks(samples[-2 * rate:], rate, [440, 660, 880])
    assert heard[660] > 0.3 and heard[880] > 0.3 and heard[440] < 0.1, f"carol hears {heard}"
    first.command("/hangup")
    second.command("/hangup")
    await carol.close()
    await rt.close()
    # Each phone heard the other and carol, not itself.
    for phone, own, others in [(first, 660, [880, 440]), (second, 880, [660, 440])]:
        played, prate = phone.played()
        heard = peaks(played[-int(prate * 2.5):-int(prate * 0.5)], prate, [440, 660, 880])
        assert all(heard[f] > 0.2 for f in others) and heard[own] < 0.1, f"phone {own} heard {heard}"


def test_swift_sdk_client_calls_the_test_phone_and_hears_itself(tmp_path):
    """`switchboard client call` (the Swift SDK) places a server call to the development test phone with a 440 Hz
    tone as its microphone; its recording holds the phone's prompt, then its own tone echoed back over SIP/RTP."""
    server, _ = start_sip_server(dev=True)
    try:
        hooks = Hooks()
        app_id, key = application(server, hooks)
        hooks.ncco = lambda req: [{"action": "connect", "endpoint": [{"type": "phone", "number": req["to"]}]}]
        out = tmp_path / "heard.wav"
        events = client_call(server, "15550100", "sdk", user_jwt(server, app_id, key, "sdk"), "--play", "tone:440", "--record", str(out),
                             seconds=10, timeout=40)
        assert any(e.get("event") == "media" for e in events), events
        data, rate = wav_samples(out)
        assert len(data) > rate * 6, f"{len(data) / rate:.1f} s recorded"
        assert np.sqrt(np.mean(data[: rate * 3] ** 2)) > 100, "no prompt"
        tail = data[-rate * 2:]
        assert np.sqrt(np.mean(tail ** 2)) > 100 and abs(dominant_frequency(tail, rate) - 440) < 15, "no echo of the tone"
        wait_until(lambda: len(hooks.legs()) == 2 and "completed" in hooks.statuses(hooks.legs()[1]), timeout=10,
                   what=lambda: f"completed: {hooks.events}")
    finally:
        server.stop()


def test_answer_url_down_falls_back_then_fails_with_the_documented_events():
    """The answer URL refuses connections: the fallback answer URL gets `reason` and `original_request` and its NCCO
    runs; with the fallback down too, an error event and `failed`."""
    from rig import free_port
    server = start_sip_server()[0]
    try:
        hooks = Hooks()
        dead = f"http://127.0.0.1:{free_port()}/answer"
        for fallback, expect in [(hooks.url + "/answer-fallback", "completed"), (f"http://127.0.0.1:{free_port()}/fallback", "failed")]:
            r = api(server, "POST", "/v2/applications", json={"name": "fallback", "capabilities": {"voice": {"webhooks": {
                "answer_url": {"address": dead, "http_method": "POST"},
                "fallback_answer_url": {"address": fallback, "http_method": "POST"},
                "event_url": {"address": hooks.url + "/event", "http_method": "POST"}}}}})
            assert r.status_code == 201, r.text
            app_id, key = r.json()["id"], r.json()["keys"]["private_key"]
            hooks.ncco = lambda req: [{"action": "talk", "text": "from the fallback"}]
            hooks.answers.clear()
            asyncio.run(_place_and_wait(server, hooks, app_id, key, expect))
            if expect == "completed":
                assert hooks.answers[0]["reason"] and hooks.answers[0]["original_request"]["url"] == dead
    finally:
        server.stop()


async def _place_and_wait(server, hooks, app_id, key, expect):
    rt = await Realtime(server.ws_url).connect()
    await rt.login(user_jwt(server, app_id, key, "dana"))
    created = await rt.request("call:create", {"to": "15550999"})
    call = created["call_id"]
    await wait_for(lambda: expect in hooks.statuses(call), timeout=30, what=lambda: f"{expect}: {hooks.events}")
    if expect == "failed":
        errors = [e for e in hooks.events if e.get("type") == "error" and e.get("uuid") == call]
        assert errors and errors[0]["code"] == "answer-failed", hooks.events
    await rt.close()


def test_two_phones_in_a_named_conversation_hear_each_other_on_one_media_worker(tmp_path):
    """NCCO `conversation` moves each phone leg from its call's own mix into the named one. With one media
    worker both mixers run on the same loop: the moved leg must keep reading its socket there (it went deaf)."""
    server, sip_port = start_sip_server(["--threads", "1"])
    hooks = Hooks()
    low = Baresip(f"<sip:{PHONE}@127.0.0.1>;regint=0", tmp_path / "low", tone=440)
    high = Baresip("<sip:15557654322@127.0.0.1>;regint=0", tmp_path / "high", tone=660)
    try:
        app_id, _ = application(server, hooks)
        trunk_and_number(server, low, app_id, APP_NUMBER)
        hooks.ncco = lambda req: [{"action": "conversation", "name": "bridge"}]
        low.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{sip_port}")
        wait_until(lambda: "answered" in hooks.statuses(hooks.legs()[0]) if hooks.legs() else False, timeout=15,
                   what=lambda: f"first call answered; {hooks.events}\n{low.log()[-1500:]}")
        high.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{sip_port}")
        wait_until(lambda: len(hooks.legs()) == 2 and "answered" in hooks.statuses(hooks.legs()[1]), timeout=15,
                   what=lambda: f"second call answered; {hooks.events}\n{high.log()[-1500:]}")
        time.sleep(4)
        low.command("/hangup")
        high.command("/hangup")
        wait_until(lambda: all("completed" in hooks.statuses(leg) for leg in hooks.legs()), timeout=10, what=lambda: f"completed; {hooks.events}")
        time.sleep(0.5)
        for phone, other in ((low, 660), (high, 440)):
            played, rate = phone.played()
            assert len(played) > rate * 3, "the phone recorded nothing"
            tone = played[-int(rate * 2.5):-int(rate * 0.5)]
            assert np.sqrt(np.mean(tone ** 2)) > 100, "the phone hears silence"
            heard = dominant_frequency(tone, rate)
            assert abs(heard - other) < 15, f"the phone heard {heard} Hz, not the other phone's {other} Hz"
        # What the phones said reached the mix: frames a line threw away once mixed are a few at most; what it
        # discarded before it was first mixed (said while the move was under way) is counted apart.
        from sip_support import metric
        said = metric(server, "switchboard_phone_rtp_packets_total", direction="received") or 0
        lost = sum(metric(server, f"switchboard_phone_frames_{k}_total") or 0 for k in ("dropped", "trimmed"))
        assert said > 300 and metric(server, "switchboard_phone_frames_unmixed_total") is not None
        assert lost <= 0.02 * said, f"{lost} of {said} frames from the phones were thrown away"
        # Two G.711 phones and nobody else: the conversation mixes at 8 kHz and no frame is resampled.
        assert metric(server, "switchboard_phone_frames_resampled_total") == 0
    finally:
        low.stop()
        high.stop()
        server.stop()


class TwoPhones:
    """Two baresip phones (440 Hz, the trunk's owner, and 660 Hz) and an application whose number they call."""

    def __init__(self, server, tmp_path):
        self.hooks = Hooks()
        self.first = Baresip(f"<sip:{PHONE}@127.0.0.1>;regint=0", tmp_path / "first", tone=440)
        self.second = Baresip("<sip:15557654322@127.0.0.1>;regint=0", tmp_path / "second", tone=660)
        try:
            self.app_id, self.key = application(server, self.hooks)
            trunk_and_number(server, self.first, self.app_id, APP_NUMBER)
        except BaseException:
            self.stop()
            raise

    def stop(self):
        self.first.stop()
        self.second.stop()


def dial_in(hooks, sip_port, *phones, settle=0.0):
    """Each phone in turn dials the application's number; returns once every call is answered (`settle` s after each)."""
    for n, phone in enumerate(phones):
        phone.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{sip_port}")
        wait_until(lambda: len(hooks.legs()) > n and "answered" in hooks.statuses(hooks.legs()[n]), timeout=15,
                   what=lambda: f"call {n} answered; {hooks.events}\n{phone.log()[-1500:]}")
        time.sleep(settle)


def test_a_recorded_conversation_reports_one_file_holding_both_phones_once_it_empties(sip_server, tmp_path):
    """NCCO `conversation` with `record: true` and its own eventUrl, run by two phone calls: one MP3 of the
    conversation (not one per leg), reported when the last leg has left, holding both phones' tones."""
    server, sip_port = sip_server
    phones = TwoPhones(server, tmp_path)
    hooks, low, high, app_id, key = phones.hooks, phones.first, phones.second, phones.app_id, phones.key
    try:
        hooks.ncco = lambda req: [{"action": "conversation", "name": "recorded", "record": True,
                                   "eventUrl": [hooks.url + "/event/conversation-recording"]}]
        dial_in(hooks, sip_port, low, high)
        time.sleep(3)
        low.command("/hangup")
        time.sleep(1)
        assert not [e for e in hooks.events if "recording_url" in e], "reported before the conversation emptied"
        high.command("/hangup")
        wait_until(lambda: [e for e in hooks.events if "recording_url" in e], timeout=15, what=lambda: f"the recording; {hooks.events}")
        time.sleep(1)
        records = [e for e in hooks.events if "recording_url" in e]
        assert len(records) == 1, records
        record = records[0]
        r = requests.get(record["recording_url"], headers={"Authorization": bearer(token(app_id, key))}, timeout=10)
        assert r.status_code == 200 and r.headers["content-type"] == "audio/mpeg", (r.status_code, r.headers)
        mp3, wav = tmp_path / "conversation.mp3", tmp_path / "conversation.wav"
        mp3.write_bytes(r.content)
        subprocess.run(["sox", str(mp3), "-c", "1", str(wav)], check=True)
        data, rate = wav_samples(wav)
        print("recorded", len(data) / rate, "s;", record)
        assert 3.0 < len(data) / rate < 8.0
        both = data[-int(rate * 2.5):-int(rate * 1.5)]  # the last seconds before the first phone left
        for tone in (440, 660):
            assert tone_strength(both, rate, tone) > 20, f"{tone} Hz is missing from the recording"
    finally:
        phones.stop()


def heard(phone, start, end):
    """The dominant frequency and RMS of what `phone` heard between `start` and `end` seconds (negative: from the end)."""
    played, rate = phone.played()
    part = played[int(start * rate) if start >= 0 else len(played) + int(start * rate):
                  int(end * rate) if end > 0 else len(played) + int(end * rate)]
    return dominant_frequency(part, rate), float(np.sqrt(np.mean(part ** 2)))


def test_a_moderated_conversation_holds_attendees_on_music_until_the_moderator_joins(sip_server, tmp_path):
    """NCCO `conversation` with `startOnEnter: false` and `musicOnHoldUrl` for the first caller (an attendee), the
    default `startOnEnter: true` for the second (the moderator): the attendee hears the 800 Hz music until the
    moderator joins, then each phone hears the other; the Voice API's mute of the moderator's call silences it."""
    from phone_support import tone_wav
    server, sip_port = sip_server
    phones = TwoPhones(server, tmp_path)
    hooks, attendee, moderator, app_id, key = phones.hooks, phones.first, phones.second, phones.app_id, phones.key
    hooks.files["/hold.wav"] = tone_wav(800, seconds=4, rate=16000).read_bytes()
    try:
        hooks.ncco = lambda req: [{"action": "conversation", "name": "moderated", "startOnEnter": len(hooks.answers) > 1,
                                   "musicOnHoldUrl": [hooks.url + "/hold.wav"]}]
        dial_in(hooks, sip_port, attendee, moderator, settle=3)
        r = requests.put(server.http_url + f"/v1/calls/{hooks.legs()[1]}", json={"action": "mute"},
                         headers={"Authorization": bearer(token(app_id, key))}, timeout=10)
        assert r.status_code == 204, r.text
        time.sleep(2)
        attendee.command("/hangup")
        moderator.command("/hangup")
        wait_until(lambda: all("completed" in hooks.statuses(leg) for leg in hooks.legs()), timeout=10, what=lambda: f"completed; {hooks.events}")
        time.sleep(0.5)
        waiting, together, muted = heard(attendee, 0.5, 2.5), heard(attendee, -4.5, -2.5), heard(attendee, -1.5, -0.3)
        print("attendee: waiting", waiting, "with the moderator", together, "moderator muted", muted, "; moderator", heard(moderator, -4.5, -2.5))
        assert abs(waiting[0] - 800) < 15 and waiting[1] > 100, f"the waiting attendee heard {waiting}, not the music on hold"
        assert abs(together[0] - 660) < 15 and together[1] > 100, f"the attendee heard {together}, not the moderator"
        assert muted[1] < 30, f"the moderator's call was muted, yet the attendee heard {muted}"
        assert abs(heard(moderator, -4.5, -2.5)[0] - 440) < 15, "the moderator does not hear the attendee"
    finally:
        phones.stop()


def tones_every_half_second(samples, rate):
    """The dominant frequency (to 10 Hz) of each half second, None where it is quiet."""
    half = rate // 2
    return [round(dominant_frequency(samples[i:i + half], rate) / 10) * 10 if np.sqrt(np.mean(samples[i:i + half] ** 2)) > 100 else None
            for i in range(0, len(samples) - half, half)]


def test_an_app_user_starts_a_moderated_conversation_for_a_waiting_phone(sip_server, tmp_path):
    """The moderator is an app user (`switchboard client call`, the Swift SDK, with a 660 Hz microphone) whose NCCO
    joins the conversation with the default `startOnEnter`: its client follows the call into the conversation
    (`call:transfer`), and the phone attendee waiting on the 800 Hz music hears the moderator instead, and never the
    music again."""
    from phone_support import tone_wav
    server, sip_port = sip_server
    hooks = Hooks()
    hooks.files["/hold.wav"] = tone_wav(800, seconds=4, rate=16000).read_bytes()
    attendee = Baresip(f"<sip:{PHONE}@127.0.0.1>;regint=0", tmp_path, tone=440)
    try:
        app_id, key = application(server, hooks)
        trunk_and_number(server, attendee, app_id, APP_NUMBER)
        hooks.ncco = lambda req: [{"action": "conversation", "name": "app-moderated", "startOnEnter": "from_user" in req,
                                   "musicOnHoldUrl": [hooks.url + "/hold.wav"]}]
        dial_in(hooks, sip_port, attendee, settle=2.5)
        events = client_call(server, "moderated-room", "moderator", user_jwt(server, app_id, key, "moderator"), "--play", "tone:660",
                             seconds=5, timeout=40)
        moved = [e for e in events if e.get("event") == "call:transfer"]
        assert moved and {"event": "media", "conversation_id": moved[0]["conversation_id"]} in events, events
        assert not [e for e in events if e.get("event") == "call:hangup" and e.get("reason") != "localHangup"], events
        time.sleep(1)
        attendee.command("/hangup")
        wait_until(lambda: "completed" in hooks.statuses(hooks.legs()[0]), timeout=10, what=lambda: f"completed; {hooks.events}")
        time.sleep(0.5)
        heard_tones = tones_every_half_second(*attendee.played())
        print("the attendee heard, every 0.5 s:", heard_tones)
        assert heard_tones.count(660) >= 4, f"the moderator was not heard: {heard_tones}"
        assert heard_tones[:heard_tones.index(660)].count(800) >= 3, f"no music on hold before the moderator: {heard_tones}"
        assert 800 not in heard_tones[heard_tones.index(660):], f"the music came back: {heard_tones}"
    finally:
        attendee.stop()


def test_an_app_user_waits_on_music_until_a_phone_starts_the_conversation(sip_server, tmp_path):
    """The attendee is an app user (`switchboard client call`, the Swift SDK, with a 550 Hz microphone) whose NCCO
    joins with `startOnEnter: false`: its client follows the call (`call:transfer`) and hears the 800 Hz music on
    hold, its own microphone heard by nobody; a phone (440 Hz) that starts the conversation joins 4 s later: the
    app user hears the phone and never the music again, and the phone hears the app user until the Voice API mutes
    the app user's call."""
    from phone_support import tone_wav
    server, sip_port = sip_server
    hooks = Hooks()
    hooks.files["/hold.wav"] = tone_wav(800, seconds=4, rate=16000).read_bytes()
    moderator = Baresip(f"<sip:{PHONE}@127.0.0.1>;regint=0", tmp_path, tone=440)
    out = tmp_path / "attendee-heard.wav"
    try:
        app_id, key = application(server, hooks)
        trunk_and_number(server, moderator, app_id, APP_NUMBER)
        hooks.ncco = lambda req: [{"action": "conversation", "name": "app-attendee", "startOnEnter": "from_user" not in req,
                                   "musicOnHoldUrl": [hooks.url + "/hold.wav"]}]
        call = client_call_started(server, "waiting-room", "attendee", user_jwt(server, app_id, key, "attendee"),
                                   "--play", "tone:550", "--record", str(out), seconds=13, timeout=50)
        wait_until(lambda: hooks.legs(), timeout=15, what=lambda: f"the app user's call; {hooks.events}")
        time.sleep(3.5)
        dial_in(hooks, sip_port, moderator, settle=3.5)
        r = requests.put(server.http_url + f"/v1/calls/{hooks.legs()[0]}", json={"action": "mute"},
                         headers={"Authorization": bearer(token(app_id, key))}, timeout=10)
        assert r.status_code == 204, r.text
        time.sleep(2.2)
        moderator.command("/hangup")
        events = call()
        moved = [e for e in events if e.get("event") == "call:transfer"]
        assert moved and {"event": "media", "conversation_id": moved[0]["conversation_id"]} in events, events
        heard_tones = tones_every_half_second(*wav_samples(out))
        print("the app attendee heard, every 0.5 s:", heard_tones)
        assert heard_tones.count(800) >= 3, f"no music on hold: {heard_tones}"
        assert 550 not in heard_tones, f"the attendee heard itself: {heard_tones}"
        assert heard_tones.count(440) >= 4, f"the phone that started the conversation was not heard: {heard_tones}"
        assert heard_tones.index(800) < heard_tones.index(440), heard_tones
        assert 800 not in heard_tones[heard_tones.index(440):], f"the music came back: {heard_tones}"
        by_phone, after_mute = heard(moderator, -4.5, -2.7), heard(moderator, -1.5, -0.3)
        print("the phone heard", by_phone, "then, once the API muted the app leg,", after_mute)
        assert abs(by_phone[0] - 550) < 15 and by_phone[1] > 100, f"the phone did not hear the app user: {by_phone}"
        assert after_mute[1] < 30, f"the app leg muted through the Voice API was still heard: {after_mute}"
    finally:
        moderator.stop()


def test_an_app_attendee_whose_client_comes_late_still_gets_the_music(sip_server):
    """An app user's NCCO holds it with `startOnEnter: false` and music on hold; its client (aiortc over the realtime
    protocol) follows the `call:transfer` only 4 s later, when nobody is in the conversation to play the music to:
    the music starts once it comes, and it hears that and not its own 550 Hz microphone."""
    from phone_support import tone_wav
    server, _ = sip_server
    hooks = Hooks()
    hooks.files["/hold.wav"] = tone_wav(800, seconds=4, rate=16000).read_bytes()
    app_id, key = application(server, hooks)
    hooks.ncco = lambda req: [{"action": "conversation", "name": "late-attendee", "startOnEnter": False,
                               "musicOnHoldUrl": [hooks.url + "/hold.wav"]}]

    async def late():
        rt = await Realtime(server.ws_url).connect()
        await rt.login(user_jwt(server, app_id, key, "late"))
        created = await rt.request("call:create", {"to": "late-room"})
        await wait_for(lambda: rt.seen("call:transfer", call_id=created["call_id"]), timeout=15, what=lambda: f"call:transfer; {hooks.events}")
        await asyncio.sleep(4)
        member = AudioMember(rt, rt.seen("call:transfer")[0]["body"]["conversation_id"])
        await member.publish(sine_track(550))
        await member.subscribe()
        await wait_for(lambda: member.tracks, timeout=10, what="mix track")
        samples, rate = await collect_audio(next(iter(member.tracks.values())), 2.5)
        await rt.request("call:hangup", {"call_id": created["call_id"]})
        return samples[-rate:], rate

    samples, rate = asyncio.run(late())
    print("the late attendee heard", frequency_of(samples, rate), "Hz, RMS", np.sqrt(np.mean(samples ** 2)))
    assert np.sqrt(np.mean(samples ** 2)) > 100 and abs(frequency_of(samples, rate) - 800) < 15, "no music on hold for a late client"


def test_an_app_leg_alone_in_its_conversation_keeps_its_can_hear_for_whoever_comes(sip_server):
    """An app user's NCCO joins a conversation with `canHear: []` while nobody is in it; its client (aiortc, 550 Hz)
    follows a moment later, then a plain member (660 Hz) joins through the Conversation API: the member hears the
    app user, and the app user hears nobody."""
    server, _ = sip_server
    hooks = Hooks()
    app_id, key = application(server, hooks)
    hooks.ncco = lambda req: [{"action": "conversation", "name": "hears-nobody", "canHear": []}]

    async def run():
        rt = await Realtime(server.ws_url).connect()
        await rt.login(user_jwt(server, app_id, key, "deaf"))
        created = await rt.request("call:create", {"to": "hears-nobody"})
        await wait_for(lambda: rt.seen("call:transfer", call_id=created["call_id"]), timeout=15, what=lambda: f"call:transfer; {hooks.events}")
        conversation = rt.seen("call:transfer")[0]["body"]["conversation_id"]
        await asyncio.sleep(1.5)
        caller = AudioMember(rt, conversation)
        await caller.publish(sine_track(550))
        await caller.subscribe()
        other_jwt = user_jwt(server, app_id, key, "bystander")
        join_rest(server.http_url, other_jwt, conversation)
        other_rt = await Realtime(server.ws_url).connect()
        await other_rt.login(other_jwt)
        other = AudioMember(other_rt, conversation)
        await other.publish(sine_track(660))
        await other.subscribe()
        await wait_for(lambda: other.tracks and caller.tracks, timeout=10, what="mix tracks")
        by_other, rate = await collect_audio(next(iter(other.tracks.values())), 2.5)
        by_caller = []
        try:
            by_caller, _ = await collect_audio(next(iter(caller.tracks.values())), 1.5)
        except (asyncio.TimeoutError, TimeoutError):
            pass  # nothing audible: the mix may send nothing at all
        await rt.request("call:hangup", {"call_id": created["call_id"]})
        return by_other[-rate:], np.asarray(by_caller[-rate:], dtype=np.float64), rate

    by_other, by_caller, rate = asyncio.run(run())
    print("the member heard", frequency_of(by_other, rate), "Hz; the app user heard RMS", np.sqrt(np.mean(by_caller ** 2)) if len(by_caller) else "nothing")
    assert np.sqrt(np.mean(by_other ** 2)) > 100 and abs(frequency_of(by_other, rate) - 550) < 15, "the member did not hear the app user"
    assert not len(by_caller) or np.sqrt(np.mean(by_caller ** 2)) < 30, "the app user with canHear: [] heard the member"


def test_an_app_leg_follows_its_conversations_mute_and_can_hear(sip_server, tmp_path):
    """A phone (440 Hz) joins a conversation first; an app user (the Swift SDK, 550 Hz) joins it with `mute: true` and
    `canHear: [the phone's leg]`: the app user hears the phone, and the phone hears nobody."""
    server, sip_port = sip_server
    hooks = Hooks()
    phone = Baresip(f"<sip:{PHONE}@127.0.0.1>;regint=0", tmp_path, tone=440)
    out = tmp_path / "app-heard.wav"
    try:
        app_id, key = application(server, hooks)
        trunk_and_number(server, phone, app_id, APP_NUMBER)

        def ncco(req):
            action = {"action": "conversation", "name": "listen-only"}
            if "from_user" in req:
                action.update(mute=True, canHear=[hooks.legs()[0]])
            return [action]
        hooks.ncco = ncco
        dial_in(hooks, sip_port, phone)
        events = client_call(server, "listen-room", "listener", user_jwt(server, app_id, key, "listener"),
                             "--play", "tone:550", "--record", str(out), seconds=7, timeout=40)
        phone.command("/hangup")
        wait_until(lambda: "completed" in hooks.statuses(hooks.legs()[0]), timeout=10, what=lambda: f"completed; {hooks.events}")
        time.sleep(0.5)
        assert [e for e in events if e.get("event") == "call:transfer"], events
        heard_tones = tones_every_half_second(*wav_samples(out))
        print("the app user heard, every 0.5 s:", heard_tones)
        assert heard_tones.count(440) >= 4, f"the app user did not hear the phone: {heard_tones}"
        by_phone = heard(phone, -4.0, -1.0)
        print("the phone heard", by_phone)
        assert by_phone[1] < 30, f"the muted app user was heard: {by_phone}"
    finally:
        phone.stop()


def test_conversation_can_hear_and_can_speak_lists_limit_who_hears_whom(sip_server, tmp_path):
    """The second phone joins with `canHear: [the first leg]` and `canSpeak: []`: it hears the first phone,
    and the first phone hears nobody (nobody is allowed to hear the second)."""
    server, sip_port = sip_server
    phones = TwoPhones(server, tmp_path)
    hooks, first, second = phones.hooks, phones.first, phones.second
    try:
        def ncco(req):
            action = {"action": "conversation", "name": "limited"}
            if len(hooks.answers) > 1:
                action.update(canHear=[hooks.answers[0]["uuid"]], canSpeak=[])
            return [action]
        hooks.ncco = ncco
        dial_in(hooks, sip_port, first, second)
        time.sleep(3.5)
        first.command("/hangup")
        second.command("/hangup")
        wait_until(lambda: all("completed" in hooks.statuses(leg) for leg in hooks.legs()), timeout=10, what=lambda: f"completed; {hooks.events}")
        time.sleep(0.5)
        by_first, by_second = heard(first, -2.5, -0.5), heard(second, -2.5, -0.5)
        print("first heard", by_first, "second heard", by_second)
        assert abs(by_second[0] - 440) < 15 and by_second[1] > 100, f"the second phone heard {by_second}, not the first"
        assert by_first[1] < 30, f"nobody may hear the second phone, yet the first heard {by_first}"
    finally:
        phones.stop()


def test_connect_plays_its_ringback_tone_to_the_caller_until_the_phone_answers(sip_server, tmp_path):
    """A phone calls in; its NCCO connects it to another phone with `ringbackTone` (900 Hz, served by the
    application): the caller hears it while the callee rings, then the callee (answered by hand 3 s later), which
    gets the endpoint's `dtmfAnswer` keys once it answers; `randomFromNumber` calls from the application's number;
    the call's `record` with `split: conversation` and 3 channels holds each voice on its own channel."""
    from phone_support import tone_wav
    server, sip_port = sip_server
    hooks = Hooks()
    hooks.files["/ringback.wav"] = tone_wav(900, seconds=2, rate=16000).read_bytes()
    callee = Baresip(f"<sip:{PHONE}@127.0.0.1>;regint=0", tmp_path / "callee", tone=660)  # rings until told to answer
    caller = Baresip("<sip:15550111@127.0.0.1>;regint=0", tmp_path / "caller", tone=440)
    try:
        app_id, key = application(server, hooks)
        trunk_and_number(server, callee, app_id, APP_NUMBER)
        hooks.ncco = lambda req: [{"action": "record", "format": "wav", "split": "conversation", "channels": 3,
                                   "eventUrl": [hooks.url + "/event/record"]},
                                  {"action": "connect", "randomFromNumber": True, "ringbackTone": hooks.url + "/ringback.wav",
                                   "endpoint": [{"type": "phone", "number": PHONE, "dtmfAnswer": "1p2"}]}]
        caller.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{sip_port}")
        wait_until(lambda: len(hooks.legs()) == 2 and "ringing" in hooks.statuses(hooks.legs()[1]), timeout=15,
                   what=lambda: f"the callee ringing; {hooks.events}\n{callee.log()[-1500:]}")
        time.sleep(3)
        callee.command("/accept")
        wait_until(lambda: "answered" in hooks.statuses(hooks.legs()[1]), timeout=10, what=lambda: f"answered; {hooks.events}")
        # `dtmfAnswer`: the answered phone gets the keys, the pause between them.
        wait_until(lambda: "received event: '2'" in callee.log(), timeout=5, what=lambda: f"dtmfAnswer at the callee:\n{callee.log()[-1500:]}")
        log = callee.log()
        assert log.index("received event: '1'") < log.index("received event: '2'")
        # `randomFromNumber`: the call leaves from the application's only number, not the caller's.
        assert {e["from"] for e in hooks.events if e.get("uuid") == hooks.legs()[1] and "status" in e} == {APP_NUMBER}, hooks.events
        time.sleep(2)
        caller.command("/hangup")
        wait_until(lambda: all("completed" in hooks.statuses(leg) for leg in hooks.legs()), timeout=10, what=lambda: f"completed; {hooks.events}")
        time.sleep(0.5)
        ringing, connected = heard(caller, 0.5, 2.5), heard(caller, -2.5, -0.5)
        print("caller heard", ringing, "while ringing,", connected, "once connected")
        assert abs(ringing[0] - 900) < 15 and ringing[1] > 100, f"the caller heard {ringing}, not the ringback tone"
        assert abs(connected[0] - 660) < 15 and connected[1] > 100, f"the caller heard {connected}, not the callee"
        # The call's recording, a channel per leg: the caller first, then the ringback tone and the callee as first heard.
        wait_until(lambda: [e for e in hooks.events if "recording_url" in e], timeout=10, what=lambda: f"the recording; {hooks.events}")
        record = [e for e in hooks.events if "recording_url" in e][0]
        r = requests.get(record["recording_url"], headers={"Authorization": bearer(token(app_id, key))}, timeout=10)
        assert r.status_code == 200 and r.content[22] == 3, r.status_code
        channels = np.frombuffer(r.content[44:], dtype="<i2").astype(np.float64).reshape(-1, 3)
        tones = [dominant_frequency(channels[:, c], 48000) for c in range(3)]
        print("recorded channels", tones)
        assert abs(tones[0] - 440) < 15 and sorted(round(t / 10) * 10 for t in tones[1:]) == [660, 900], tones
    finally:
        caller.stop()
        callee.stop()


def test_voice_api_streams_speaks_and_sends_keys_into_a_phone_call(sip_server, tmp_path):
    """`PUT /v1/calls/{uuid}/stream`, `/talk` and `/dtmf` into a phone call that sits in a conversation, and
    their DELETEs: the phone hears the 700 Hz stream until it is stopped, then silence, then speech, and gets
    the keys as RFC 4733 events; earmuffed through the Conversation API (its member's media), it hears nothing."""
    from phone_support import tone_wav
    server, sip_port = sip_server
    hooks = Hooks()
    hooks.files["/music.wav"] = tone_wav(700, seconds=1, rate=16000).read_bytes()
    phone = Baresip("<sip:15550111@127.0.0.1>;regint=0", tmp_path, tone=440)
    try:
        app_id, key = application(server, hooks)
        trunk_and_number(server, phone, app_id, APP_NUMBER)
        hooks.ncco = lambda req: [{"action": "conversation", "name": "api-media"}]
        dial_in(hooks, sip_port, phone)
        uuid = hooks.legs()[0]
        auth = {"Authorization": bearer(token(app_id, key))}

        def call(method, path, **body):
            r = requests.request(method, server.http_url + f"/v1/calls/{uuid}{path}", json=body or None, headers=auth, timeout=10)
            assert r.status_code == 200, (method, path, r.status_code, r.text)

        time.sleep(1)
        call("PUT", "/stream", stream_url=[hooks.url + "/music.wav"], loop=0)
        time.sleep(2)
        call("DELETE", "/stream")
        time.sleep(1)
        call("PUT", "/talk", text="This is a message from the application, read to the caller.", language="en-US")
        time.sleep(2.5)
        call("DELETE", "/talk")
        call("PUT", "/dtmf", digits="3p4")
        wait_until(lambda: "received event: '4'" in phone.log(), timeout=5, what=lambda: f"the keys at the phone:\n{phone.log()[-1500:]}")
        assert phone.log().index("received event: '3'") < phone.log().index("received event: '4'")
        # The stream again, then the leg's member earmuffed through the Conversation API: the phone hears nothing more.
        call("PUT", "/stream", stream_url=[hooks.url + "/music.wav"], loop=0)
        time.sleep(1.5)
        leg = requests.get(server.http_url + f"/v1/calls/{uuid}", headers=auth, timeout=10).json()
        members = requests.get(server.http_url + f"/v1/conversations/{leg['conversation_uuid']}/members", headers=auth, timeout=10).json()
        member = [m for m in members["_embedded"]["members"] if m["state"] == "JOINED"][0]
        r = requests.patch(server.http_url + f"/v1/conversations/{leg['conversation_uuid']}/members/{member['id']}",
                           json={"media": {"audio_settings": {"earmuffed": True}}}, headers=auth, timeout=10)
        assert r.status_code == 200, r.text
        time.sleep(1.5)
        phone.command("/hangup")
        wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=10, what=lambda: f"completed; {hooks.events}")
        time.sleep(0.5)
        streamed, stopped, spoken = heard(phone, 1.6, 2.8), heard(phone, 3.3, 3.9), heard(phone, 4.4, 6.0)
        again, earmuffed = heard(phone, -2.6, -1.8), heard(phone, -1.0, -0.3)
        print("stream", streamed, "after stopping it", stopped, "talk", spoken, "the stream again", again, "earmuffed", earmuffed)
        assert abs(again[0] - 700) < 15 and again[1] > 100 and earmuffed[1] < 30, (again, earmuffed)
        assert abs(streamed[0] - 700) < 15 and streamed[1] > 100, f"the phone heard {streamed}, not the stream"
        assert stopped[1] < 30, f"the stream was stopped, yet the phone heard {stopped}"
        assert spoken[1] > 100 and abs(spoken[0] - 700) > 50, f"the phone heard {spoken}, not speech"
    finally:
        phone.stop()


def test_a_slow_event_url_does_not_stall_calls():
    """Every event takes the receiver 2 s: calls are still placed at once and their NCCOs run (the answer URL is
    called for each), events arrive later in order, and /metrics counts them delivered."""
    from sip_support import metric
    server = start_sip_server()[0]
    slow = Hooks()
    fast = Hooks()
    handler = slow.http.RequestHandlerClass
    original = handler._handle

    def slow_handle(self):
        time.sleep(2)
        original(self)
    handler.do_POST = handler.do_GET = slow_handle
    try:
        r = api(server, "POST", "/v2/applications", json={"name": "slow events", "capabilities": {"voice": {"webhooks": {
            "answer_url": {"address": fast.url + "/answer", "http_method": "POST"},
            "event_url": {"address": slow.url + "/event", "http_method": "POST"}}}}})
        app_id, key = r.json()["id"], r.json()["keys"]["private_key"]
        fast.ncco = lambda req: [{"action": "talk", "text": "hello"}]

        async def place():
            rt = await Realtime(server.ws_url).connect()
            await rt.login(user_jwt(server, app_id, key, "frank"))
            start = time.monotonic()
            calls = [(await rt.request("call:create", {"to": "15550999"}))["call_id"] for _ in range(4)]
            placed = time.monotonic() - start
            await wait_for(lambda: len(fast.answers) == 4, timeout=5, what="every answer URL called")
            answered = time.monotonic() - start
            await rt.close()
            return calls, placed, answered
        calls, placed, answered = asyncio.run(place())
        assert placed < 2 and answered < 4, f"placed in {placed:.1f} s, NCCOs fetched in {answered:.1f} s"
        # Each leg's events still arrive, in order, once the receiver gets to them.
        wait_until(lambda: all(slow.statuses(c)[:3] == ["started", "ringing", "answered"] for c in calls), timeout=60,
                   what=f"events: {[slow.statuses(c) for c in calls]}")
        # The receiver records an event before it answers, and a delivery counts when its answer is in.
        wait_until(lambda: (metric(server, "switchboard_voice_event_delivered_total") or 0) >= 12, timeout=10,
                   what="12 events counted delivered")
    finally:
        server.stop()


def number_on_a_sipp_trunk(server, app_id):
    """APP_NUMBER, the application's, on a trunk that takes calls from SIPp on 127.0.0.1."""
    r = api(server, "POST", "/v1/sip/trunks", json={"name": "pbx", "host": "127.0.0.1", "port": 5999, "transport": "udp",
                                                     "allow": ["127.0.0.0/8"], "health_interval": 0})
    assert r.status_code == 201, r.text
    assert api(server, "POST", "/number/buy", data={"country": "US", "msisdn": APP_NUMBER, "trunk_id": r.json()["id"]}).status_code == 200
    assert api(server, "POST", "/number/update", data={"country": "US", "msisdn": APP_NUMBER, "app_id": app_id}).status_code == 200


def test_a_reinvite_to_another_codec_is_answered_and_heard_in_it(sip_server):
    """A caller (SIPp) answered in PCMU re-INVITEs offering only PCMA: the 200 answers PCMA with telephone-event (SIPp
    checks the body), and the leg goes on in PCMA — SIPp's RTP echo sends our PCMA back, and the caller's side of
    the call's recording (the left channel of `split`) holds our 440 Hz after the switch."""
    server, sip_port = sip_server
    hooks = Hooks()
    hooks.files["/tone.wav"] = tone_wav(440, seconds=6, rate=16000).read_bytes()
    app_id, key = application(server, hooks)
    hooks.ncco = lambda req: [{"action": "record", "format": "wav", "split": "conversation", "eventUrl": [hooks.url + "/event/record"]},
                              {"action": "stream", "streamUrl": [hooks.url + "/tone.wav"]}]
    number_on_a_sipp_trunk(server, app_id)
    p = sipp(["-sf", str(SIPP_SCENARIOS / "uac-reinvite-codec.xml"), f"127.0.0.1:{sip_port}", "-i", "127.0.0.1",
              "-p", FreePort(), "-mp", FreePort(), "-rtp_echo", "-m", "1", "-s", APP_NUMBER], timeout=40)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:] + server.log()[-2000:]
    wait_until(lambda: [e for e in hooks.events if "recording_url" in e], timeout=10, what=lambda: f"the recording: {hooks.events}")
    record = [e for e in hooks.events if "recording_url" in e][0]
    r = requests.get(record["recording_url"], headers={"Authorization": bearer(token(app_id, key))}, timeout=10)
    caller, rate = wav_samples(io.BytesIO(r.content))
    # The stream's last 2 s, well after the switch (2 s after the answer): our 440 Hz, echoed in PCMA.
    tail = caller[-rate * 2 - rate // 2:-rate // 2]
    assert np.sqrt(np.mean(tail ** 2)) > 300, "the caller's side is silent after the switch"
    assert abs(dominant_frequency(tail, rate) - 440) < 15
    assert (metric(server, "switchboard_phone_rtp_dropped_total") or 0) < 10, "packets of the old codec, or of no codec we expect"


def test_keys_in_sip_info_and_an_update_hold(sip_server):
    """A caller whose keys come in SIP INFO (dtmf-relay, then dtmf) and who holds and resumes with UPDATEs: the NCCO's
    `input` collects both keys, the UPDATEs are answered with SDP (recvonly, then sendrecv: SIPp checks), and the
    call goes on to its end."""
    server, sip_port = sip_server
    hooks = Hooks()
    app_id, _ = application(server, hooks)
    hooks.ncco = lambda req: [{"action": "input", "type": ["dtmf"], "dtmf": {"maxDigits": 2, "timeOut": 10},
                               "eventUrl": [hooks.url + "/event/input"]}]
    number_on_a_sipp_trunk(server, app_id)
    p = sipp(["-sf", str(SIPP_SCENARIOS / "uac-info-update.xml"), f"127.0.0.1:{sip_port}", "-i", "127.0.0.1",
              "-p", FreePort(), "-mp", FreePort(), "-m", "1", "-s", APP_NUMBER], timeout=40)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:] + server.log()[-2000:]
    inputs = [e for e in hooks.events if "dtmf" in e]
    assert inputs and inputs[0]["dtmf"]["digits"] == "24" and inputs[0]["dtmf"]["timed_out"] is False, hooks.events


def test_a_trunk_with_dtmf_info_gets_the_application_s_keys_in_sip_info(sip_server):
    """On a trunk created with `dtmf: info`, the keys an application sends (`PUT /v1/calls/{uuid}/dtmf`) reach the
    carrier (SIPp) as SIP INFO, `application/dtmf-relay`, one key each (SIPp checks them); a bad setting is 400."""
    server, _ = sip_server
    hooks = Hooks()
    app_id, key = application(server, hooks)
    auth = {"Authorization": bearer(token(app_id, key))}
    r = api(server, "POST", "/v1/sip/trunks", json={"name": "keys", "host": "127.0.0.1", "dtmf": "smoke signals"})
    assert r.status_code == 400 and "dtmf must be rfc4733 or info" in r.text, r.text
    with SippPBX("uas-info-keys.xml") as pbx:
        r = api(server, "POST", "/v1/sip/trunks", json={"name": "keys", "host": "127.0.0.1", "port": pbx.port, "transport": "udp",
                                                         "allow": ["127.0.0.0/8"], "health_interval": 0, "dtmf": "INFO"})
        assert r.status_code == 201 and r.json()["dtmf"] == "info", r.text
        assert api(server, "POST", "/number/buy", data={"country": "US", "msisdn": APP_NUMBER, "trunk_id": r.json()["id"]}).status_code == 200
        r = requests.post(server.http_url + "/v1/calls", headers=auth, timeout=10, json={
            "to": [{"type": "phone", "number": "15550123"}], "from": {"type": "phone", "number": APP_NUMBER},
            "ncco": [{"action": "conversation", "name": "keys"}], "event_url": [hooks.url + "/event"]})
        assert r.status_code == 201, r.text
        uuid = r.json()["uuid"]
        wait_until(lambda: "answered" in hooks.statuses(uuid), timeout=10, what=lambda: f"answered: {hooks.events}")
        r = requests.put(f"{server.http_url}/v1/calls/{uuid}/dtmf", headers=auth, json={"digits": "1#"}, timeout=10)
        assert r.status_code == 200, r.text
        time.sleep(1)
        assert requests.put(f"{server.http_url}/v1/calls/{uuid}", headers=auth, json={"action": "hangup"}, timeout=10).status_code == 204
        pbx.finish()
    # The CLI sets it and shows it.
    from test_sip_edge import cli
    p = cli(server, "trunks", "update", "--trunk", "keys", "--dtmf", "rfc4733")
    assert p.returncode == 0, p.stderr
    p = cli(server, "trunks", "show", "--trunk", "keys", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["dtmf"] == "rfc4733", p.stdout + p.stderr


def test_on_answer_whispers_to_the_callee_before_the_caller_joins(answering_phone):
    """A phone endpoint's `onAnswer` (the call-whisper pattern, the NCCO built with the official `vonage` SDK's
    models): once the phone answers, the NCCO at its URL (asked with the phone leg's uuid) plays to the phone alone —
    a 1 kHz announcement — while the caller, an app user, hears the `ringbackTone` (400 Hz) and not the phone; when that
    NCCO is done the two are joined and hear each other (660 Hz, 440 Hz)."""
    from vonage_voice.models.connect_endpoints import OnAnswer, PhoneEndpoint
    from vonage_voice.models.ncco import Connect
    server, hooks, app_id, key, phone = answering_phone
    hooks.files["/ring.wav"] = tone_wav(400, seconds=2, rate=16000).read_bytes()
    hooks.files["/whisper.wav"] = tone_wav(1000, seconds=3, rate=16000).read_bytes()
    connect = Connect(from_=APP_NUMBER, endpoint=[PhoneEndpoint(number=PHONE, onAnswer=OnAnswer(
        url=hooks.url + "/answer/whisper", ringbackTone=hooks.url + "/ring.wav"))]).model_dump(by_alias=True, exclude_none=True)
    whisper = [{"action": "stream", "streamUrl": [hooks.url + "/whisper.wav"]},
               {"action": "notify", "payload": {"step": "whispered"}, "eventUrl": [hooks.url + "/event/notify"]}]
    hooks.ncco = lambda req: whisper if req.get("to") == PHONE and len(hooks.answers) > 1 else [connect]
    asyncio.run(_whisper(server, hooks, app_id, key, phone))


async def _whisper(server, hooks, app_id, key, phone):
    rt, created, member = await user_calls(server, app_id, key, "alice", PHONE)
    call_id = created["call_id"]
    await wait_for(lambda: member.tracks, timeout=10, what="mix track")
    track = next(iter(member.tracks.values()))
    await drain(track)
    # The phone answers; its whisper is asked for with its own leg.
    await wait_for(lambda: len(hooks.answers) >= 2, timeout=20, what=lambda: f"the whisper's NCCO asked for; {hooks.events}\n{phone.log()[-1500:]}")
    assert len(hooks.answers) == 2, hooks.answers
    phone_leg = hooks.answers[1]["uuid"]
    assert phone_leg != call_id and "answered" in hooks.statuses(phone_leg), hooks.events
    # While it plays (3 s), the caller hears the ringback, not the phone.
    during, rate = await collect_audio(track, 2.0)
    strength = lambda samples, tone: tone_strength(samples, rate, tone)
    print("during the whisper", {t: round(strength(during, t), 1) for t in (400, 660, 1000)})
    assert abs(frequency_of(during, rate) - 400) < 15, f"the caller heard {frequency_of(during, rate)} Hz during the whisper"
    assert max(strength(during, 660), strength(during, 1000)) < strength(during, 400) / 20, "the caller heard the phone or its whisper"
    # Then the whisper's NCCO ends and the two are joined.
    await wait_for(lambda: [e for e in hooks.events if e.get("step") == "whispered"], timeout=10, what=lambda: f"the whisper's notify; {hooks.events}")
    assert [e["uuid"] for e in hooks.events if e.get("step") == "whispered"] == [phone_leg]
    await collect_audio(track, 1.0)
    after, rate = await collect_audio(track, 2.0)
    print("once joined", {t: round(strength(after, t), 1) for t in (400, 660, 1000)})
    assert abs(frequency_of(after, rate) - 660) < 15, f"the caller heard {frequency_of(after, rate)} Hz once joined"
    assert strength(after, 400) < strength(after, 660) / 20, "the ringback stopped"
    await rt.request("call:hangup", {"call_id": call_id})
    await wait_for(lambda: "completed" in hooks.statuses(phone_leg), timeout=10, what=lambda: f"completed; {hooks.events}")
    await member.close()
    await rt.close()
    # The phone heard its whisper (1 kHz) first, then the caller (440 Hz).
    played, rate = phone.played_once_ended()
    loud = np.flatnonzero(np.abs(played) > 2000)
    assert len(loud), "the phone heard nothing"
    start = loud[0]
    assert abs(dominant_frequency(played[start + rate // 4:start + rate * 2], rate) - 1000) < 15, "the whisper first"
    assert abs(dominant_frequency(played[-int(rate * 2.5):-int(rate * 0.5)], rate) - 440) < 15, "then the caller"


def test_wait_pauses_the_ncco_for_its_timeout(answering_phone):
    """NCCO `wait` (the `vonage` SDK's `Wait` model): the action after it runs its timeout later, then the call goes
    on to its end. The hooks note when each notify arrives."""
    from vonage_voice.models.ncco import Notify, Wait
    server, hooks, app_id, key, phone = answering_phone
    arrived = {}
    hooks.reply = lambda path, event: arrived.setdefault(event.get("step"), time.monotonic()) and None
    ncco = [action.model_dump(by_alias=True, exclude_none=True) for action in (
        Notify(payload={"step": "before"}, eventUrl=[hooks.url + "/notify"]),
        Wait(timeout=2.5),
        Notify(payload={"step": "after"}, eventUrl=[hooks.url + "/notify"]))]
    assert ncco[1] == {"action": "wait", "timeout": 2.5}, ncco
    # Posted as built: the SDK's `CreateCallRequest` (vonage_voice 1.5.1) re-reads its NCCO and drops a wait's timeout.
    r = requests.post(server.http_url + "/v1/calls", headers={"Authorization": bearer(token(app_id, key))}, timeout=10, json={
        "to": [{"type": "phone", "number": PHONE}], "from": {"type": "phone", "number": APP_NUMBER}, "ncco": ncco})
    assert r.status_code == 201, r.text
    uuid = r.json()["uuid"]
    wait_until(lambda: "after" in arrived, timeout=20, what=lambda: f"the notify after the wait: {hooks.events}\n{server.log()[-2000:]}")
    gap = arrived["after"] - arrived["before"]
    assert 2.5 <= gap < 8, f"{gap:.2f} s between the notifies"
    wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=15, what=lambda: f"completed: {hooks.statuses(uuid)}")


def keys_sent_to(hooks, path):
    return [e["dtmf"]["digits"] for e in hooks.events if e.get("path") == path]


def asynchronous_keys_ncco(hooks, on_event=lambda hooks, path, event: None):
    """An asynchronous input, a notify, and a wait that holds the call while SIPp presses its keys; each event the
    hooks get is noted with the path it came to, and `on_event` sees it before the hook answers."""
    def reply(path, event):
        event["path"] = path
        on_event(hooks, path, event)
    hooks.reply = reply
    return [{"action": "input", "type": ["dtmf"], "mode": "asynchronous", "eventUrl": [hooks.url + "/keys"]},
            {"action": "notify", "payload": {"step": "after-input"}, "eventUrl": [hooks.url + "/notify"]},
            {"action": "wait", "timeout": 4}]


def test_an_asynchronous_input_sends_each_key_as_it_is_pressed(sip_server, tmp_path):
    """`input` with `mode: asynchronous`: the NCCO goes on at once (its notify comes first, then a wait holds the call)
    and SIPp's keys 2 and 4 reach the input's event URL one event each, as they are pressed."""
    hooks, _, _, _ = sipp_presses_2_then_4(sip_server, tmp_path, asynchronous_keys_ncco)
    assert keys_sent_to(hooks, "/keys") == ["2", "4"], hooks.events
    notified = next(i for i, e in enumerate(hooks.events) if e.get("step") == "after-input")
    assert notified < next(i for i, e in enumerate(hooks.events) if e.get("path") == "/keys"), "the NCCO went on before any key"
    assert all(e["dtmf"]["timed_out"] is False and e["uuid"] and e["conversation_uuid"] for e in hooks.events if e.get("path") == "/keys")


def test_an_asynchronous_input_s_keys_go_to_the_listener_the_application_registers(sip_server, tmp_path):
    """The application registers a listener (`PUT /v1/calls/{uuid}/input/dtmf`) from its notify hook: SIPp's 2 goes
    there; the listener removed (`DELETE`) from that key's hook, the 4 goes back to the input's own URL."""
    server, _ = sip_server

    def listen(hooks, path, event):
        url = f"{server.http_url}/v1/calls/{event['uuid']}/input/dtmf"
        auth = {"Authorization": bearer(token(*hooks.app))}
        if path == "/notify":
            r = requests.put(url, json={"event_url": [hooks.url + "/listener"]}, headers=auth, timeout=10)
            assert r.status_code == 204, r.text
        elif path == "/listener":
            r = requests.delete(url, headers=auth, timeout=10)
            assert r.status_code == 204, r.text

    hooks, _, _, _ = sipp_presses_2_then_4(sip_server, tmp_path, lambda hooks: asynchronous_keys_ncco(hooks, listen))
    assert keys_sent_to(hooks, "/listener") == ["2"] and keys_sent_to(hooks, "/keys") == ["4"], hooks.events
    # The call over: 409; a listener that is not an http(s) URL: 400; a call of no one's: 404.
    uuid = hooks.legs()[0]
    auth = {"Authorization": bearer(token(*hooks.app))}
    wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=10, what=lambda: f"completed: {hooks.statuses(uuid)}")
    for call, body, status in [(uuid, {"event_url": [hooks.url + "/late"]}, 409), (uuid, {"event_url": ["ftp://h/keys"]}, 400),
                               ("no-such-call", {"event_url": [hooks.url + "/x"]}, 404)]:
        r = requests.put(f"{server.http_url}/v1/calls/{call}/input/dtmf", json=body, headers=auth, timeout=10)
        assert r.status_code == status, (call, body, r.status_code, r.text)


def test_an_app_user_s_keys_answer_its_ncco_s_inputs(sip_server):
    """An app user's keys (`call:dtmf`) reach its call's NCCO: an asynchronous input sends each as it comes, and the
    synchronous input after it collects them (before, an app leg's keyed input failed as `media-unavailable`)."""
    server, _ = sip_server
    hooks = Hooks()
    hooks.ncco = lambda req: [
        {"action": "input", "type": ["dtmf"], "mode": "asynchronous", "eventUrl": [hooks.url + "/keys"]},
        {"action": "input", "type": ["dtmf"], "dtmf": {"maxDigits": 2, "timeOut": 10}, "eventUrl": [hooks.url + "/input"]}]
    path = {}
    hooks.reply = lambda p, event: path.setdefault(id(event), p) and None

    async def call():
        app_id, key = application(server, hooks)
        rt, created, member = await user_calls(server, app_id, key, "alice", "menu")
        uuid = created["call_id"]
        await wait_for(lambda: "answered" in hooks.statuses(uuid), timeout=10, what="answered")
        await asyncio.sleep(0.5)  # the answer's NCCO running
        await rt.request("call:dtmf", {"call_id": uuid, "digits": "1"})
        await rt.request("call:dtmf", {"call_id": uuid, "digits": "2"})
        await wait_for(lambda: [e for e in hooks.events if path.get(id(e)) == "/input"], timeout=10,
                       what=lambda: f"the input's result: {hooks.events}\n{server.log()[-2000:]}")
        await member.close()
        await rt.close()
        return uuid

    uuid = asyncio.run(call())
    sent = {p: [e["dtmf"] for e in hooks.events if path.get(id(e)) == p] for p in ("/keys", "/input")}
    assert sent["/keys"] == [{"digits": "1", "timed_out": False}, {"digits": "2", "timed_out": False}], hooks.events
    assert sent["/input"] == [{"digits": "12", "timed_out": False}], hooks.events
    assert not [e for e in hooks.events if e.get("type") == "error"], hooks.events
    wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=10, what=lambda: f"completed: {hooks.statuses(uuid)}")


def test_keys_sent_to_an_app_user_are_heard_as_dtmf_tones(sip_server):
    """`PUT /v1/calls/{uuid}/dtmf` to an app user's leg (before: 501 `media-unavailable`): the keys are played into
    what the user hears, as in-band DTMF — a 5 is 770 Hz with 1336 Hz."""
    server, _ = sip_server
    hooks = Hooks()
    hooks.ncco = lambda req: [{"action": "talk", "text": "Hello."}, {"action": "wait", "timeout": 30}]

    async def call():
        app_id, key = application(server, hooks)
        rt, created, member = await user_calls(server, app_id, key, "alice", "menu")
        uuid = created["call_id"]
        await wait_for(lambda: member.tracks, timeout=10, what="the mix the user hears")
        track = next(iter(member.tracks.values()))
        await drain(track)
        listening = asyncio.create_task(collect_audio(track, 3.0))
        await asyncio.sleep(0.5)
        r = await asyncio.to_thread(requests.put, f"{server.http_url}/v1/calls/{uuid}/dtmf", json={"digits": "5555"},
                                    headers={"Authorization": bearer(token(app_id, key))}, timeout=10)
        assert r.status_code == 200, r.text
        samples, rate = await listening
        await member.close()
        await rt.close()
        return samples, rate

    samples, rate = asyncio.run(call())
    strengths = {f: tone_strength(samples, rate, f) for f in (697, 770, 1209, 1336)}
    assert strengths[770] > 20 and strengths[1336] > 20, strengths
    assert strengths[697] < strengths[770] / 4 and strengths[1209] < strengths[1336] / 4, strengths


SHAKEN = ("eyJhbGciOiJFUzI1NiIsInBwdCI6InNoYWtlbiIsInR5cCI6InBhc3Nwb3J0IiwieDV1IjoiaHR0cHM6Ly9jZXJ0LnN3aXRjaGJvYXJkLnRlc3Qvc2hha2VuLnBlbSJ9"
          ".eyJhdHRlc3QiOiJBIiwiZGVzdCI6eyJ0biI6WyIxNTU1NzY1NDMyMSJdfSwiaWF0IjoxNzk2NjEwOTIzLCJvcmlnIjp7InRuIjoiMTU1NTAxNDIifX0"
          ".c2lnbmF0dXJl;info=<https://cert.switchboard.test/shaken.pem>;alg=ES256;ppt=shaken")


def test_a_phone_endpoint_s_shaken_identity_goes_out_as_the_invite_s_identity_header(sip_server):
    """A phone endpoint's `shaken` (the application's signed STIR/SHAKEN PASSporT, as the Voice API takes it) is the
    INVITE's `Identity` header (RFC 8224) on the trunk: SIPp, the carrier, answers only an INVITE carrying it. An
    identity on two lines is refused before any call."""
    import types
    server, _ = sip_server
    hooks = Hooks()
    app_id, key = application(server, hooks)
    auth = {"Authorization": bearer(token(app_id, key))}
    with SippPBX("uas-identity.xml") as pbx:
        trunk_and_number(server, types.SimpleNamespace(sip_port=pbx.port), app_id, APP_NUMBER)
        body = {"from": {"type": "phone", "number": APP_NUMBER}, "ncco": [{"action": "talk", "text": "one two"}],
                "event_url": [hooks.url + "/event"]}
        r = requests.post(server.http_url + "/v1/calls", headers=auth, timeout=10,
                          json={**body, "to": [{"type": "phone", "number": PHONE, "shaken": SHAKEN}]})
        assert r.status_code == 201, r.text
        uuid = r.json()["uuid"]
        wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=20, what=lambda: f"completed: {hooks.events}\n{server.log()[-2000:]}")
        assert hooks.statuses(uuid) == ["started", "ringing", "answered", "completed"], hooks.events
        pbx.finish()
        r = requests.post(server.http_url + "/v1/calls", headers=auth, timeout=10,
                          json={**body, "to": [{"type": "phone", "number": PHONE, "shaken": SHAKEN + "\r\nVia: x"}]})
        assert r.status_code == 400 and "to[0].shaken" in r.json()["detail"], r.text
