"""NCCO `input` with `speech` on phone calls placed with `POST /v1/calls` (NCCOs built with the official `vonage`
SDK's models): baresip answers over a trunk and says a menu choice (espeak-ng's voice, as a WAV it plays once
per call, G.711 on the wire); the input's event URL gets what was said, recognised offline, in the Voice API's
shape — `speech.results[{text, confidence}]`, `speech.timeout_reason` and, with `saveAudio`, the utterance's
`speech.recording_url`. A phone that says nothing gets
`start_timeout`; a language without a model is the documented error event, and the NCCO goes on. An input naming
another leg of its conversation (`speech.uuid`) hears that leg."""

from __future__ import annotations

import datetime
import io
import subprocess
import uuid as uuids

import pytest
import requests

from accounts_support import bearer, token
from media_support import wav_samples
from rig import wait_until
from voice_support import answering_phones, place_call

vonage_voice = pytest.importorskip("vonage_voice")

SPEAKER, QUIET, AGENT = "15550181", "15550182", "15550183"
MENU = ["sales", "support", "billing", "speak to an agent"]


def said(tmp, text: str | None, lead: float = 1.0, tail: float = 4.0):
    """A 48 kHz stereo WAV: `lead` s of silence, `text` in espeak-ng's en-US voice (a variant the offline model
    reads well), `tail` s of silence (`text` None: silence only)."""
    out = tmp / f"{(text or 'silence').replace(' ', '-')}.wav"
    if text:
        voice = tmp / "voice.wav"
        subprocess.run(["espeak-ng", "-v", "en-us+f2", "-w", str(voice), text], check=True)
        subprocess.run(["sox", str(voice), "-r", "48000", "-c", "2", str(out), "pad", str(lead), str(tail)], check=True)
    else:
        subprocess.run(["sox", "-n", "-r", "48000", "-c", "2", "-b", "16", str(out), "trim", "0", str(lead + tail)], check=True)
    return out


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("speech")
    with answering_phones(tmp, [(SPEAKER, "speaker", said(tmp, "support"), "15550191"),
                                (QUIET, "quiet", said(tmp, None, tail=8), "15550192"),
                                (AGENT, "agent", said(tmp, "billing", lead=6), "15550193")]) as s:
        yield s


# About 20 s of speech.
PROMPT = " ".join(["Thank you for calling. Please tell us in a word or two what your call is about today."] * 4)


def since_answered(hooks, event):
    """Seconds from the leg's `answered` status to `event`, by their timestamps."""
    at = lambda e: datetime.datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00"))
    return (at(event) - at(next(e for e in hooks.events if e.get("uuid") == event["uuid"] and e.get("status") == "answered"))).total_seconds()


def inputs(hooks, uuid):
    return [e for e in hooks.events if e.get("uuid") == uuid and "speech" in e]


def test_what_the_caller_says_reaches_the_input_s_event_url(setup):
    server, hooks, app_id, key = setup
    from vonage_voice.models.input_types import Speech
    from vonage_voice.models.ncco import Input, Talk
    ncco = [Input(type=["speech"], speech=Speech(context=MENU, endOnSilence=1.0, language="en-US", saveAudio=True),
                  eventUrl=[hooks.url + "/event/input"]).model_dump(by_alias=True, exclude_none=True),
            Talk(text="Thank you.").model_dump(by_alias=True, exclude_none=True)]
    uuid = place_call(setup, SPEAKER, "15550191", ncco)
    wait_until(lambda: inputs(hooks, uuid), timeout=30, what=lambda: f"the input's result: {hooks.events}\n{server.log()[-2000:]}")
    result = inputs(hooks, uuid)[0]
    print(result)
    speech = result["speech"]
    assert speech["timeout_reason"] == "end_on_silence_timeout", result
    assert speech["results"] and speech["results"][0]["text"] == "support", result
    assert 0 < float(speech["results"][0]["confidence"]) <= 1, result
    assert result["dtmf"] == {"digits": "", "timed_out": False}, result
    assert result["conversation_uuid"] and "timestamp" in result, result
    # saveAudio: what was said, as a WAV the application can fetch — the lead-in, the word, the second of silence.
    r = requests.get(speech["recording_url"], headers={"Authorization": bearer(token(app_id, key))}, timeout=10)
    assert r.status_code == 200 and r.content[:4] == b"RIFF", (r.status_code, r.content[:40])
    samples, rate = wav_samples(io.BytesIO(r.content))
    assert 1.5 < len(samples) / rate < 3.5, len(samples) / rate
    assert abs(samples[: int(rate * 1.2)]).max() > 3000, "the word is in the recording"
    # The NCCO went on past the input (its event URL answered no NCCO) and ended the call.
    wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=15, what=lambda: f"completed: {hooks.statuses(uuid)}")


