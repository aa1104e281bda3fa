"""Answering-machine detection on calls placed with `POST /v1/calls` (bodies built with the official `vonage`
SDK's `CreateCallRequest`): baresip answers over a trunk and plays a recording, either a person's short "hello"
then waiting, or a voicemail greeting that talks on and ends with a 1 kHz beep. The events say `human` or
`machine` (then `sub_state` `beep_start`), a synchronous mode holds the NCCO until the verdict (or the beep), the
default advanced mode does not, and `hangup` ends a call a machine answered."""

from __future__ import annotations

import datetime
import math
import struct
import wave

import pytest
import requests

from accounts_support import bearer, token
from rig import wait_until
from voice_support import answering_phones, place_call

vonage_voice = pytest.importorskip("vonage_voice")

RATE = 48000
HUMAN_NUMBER, VOICEMAIL_NUMBER = "15550161", "15550162"


def recording(path, talk_ms: int, beep_at_ms: int | None = None, total_ms: int = 12000):
    """A 48 kHz stereo WAV of voice-like sound (a gliding ~150 Hz pitch with harmonics, in 200 ms syllables 80 ms
    apart) for `talk_ms`, an optional 500 ms 1 kHz beep at `beep_at_ms`, and quiet room noise to `total_ms`."""
    frames = bytearray()
    for i in range(total_ms * RATE // 1000):
        t, ms = i / RATE, i * 1000 // RATE
        v = 0.0
        if ms < talk_ms and ms % 280 < 200:
            f0 = 150 + 30 * math.sin(2 * math.pi * 1.5 * t)
            v = 0.12 * sum(math.sin(2 * math.pi * f0 * h * t) / h for h in range(1, 6))
        elif beep_at_ms is not None and beep_at_ms <= ms < beep_at_ms + 500:
            v = 0.4 * math.sin(2 * math.pi * 1000 * t)
        sample = int(max(-1, min(1, v)) * 32767)
        frames += struct.pack("<hh", sample, sample)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(bytes(frames))
    return path


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("amd")
    with answering_phones(tmp, [(HUMAN_NUMBER, "person", recording(tmp / "hello.wav", talk_ms=700), "15550171"),
                                (VOICEMAIL_NUMBER, "voicemail", recording(tmp / "greeting.wav", talk_ms=3800, beep_at_ms=4100), "15550172")]) as s:
        yield s


def place(setup, to, from_, marker, **detection):
    """Places a call whose NCCO first notifies `marker` (so the events show when the NCCO started), then waits."""
    hooks = setup[1]
    return place_call(setup, to, from_, [{"action": "notify", "payload": {"step": marker}, "eventUrl": [hooks.url + "/event/notify"]},
                                         {"action": "stream", "streamUrl": [hooks.url + "/silence.wav"], "loop": 0}], **detection)


def events(hooks, uuid):
    return [e for e in hooks.events if e.get("uuid") == uuid]


def at(event):
    return datetime.datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00"))


def hang_up(setup, uuid):
    server, hooks, app_id, key = setup
    requests.put(server.http_url + f"/v1/calls/{uuid}", json={"action": "hangup"}, headers={"Authorization": bearer(token(app_id, key))},
                 timeout=10)
    wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=10, what=lambda: f"completed: {events(hooks, uuid)}")


def notified(hooks, marker):
    return [e for e in hooks.events if e.get("step") == marker]


@pytest.fixture(autouse=True)
def silence_file(setup):
    setup[1].files["/silence.wav"] = recording_bytes()


def recording_bytes():
    import io
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\0\0" * 8000)
    return out.getvalue()


def test_detect_beep_holds_the_ncco_until_the_voicemail_beeps(setup):
    server, hooks, _, _ = setup
    uuid = place(setup, VOICEMAIL_NUMBER, "15550172", "after-beep",
                 advanced_machine_detection={"behavior": "continue", "mode": "detect_beep", "beep_timeout": 45})
    # The notify and the call's events go to different URLs, each in its own order: wait for both.
    wait_until(lambda: notified(hooks, "after-beep") and hooks.statuses(uuid).count("machine") == 2, timeout=20,
               what=lambda: f"the NCCO to start after the beep: {events(hooks, uuid)}")
    evs = events(hooks, uuid)
    answered = next(e for e in evs if e.get("status") == "answered")
    machine = [e for e in evs if e.get("status") == "machine"]
    assert [m.get("sub_state") for m in machine] == [None, "beep_start"], evs
    assert not [e for e in evs if e.get("status") == "human"], evs
    # The verdict once 1.5 s of greeting were heard; the beep after the 3.8 s greeting; the NCCO after the beep.
    assert 1.0 < (at(machine[0]) - at(answered)).total_seconds() < 3.5, (answered, machine)
    assert (at(machine[1]) - at(answered)).total_seconds() > 3.5, (answered, machine)
    assert machine[0]["call_uuid"] == uuid and machine[0]["direction"] == "outbound"
    assert at(notified(hooks, "after-beep")[0]) >= at(machine[1])
    hang_up(setup, uuid)


