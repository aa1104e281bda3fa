"""switchboard-voice (the reference voice app server of the app-to-phone tutorial) against a live Switchboard.

Driven the way the tutorial's iOS client does it: POST /auth → JWT; realtime login with it; `call:create`
with `to` → Switchboard fetches the answer route (talk + connect) and posts every status to the event route,
which logs one JSON line each; hangup → `completed` is logged. The answer routes' NCCOs are checked as the
tutorial writes them: the caller id is the number linked to the application.
"""
import json
import os
import subprocess
import tempfile
import time

import jwt as pyjwt
import numpy as np
import pytest
import requests

from conv_support import App, RealtimeClient, Server, binary, free_port, wait_until
from media_support import dominant_frequency, wav_samples
from rig import run_async

LINKED = "15550123"


@pytest.fixture(scope="module")
def stack():
    s = Server().start()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    a = App(s, name="voice-tutorial", capabilities={"voice": {"webhooks": {
        "answer_url": {"address": base + "/voice/answer", "http_method": "GET"},
        "event_url": {"address": base + "/voice/event", "http_method": "POST"}}}})
    # The tutorial's number: bought and linked to the application.
    key, secret = s.auth
    assert requests.post(s.base + "/number/buy", data={"api_key": key, "api_secret": secret, "country": "US", "msisdn": LINKED},
                         timeout=10).status_code == 200
    assert requests.post(s.base + "/number/update", data={"api_key": key, "api_secret": secret, "country": "US", "msisdn": LINKED,
                                                          "app_id": a.id}, timeout=10).status_code == 200
    work = tempfile.mkdtemp(prefix="voice-")
    key_file = os.path.join(work, "app.key")
    with open(key_file, "w") as f:
        f.write(a.private_key)
    out = os.path.join(work, "voice.log")
    log = open(out, "wb")
    proc = subprocess.Popen([binary("switchboard-voice", "SWITCHBOARD_VOICE_BIN"), "--switchboard", s.base, "--app-id", a.id,
                             "--key-file", key_file, "--listen", f"127.0.0.1:{port}", "--api-key", key, "--api-secret", secret,
                             "--inbound-user", "bob"],
                            stdout=log, stderr=subprocess.STDOUT, cwd=work)

    def up():
        assert proc.poll() is None, open(out).read()
        try:
            requests.get(base + "/voice/answer-inbound", timeout=1)
            return True
        except requests.ConnectionError:
            return False
    wait_until(up, timeout=15, what="switchboard-voice")
    yield s, a, base, out
    proc.terminate()
    proc.wait(10)
    s.close()


def events(out):
    """The JSON lines switchboard-voice printed for the event route."""
    lines = []
    for line in open(out, errors="replace"):
        line = line.strip()
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


def statuses(out, uuid):
    return [e.get("status") for e in events(out) if e.get("uuid") == uuid and "status" in e]


def test_answer_routes_are_the_tutorials_nccos(stack):
    _, _, voice, _ = stack
    to_phone = requests.get(voice + "/voice/answer", params={"to": "447700900001", "from_user": "alice"}, timeout=10).json()
    assert to_phone == [{"action": "talk", "text": "Please wait while we connect you."},
                        {"action": "connect", "from": LINKED, "endpoint": [{"type": "phone", "number": "447700900001"}]}]
    to_user = requests.get(voice + "/voice/answer", params={"to": "bob"}, timeout=10).json()
    assert to_user[1] == {"action": "connect", "endpoint": [{"type": "app", "user": "bob"}]}
    to_sip = requests.get(voice + "/voice/answer", params={"to": "sip:desk@pbx.example.com"}, timeout=10).json()
    assert to_sip[1] == {"action": "connect", "from": LINKED, "endpoint": [{"type": "sip", "uri": "sip:desk@pbx.example.com"}]}
    inbound = requests.get(voice + "/voice/answer-inbound", params={"to": LINKED, "from": "447700900002"}, timeout=10).json()
    assert inbound == [{"action": "connect", "endpoint": [{"type": "app", "user": "bob"}]}]
    # A phone calling the application's own number reaches the same answer URL: it rings --inbound-user.
    own = requests.get(voice + "/voice/answer", params={"to": LINKED, "from": "447700900002"}, timeout=10).json()
    assert own == inbound
    missing = requests.get(voice + "/voice/answer", timeout=10)
    assert missing.status_code == 400 and missing.json()["title"]