def test_a_caller_who_says_nothing_gets_start_timeout(setup):
    server, hooks, app_id, key = setup
    ncco = [{"action": "input", "type": ["speech", "dtmf"], "speech": {"startTimeout": 2, "context": MENU},
             "eventUrl": [hooks.url + "/event/input"]}]
    uuid = place_call(setup, QUIET, "15550192", ncco)
    wait_until(lambda: inputs(hooks, uuid), timeout=20, what=lambda: f"the input's result: {hooks.events}")
    result = inputs(hooks, uuid)[0]
    assert result["speech"] == {"timeout_reason": "start_timeout", "results": []}, result
    assert result["dtmf"] == {"digits": "", "timed_out": False}, result
    wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=15, what=lambda: f"completed: {hooks.statuses(uuid)}")


def test_a_language_without_a_model_is_an_error_and_the_ncco_goes_on(setup):
    server, hooks, app_id, key = setup
    ncco = [{"action": "input", "type": ["speech"], "speech": {"language": "fr-FR"}, "eventUrl": [hooks.url + "/event/input"]},
            {"action": "notify", "payload": {"step": "after-input"}, "eventUrl": [hooks.url + "/event/notify"]}]
    uuid = place_call(setup, QUIET, "15550192", ncco)
    wait_until(lambda: [e for e in hooks.events if e.get("step") == "after-input" and e.get("uuid") == uuid], timeout=20,
               what=lambda: f"the notify after the input: {hooks.events}")
    # The error goes to the application's event URL, the notify to its own: two deliveries, in either order.
    def errors():
        return [e for e in hooks.events if e.get("type") == "error" and e.get("uuid") == uuid]
    wait_until(errors, timeout=10, what=lambda: f"the error event: {hooks.events}")
    assert "fr-FR" in errors()[0]["reason"], hooks.events
    assert not inputs(hooks, uuid), hooks.events
    wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=15, what=lambda: f"completed: {hooks.statuses(uuid)}")


def test_bad_speech_settings_are_refused_with_the_documented_error(setup):
    server, hooks, app_id, key = setup
    for speech, field in [({"endOnSilence": 0.1}, "speech.endOnSilence"), ({"saveAudio": "yes"}, "speech.saveAudio"),
                          ({"context": "sales"}, "speech.context"), ({"colour": "blue"}, "speech.colour")]:
        body = {"to": [{"type": "phone", "number": QUIET}], "from": {"type": "phone", "number": "15550192"},
                "ncco": [{"action": "input", "type": ["speech"], "speech": speech}]}
        r = requests.post(server.http_url + "/v1/calls", json=body, headers={"Authorization": bearer(token(app_id, key))}, timeout=10)
        assert r.status_code == 400 and field in r.text, (speech, r.status_code, r.text)


def test_an_app_user_s_words_reach_the_input_too(setup, tmp_path):
    """The caller is an app user (`switchboard client call`, the Swift SDK, its microphone a WAV of the same
    words, looping): the answer NCCO's speech input hears the user's WebRTC audio through the conversation's mix,
    over a long prompt with `bargeIn`, which the words cut short."""
    from voice_support import client_call, user_jwt
    server, hooks, app_id, key = setup
    hooks.ncco = lambda req: [{"action": "talk", "text": PROMPT, "bargeIn": True},
                              {"action": "input", "type": ["speech"], "speech": {"context": MENU, "endOnSilence": 1},
                               "eventUrl": [hooks.url + "/event/input-app"]},
                              {"action": "talk", "text": "Thank you."}]
    jwt = user_jwt(server, app_id, key, "speaker")
    events = client_call(server, "menu", "speaker", jwt, "--play", str(said(tmp_path, "billing")), seconds=20)
    results = [e for e in hooks.events if "speech" in e]
    assert results, f"no input result: {hooks.events}\n{events}"
    speech = results[-1]["speech"]
    assert speech.get("timeout_reason") == "end_on_silence_timeout" and speech["results"][0]["text"] == "billing", results[-1]
    assert since_answered(hooks, results[-1]) < 10, "the prompt was not cut short"