def test_a_person_is_human_and_hangup_leaves_the_call_up(setup):
    server, hooks, _, _ = setup
    uuid = place(setup, HUMAN_NUMBER, "15550171", "person", machine_detection="hangup")
    wait_until(lambda: notified(hooks, "person") and {"human", "machine"} & set(hooks.statuses(uuid)), timeout=20,
               what=lambda: f"the NCCO to start and the verdict: {events(hooks, uuid)}")
    evs = events(hooks, uuid)
    assert [e["status"] for e in evs if e.get("status") in ("human", "machine")] == ["human"], evs
    human = next(e for e in evs if e.get("status") == "human")
    answered = next(e for e in evs if e.get("status") == "answered")
    # "Hello" (0.7 s) then 0.8 s of waiting.
    assert 1.0 < (at(human) - at(answered)).total_seconds() < 3.0, (answered, human)
    assert at(notified(hooks, "person")[0]) >= at(human)
    assert "completed" not in hooks.statuses(uuid)
    hang_up(setup, uuid)


def test_hangup_ends_a_call_a_machine_answered_before_its_ncco(setup):
    server, hooks, _, _ = setup
    uuid = place(setup, VOICEMAIL_NUMBER, "15550172", "never", machine_detection="hangup")
    wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=20, what=lambda: f"hung up: {events(hooks, uuid)}")
    assert hooks.statuses(uuid)[-2:] == ["machine", "completed"], hooks.statuses(uuid)
    assert not notified(hooks, "never"), "the NCCO ran although the machine was hung up on"


def test_default_mode_runs_the_ncco_at_once_and_reports_later(setup):
    server, hooks, _, _ = setup
    uuid = place(setup, VOICEMAIL_NUMBER, "15550172", "async", advanced_machine_detection={"behavior": "continue", "mode": "default"})
    wait_until(lambda: hooks.statuses(uuid).count("machine") == 2 and notified(hooks, "async"), timeout=20,
               what=lambda: f"machine and beep: {events(hooks, uuid)}")
    machine = [e for e in events(hooks, uuid) if e.get("status") == "machine"]
    assert machine[1]["sub_state"] == "beep_start"
    assert at(notified(hooks, "async")[0]) < at(machine[0]), "the NCCO waited for the verdict"
    hang_up(setup, uuid)


def test_connect_with_machine_detection_hangs_up_on_voicemail_and_the_ncco_goes_on(setup):
    """The tutorial's flow with the NCCO `connect` option: a call to the person connects to the voicemail number
    with `machineDetection: hangup`; the voicemail leg is hung up on before it is bridged, and the person's NCCO
    goes on as after a failed connect."""
    server, hooks, app_id, key = setup
    body = vonage_voice.CreateCallRequest(
        to=[{"type": "phone", "number": HUMAN_NUMBER}], from_={"type": "phone", "number": "15550171"},
        ncco=[{"action": "connect", "from_": "15550172", "endpoint": [{"type": "phone", "number": VOICEMAIL_NUMBER}],
               "machineDetection": "hangup"},
              {"action": "notify", "payload": {"step": "after-connect"}, "eventUrl": [hooks.url + "/event/notify"]},
              {"action": "stream", "streamUrl": [hooks.url + "/silence.wav"], "loop": 0}]).model_dump(by_alias=True, exclude_none=True)
    assert body["ncco"][0]["machineDetection"] == "hangup"
    r = requests.post(server.http_url + "/v1/calls", json=body, headers={"Authorization": bearer(token(app_id, key))}, timeout=10)
    assert r.status_code == 201, r.text
    parent = r.json()["uuid"]
    wait_until(lambda: notified(hooks, "after-connect"), timeout=25, what=lambda: f"the NCCO after the connect: {hooks.events}")
    # The voicemail leg's events come in its own order, not the parent NCCO's notify's.
    def voicemail_leg_ended():
        legs = [e["uuid"] for e in hooks.events if e.get("uuid") not in (None, parent) and e.get("to") == VOICEMAIL_NUMBER
                and at(e) > at(events(hooks, parent)[0])]
        return next((leg for leg in legs if "completed" in hooks.statuses(leg)), None)
    child = wait_until(voicemail_leg_ended, timeout=10, what=lambda: f"the voicemail leg ended: {hooks.events}")
    assert hooks.statuses(child)[-3:] == ["answered", "machine", "completed"], hooks.statuses(child)
    assert "completed" not in hooks.statuses(parent)
    hang_up(setup, parent)
