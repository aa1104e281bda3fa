"""Issue 19's acceptance: an SDK client (`switchboard client call`) places a server call that a SIP phone answers,
with audio both ways. The application's answer URL connects the call to a phone number; the leg leaves over a SIP
trunk to baresip, which answers at once and plays 660 Hz while the client plays 440 Hz; the client hangs up."""

from __future__ import annotations

import numpy as np

from media_support import dominant_frequency, wav_samples
from rig import wait_until
from sip_support import Baresip, start_sip_server, trunk_and_number
from voice_support import Hooks, application, client_call, user_jwt

PHONE = "15557654321"
CALLER_ID = "15550142"
CLIENT_TONE, PHONE_TONE = 440, 660
SECONDS = 10


def tone_of(samples, rate):
    """The dominant frequency and RMS level of the two seconds before the last half second (the hang-up's edge)."""
    window = samples[-int(rate * 2.5):-int(rate * 0.5)]
    return dominant_frequency(window, rate), float(np.sqrt(np.mean(window ** 2)))


def test_sdk_call_answered_by_a_sip_phone_with_audio_both_ways(tmp_path):
    server, _ = start_sip_server()
    hooks = Hooks()
    phone = Baresip(f"<sip:{PHONE}@127.0.0.1>;regint=0;answermode=auto", tmp_path, tone=PHONE_TONE)
    try:
        app_id, key = application(server, hooks)
        trunk_and_number(server, phone, app_id, CALLER_ID)
        hooks.ncco = lambda req: [{"action": "connect", "from": CALLER_ID, "endpoint": [{"type": "phone", "number": PHONE}]}]
        heard = tmp_path / "heard.wav"
        events = client_call(server, PHONE, "alice", user_jwt(server, app_id, key, "alice"),
                             "--play", f"tone:{CLIENT_TONE}", "--record", str(heard), seconds=SECONDS)

        # The CLI placed the call, heard the phone leg answer, and hung up itself after --seconds.
        assert events[0]["event"] == "placed" and events[0]["to"] == PHONE, events
        call = events[0]["call_id"]
        assert any(e["event"] == "media" for e in events), events
        legs = [e for e in events if e["event"] == "leg:status" and e["leg_id"] != call]
        assert legs and all(e["channel"] == "phone" and e["direction"] == "outbound" for e in legs), events
        phone_leg = legs[0]["leg_id"]
        assert [e["status"] for e in legs if e["leg_id"] == phone_leg][:3] == ["started", "ringing", "answered"], events
        assert events[-1] == {"event": "call:hangup", "call_id": call, "reason": "localHangup"}, events

        # The phone was called from the application's number and released when the client hung up.
        assert f"answering call on line 1 from sip:{CALLER_ID}@" in phone.log(), phone.log()[-2000:]
        wait_until(lambda: "terminated" in phone.log(), timeout=10, what=lambda: f"baresip call ended:\n{phone.log()[-1500:]}")

        # The client's recording holds the phone's tone.
        samples, rate = wav_samples(heard)
        assert len(samples) > rate * (SECONDS - 4), f"the client recorded {len(samples) / rate:.1f} s"
        frequency, level = tone_of(samples, rate)
        assert level > 100, "the client heard silence"
        assert abs(frequency - PHONE_TONE) < 15, f"the client heard {frequency} Hz, not the phone's {PHONE_TONE} Hz"

        # The phone heard the client's tone (its recording is complete once baresip closed the call).
        wait_until(lambda: len(phone.played()[0]) > phone.played()[1] * (SECONDS - 4), timeout=10,
                   what=lambda: f"the phone's recording: {len(phone.played()[0])} samples")
        samples, rate = phone.played()
        frequency, level = tone_of(samples, rate)
        assert level > 100, "the phone heard silence"
        assert abs(frequency - CLIENT_TONE) < 15, f"the phone heard {frequency} Hz, not the client's {CLIENT_TONE} Hz"

        # The application's webhooks: the answer URL got the SDK user's call, and both legs' events came in order.
        assert hooks.answers[0]["uuid"] == call and hooks.answers[0]["to"] == PHONE and hooks.answers[0]["from_user"] == "alice"
        wait_until(lambda: "completed" in hooks.statuses(call) and "completed" in hooks.statuses(phone_leg), timeout=10,
                   what=lambda: f"completed: {hooks.events}")
        assert hooks.statuses(call) == ["started", "ringing", "answered", "completed"], hooks.events
        assert hooks.statuses(phone_leg) == ["started", "ringing", "answered", "completed"], hooks.events
    finally:
        phone.stop()
        server.stop()
        hooks.http.shutdown()