def test_a_caller_who_speaks_over_a_barge_in_prompt_stops_it_and_is_heard(setup):
    """A long prompt with `bargeIn` before the speech input: the phone says "support" a second into the call, which
    ends the prompt and is the input's answer, long before the prompt would have ended."""
    server, hooks, app_id, key = setup
    ncco = [{"action": "talk", "text": PROMPT, "bargeIn": True},
            {"action": "input", "type": ["speech"], "speech": {"context": MENU, "endOnSilence": 1}, "eventUrl": [hooks.url + "/event/input"]}]
    uuid = place_call(setup, SPEAKER, "15550191", ncco)
    wait_until(lambda: inputs(hooks, uuid), timeout=30, what=lambda: f"the input's result: {hooks.events}")
    result = inputs(hooks, uuid)[0]
    assert result["speech"]["results"] and result["speech"]["results"][0]["text"] == "support", result
    # The prompt alone is about 20 s of speech; the answer came after the word and a second of silence.
    elapsed = since_answered(hooks, result)
    assert elapsed < 10, f"{elapsed:.1f} s after the answer: the prompt was not cut short"
    wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=15, what=lambda: f"completed: {hooks.statuses(uuid)}")


def test_an_input_hears_the_leg_its_speech_uuid_names(setup):
    """`speech.uuid`: the quiet phone waits in a named conversation, the agent's phone joins it and says "billing"
    six seconds after answering; meanwhile the quiet leg is transferred to an NCCO whose speech input names the
    agent's leg, and its input gets the agent's word (listening to itself it would time out: it says nothing). A
    leg of another conversation is not listened to: the input is an error event, and the NCCO goes on."""
    server, hooks, app_id, key = setup
    auth = {"Authorization": bearer(token(app_id, key))}
    desk = f"desk-{uuids.uuid4().hex[:8]}"
    quiet = place_call(setup, QUIET, "15550192", [{"action": "conversation", "name": desk}])
    wait_until(lambda: "answered" in hooks.statuses(quiet), timeout=15, what=lambda: f"answered: {hooks.statuses(quiet)}")
    agent = place_call(setup, AGENT, "15550193", [{"action": "conversation", "name": desk}])
    wait_until(lambda: "answered" in hooks.statuses(agent), timeout=15, what=lambda: f"answered: {hooks.statuses(agent)}")
    ncco = [{"action": "input", "type": ["speech"], "speech": {"uuid": [agent], "context": MENU, "endOnSilence": 1},
             "eventUrl": [hooks.url + "/event/input"]}]
    r = requests.put(f"{server.http_url}/v1/calls/{quiet}", json={"action": "transfer", "destination": {"type": "ncco", "ncco": ncco}},
                     headers=auth, timeout=10)
    assert r.status_code == 204, r.text
    wait_until(lambda: inputs(hooks, quiet), timeout=30, what=lambda: f"the input's result: {hooks.events}\n{server.log()[-2000:]}")
    result = inputs(hooks, quiet)[0]
    assert result["speech"].get("timeout_reason") == "end_on_silence_timeout", result
    assert result["speech"]["results"] and result["speech"]["results"][0]["text"] == "billing", result
    assert not inputs(hooks, agent), hooks.events

    # The agent's leg, still in the desk conversation, named by a call in a conversation of its own.
    other = place_call(setup, QUIET, "15550192", [
        {"action": "input", "type": ["speech"], "speech": {"uuid": [agent]}, "eventUrl": [hooks.url + "/event/input"]},
        {"action": "notify", "payload": {"step": "after-foreign-input"}, "eventUrl": [hooks.url + "/event/notify"]}])
    def errors():
        return [e for e in hooks.events if e.get("type") == "error" and e.get("uuid") == other]
    wait_until(errors, timeout=20, what=lambda: f"the error event: {hooks.events}")
    assert "speech.uuid" in errors()[0]["reason"] and agent in errors()[0]["reason"], errors()
    wait_until(lambda: [e for e in hooks.events if e.get("step") == "after-foreign-input" and e.get("uuid") == other], timeout=20,
               what=lambda: f"the notify after the input: {hooks.events}")
    assert not inputs(hooks, other), hooks.events
    r = requests.put(f"{server.http_url}/v1/calls/{agent}", json={"action": "hangup"}, headers=auth, timeout=10)
    assert r.status_code == 204, r.text
    wait_until(lambda: "completed" in hooks.statuses(agent), timeout=15, what=lambda: f"completed: {hooks.statuses(agent)}")