def test_the_tutorial_client_logs_in_calls_and_hangs_up(stack):
    s, a, voice, out = stack
    r = requests.post(voice + "/auth", json={"name": "alice"}, timeout=10)
    assert r.status_code == 200, r.text
    alice = r.json()
    claims = pyjwt.decode(alice["jwt"], options={"verify_signature": False})
    assert claims["sub"] == "alice" and claims["application_id"] == a.id and alice["user_id"].startswith("USR-")
    # A second login reuses the user; bob is created on his first login.
    assert requests.post(voice + "/auth", json={"name": "alice"}, timeout=10).json()["user_id"] == alice["user_id"]
    bob = requests.post(voice + "/auth", json={"name": "bob"}, timeout=10).json()
    assert [u["name"] for u in a.ok("GET", "/v1/users", params={"name": "alice"})["_embedded"]["users"]] == ["alice"]
    assert requests.post(voice + "/auth", json={}, timeout=10).status_code == 400

    async def clients():
        caller = await RealtimeClient.connect(s, alice["jwt"])
        callee = await RealtimeClient.connect(s, bob["jwt"])
        placed = await caller.request("call:create", {"to": "bob"})
        assert placed["type"] == "call:create:success", placed
        call_id = placed["body"]["call_id"]
        invite = await callee.wait_for(lambda m: m.get("type") == "call:invite", timeout=10)
        assert invite["body"]["from"] == {"type": "app", "user": "alice"}
        answered = await callee.request("call:answer", {"call_id": invite["body"]["call_id"]})
        assert answered["type"] == "call:answer:success", answered
        await caller.wait_for(lambda m: m.get("type") == "leg:status:update" and m["body"]["leg_id"] == invite["body"]["call_id"]
                              and m["body"]["status"] == "answered", timeout=10)
        hung = await caller.request("call:hangup", {"call_id": call_id})
        assert hung["type"] == "call:hangup:success", hung
        await callee.wait_for(lambda m: m.get("type") == "call:hangup", timeout=10)
        await caller.close()
        await callee.close()
        return call_id, invite["body"]["call_id"]

    call_id, callee_leg = run_async(clients(), 40)
    deadline = time.time() + 10
    while time.time() < deadline and ("completed" not in statuses(out, call_id) or "completed" not in statuses(out, callee_leg)):
        time.sleep(0.1)
    print("caller", statuses(out, call_id), "callee", statuses(out, callee_leg))
    assert statuses(out, call_id) == ["started", "ringing", "answered", "completed"]
    assert statuses(out, callee_leg) == ["started", "ringing", "answered", "completed"]
    completed = [e for e in events(out) if e.get("uuid") == call_id and e.get("status") == "completed"][0]
    assert completed["direction"] == "inbound" and int(completed["duration"]) >= 0


def test_swift_sdk_clients_call_each_other_through_the_app_server(stack, tmp_path):
    """The Swift SDK's call flow against the reference app server: `switchboard client call --as NAME --app URL` logs in
    through its `/auth`; the caller's `call:create` runs its answer route (talk, then connect to the app user), the
    callee answers; both hear the other's tone and the caller hangs up; the event route logs every status."""
    s, _, voice, out = stack
    base = [binary("switchboard", "SWITCHBOARD_BIN"), "client", "call", "--server", s.base, "--app", voice, "--json"]
    heard = {name: tmp_path / f"{name}.wav" for name in ("erin", "frank")}
    erin = subprocess.Popen(base + ["--answer", "--as", "erin", "--play", "tone:660", "--record", str(heard["erin"]), "--seconds", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = json.loads(erin.stdout.readline())
        assert first["event"] == "waiting", first
        frank = subprocess.run(base + ["erin", "--as", "frank", "--play", "tone:440", "--record", str(heard["frank"]), "--seconds", "10"],
                               capture_output=True, text=True, timeout=60)
        assert frank.returncode == 0, frank.stderr
        f = [json.loads(l) for l in frank.stdout.splitlines() if l.strip()]
        e = [first] + [json.loads(l) for l in erin.communicate(timeout=30)[0].splitlines() if l.strip()]
    finally:
        if erin.poll() is None:
            erin.kill()
            erin.wait()
    call = next(l["call_id"] for l in f if l["event"] == "placed")
    invite = next(l for l in e if l["event"] == "call:invite")
    assert invite["from"] == "frank", invite
    assert f[-1]["event"] == "call:hangup" and f[-1]["reason"] == "localHangup", f[-1]
    assert e[-1]["event"] == "call:hangup" and e[-1]["reason"] == "remoteHangup", e[-1]
    # Each recorded the other's tone (the caller first hears the answer route's talk: its last two seconds are erin).
    for name, tone in (("erin", 440), ("frank", 660)):
        samples, rate = wav_samples(heard[name])
        tail = samples[-2 * rate:]
        assert len(samples) > 3 * rate and np.abs(tail).mean() > 100, f"{name} heard silence"
        assert abs(dominant_frequency(tail, rate) - tone) < 15, (name, dominant_frequency(tail, rate))
    wait_until(lambda: "completed" in statuses(out, call), timeout=10, what="completed logged")
    assert statuses(out, call) == ["started", "ringing", "answered", "completed"]


def test_the_dialer_page_in_production_logs_in_through_switchboard_voice(stack):
    """Without --dev the page is served but has no built-in app server: `?app=` points it at switchboard-voice."""
    from playwright.sync_api import sync_playwright

    from media_support import CHROMIUM_ARGS
    from rig import CHROMIUM, screenshot
    s, _, voice, out = stack
    assert requests.post(s.base + "/phone/api/auth", json={"name": "x"}, timeout=5).status_code == 404
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            # Opened without ?app= on a server in production, the page says why it cannot log in.
            lost = browser.new_context().new_page()
            lost.goto(f"{s.base}/phone/")
            lost.fill("#name", "erin")
            lost.click("#login")
            lost.wait_for_selector("#error:not([hidden])")
            assert "no built-in app server" in lost.inner_text("#error"), lost.inner_text("#error")
            pages = {}
            for name in ("carol", "dan"):
                page = browser.new_context(viewport={"width": 375, "height": 740}).new_page()
                page.set_default_timeout(15_000)
                page.goto(f"{s.base}/phone/?app={voice}")
                page.fill("#name", name)
                page.click("#login")
                page.wait_for_selector("#dial-view:not([hidden])")
                assert page.is_hidden("#test-hint")  # switchboard-voice has no test number
                pages[name] = page
            carol, dan = pages["carol"], pages["dan"]
            carol.fill("#number", "dan")
            carol.click("#call")
            dan.wait_for_selector("#incoming-view:not([hidden])")
            dan.click("#answer")
            for page in (carol, dan):
                page.wait_for_function("document.querySelector('#call-state').dataset.state === 'answered'")
            call_id = carol.evaluate("phone.call.id")
            screenshot(carol, "phone-voice-example-answered")
            dan.click("#hangup")
            carol.wait_for_function("document.querySelector('#call-state').dataset.state === 'ended'")
            assert "dan hung up" in carol.inner_text("#call-state")
        finally:
            browser.close()
    wait_until(lambda: "completed" in statuses(out, call_id), timeout=10, what="completed logged")
    assert statuses(out, call_id) == ["started", "ringing", "answered", "completed"]
