"""The dialer web app (/phone/) in real Debian Chromium calling real SIP phones, and phones calling it.

One `serve --dev` with a SIP port. A baresip phone (number 15557654321, playing a 660 Hz sine) sits behind
a `carrier` trunk; the number 15550142 is bought on that trunk and linked to the built-in `phone-demo`
application, so it is the caller id of the page's calls to phones and the number phones call to reach
the page. The page's fake microphone plays a 440 Hz WAV.

1. Page → phone: calling, ringing (baresip rings until the test accepts), answered; the page hears
   660 Hz, baresip's recording holds 440 Hz; keypad digits reach baresip as RFC 4733 events; Hang up
   ends both sides and the phone leg is `completed` (the phone-demo event log and GET /v1/calls).
2. Phone → page: baresip dials 15550142, the page shows the incoming call from 15557654321, Answer
   connects audio both ways, the phone hangs up. Reject: the page goes back to the dialer and the phone
   gets 603 Decline (the phone-to-app NCCO is a lone `connect`, so the call rings until the user answers),
   both legs are `rejected`.
3. The page dials the built-in test number from the hint, 15550100 (on the dev-loopback trunk, while the
   caller id is on the carrier's), and hears the prompt, then its own 440 Hz echoed.
4. Firefox (in a network namespace, production mode through switchboard-voice) calls the phone too.

Screenshots of every state: Tests/interop/artifacts/phone-sip-*.png."""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from accounts_support import bearer, token
from firefox_support import FIREFOX
from phone_support import (DOMINANT_FREQUENCY_JS, LOUDEST_JS, RECORD_STATES_JS, call_state, inbound_bytes, launch, open_phone,
                           tone_wav, wait)
from media_support import dominant_frequency
from rig import screenshot
from sip_support import Baresip, api, metric, start_sip_server
from test_rooms_firefox import NAMESPACE_SETUP

PHONE = "15557654321"
APP_NUMBER = "15550142"


class Stack:
    def __init__(self, server, sip_port, phone, app_id, key):
        self.server, self.sip_port, self.phone, self.app_id, self.key = server, sip_port, phone, app_id, key

    def calls(self, **query):
        """The application's call legs (GET /v1/calls with an application JWT), newest first."""
        r = requests.get(self.server.http_url + "/v1/calls", params={"order": "desc", **query},
                         headers={"Authorization": bearer(token(self.app_id, self.key))}, timeout=10)
        assert r.status_code == 200, r.text
        return r.json()["_embedded"]["calls"]

    def events(self):
        """What phone-demo's event route logged: (status, uuid, direction) per event."""
        found = []
        for line in self.server.log().splitlines():
            if "logger=phone-demo" not in line or "voice event" not in line:
                continue
            fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
            found.append((fields.get("status"), fields.get("uuid"), fields.get("direction")))
        return found


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    server, sip_port = start_sip_server(dev=True)
    phone = Baresip(f"<sip:{PHONE}@127.0.0.1>;regint=0;answermode=manual", tmp_path_factory.mktemp("phone"), tone=660)
    try:
        # The demo application is made on first login; its id and key are kept in the data directory.
        assert requests.post(server.http_url + "/phone/api/auth", json={"name": "setup"}, timeout=10).status_code == 200
        demo = json.loads((server.data_dir / "phone-demo.json").read_text())
        r = api(server, "POST", "/v1/sip/trunks", json={"name": "carrier", "host": "127.0.0.1", "port": phone.sip_port,
                                                         "transport": "udp", "allow": ["127.0.0.0/8"], "health_interval": 0})
        assert r.status_code == 201, r.text
        r = api(server, "POST", "/number/buy", data={"country": "US", "msisdn": APP_NUMBER, "trunk_id": r.json()["id"]})
        assert r.status_code == 200, r.text
        r = api(server, "POST", "/number/update", data={"country": "US", "msisdn": APP_NUMBER, "app_id": demo["id"]})
        assert r.status_code == 200, r.text
        yield Stack(server, sip_port, phone, demo["id"], demo["private_key"])
    finally:
        phone.stop()
        server.stop()
        server.cleanup()


@pytest.fixture(scope="module")
def playwright():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright):
    b = launch(playwright, f"--use-file-for-fake-audio-capture={tone_wav(440)}")
    yield b
    b.close()


def heard(page, near, tolerance=15, timeout=10, level=-70):
    """Measures what the page hears until it is `near` Hz above `level` dB (the mix may take a moment to settle, and
    a 1.5 s window that opens before a sound starts reads it near the frequency but faint)."""
    deadline = time.monotonic() + timeout
    while True:
        measured = page.evaluate(DOMINANT_FREQUENCY_JS)
        if (abs(measured["frequency"] - near) < tolerance and measured["level"] > level) or time.monotonic() > deadline:
            return measured


def audio_flows(page, who):
    wait(lambda: inbound_bytes(page)[0] > 0, 10, f"{who} receives audio")
    before = inbound_bytes(page)
    time.sleep(2)
    after = inbound_bytes(page)
    print(who, "bytes in/out before", before, "after", after)
    assert after[0] - before[0] > 5000, f"{who}'s inbound audio is not growing: {before} {after}"
    assert after[1] > before[1], f"{who} sends nothing"


def phone_heard(phone, near):
    played, rate = phone.played()
    assert len(played) > rate * 2, "the phone recorded nothing"
    frequency = dominant_frequency(played[-int(rate * 2.5):-int(rate * 0.5)], rate)
    print("the phone heard", frequency, "Hz")
    assert abs(frequency - near) < 15, f"the phone heard {frequency} Hz"


def phone_calls_ended(phone, before):
    log = phone.log()[before:]
    return "terminated" in log.lower() or "closed" in log.lower()


def test_the_page_calls_a_phone_which_rings_answers_hears_the_page_gets_digits_and_is_hung_up(stack, browser):
    page = open_phone(browser, stack.server, "alice")
    mark = len(stack.phone.log())
    page.fill("#number", "+1 555 765 4321")
    page.evaluate(RECORD_STATES_JS)
    page.click("#call")
    page.wait_for_selector("#call-view:not([hidden])")
    wait(lambda: call_state(page)[0] == "ringing", 15,
         f"the page shows ringing: {call_state(page)}\nbaresip:\n{stack.phone.log()[mark:][-2000:]}")
    assert "Ringing +15557654321" in call_state(page)[1], call_state(page)
    wait(lambda: "incoming call" in stack.phone.log()[mark:].lower(), 5, "baresip rings")
    screenshot(page, "phone-sip-ringing")

    stack.phone.command("/accept")
    wait(lambda: call_state(page)[0] == "answered", 10, f"answered: {call_state(page)}")
    assert page.evaluate("window.seenStates") == ["calling", "ringing", "answered"]
    audio_flows(page, "the page")
    measured = heard(page, 660)
    print("the page hears", measured)
    assert abs(measured["frequency"] - 660) < 15, measured
    screenshot(page, "phone-sip-answered")

    # The in-call keypad: the digits reach the phone as RFC 4733 events.
    page.click("#show-dtmf")
    page.click('#dtmf-keypad button[data-key="5"]')
    page.keyboard.press("#")
    wait(lambda: page.inner_text("#dtmf-sent") == "5#", 5, "digits accepted")
    wait(lambda: "received event: '5'" in stack.phone.log()[mark:] and "received event: '#'" in stack.phone.log()[mark:], 10,
         f"DTMF at the phone:\n{stack.phone.log()[mark:][-1500:]}")
    assert page.is_hidden("#error")
    screenshot(page, "phone-sip-dtmf")
    time.sleep(1)

    conversation = page.evaluate("phone.call.conversationID")
    page.click("#hangup")
    wait(lambda: call_state(page)[0] == "ended", 5, "the page's call ends")
    assert "You hung up" in call_state(page)[1]
    wait(lambda: phone_calls_ended(stack.phone, mark), 10, f"the phone's call ends:\n{stack.phone.log()[mark:][-1500:]}")
    screenshot(page, "phone-sip-ended")

    # Both legs complete: the phone's leg (outbound, to the number) and the page's.
    def legs_completed():
        legs = stack.calls(conversation_uuid=conversation)
        return len(legs) == 2 and all(c["status"] == "completed" for c in legs) and legs
    legs = wait(legs_completed, 10, f"both legs completed: {stack.calls(conversation_uuid=conversation)}")
    to_phone = [c for c in legs if c["from"] == {"type": "phone", "number": APP_NUMBER}][0]
    assert to_phone["to"] == {"type": "phone", "number": PHONE} and int(to_phone["duration"]) >= 3, to_phone
    wait(lambda: ("completed", to_phone["uuid"], "outbound") in stack.events(), 5,
         f"phone-demo's event route got completed: {stack.events()}")
    statuses = [s for s, uuid, _ in stack.events() if uuid == to_phone["uuid"]]
    assert statuses == ["started", "ringing", "answered", "completed"], statuses
    time.sleep(0.5)
    phone_heard(stack.phone, 440)
    page.click("#done")
    assert "+15557654321 · 0:" in page.inner_text("#recent")
    page.context.close()


def test_a_phone_calls_the_page_which_answers_then_rejects_the_next_call(stack, browser):
    page = open_phone(browser, stack.server, "bob")  # the demo rings whoever logged in last
    mark = len(stack.phone.log())
    stack.phone.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{stack.sip_port}")
    page.wait_for_selector("#incoming-view:not([hidden])", timeout=15_000)
    assert page.inner_text("#incoming-from") == PHONE
    assert page.evaluate("document.activeElement.id") == "answer"
    screenshot(page, "phone-sip-incoming")

    page.evaluate(RECORD_STATES_JS)
    page.click("#answer")
    wait(lambda: call_state(page)[0] == "answered", 10, f"answered: {call_state(page)}")
    assert "Incoming call" in page.inner_text("#call-direction")
    audio_flows(page, "the page")
    measured = heard(page, 660)
    print("the page hears", measured)
    assert abs(measured["frequency"] - 660) < 15, measured
    screenshot(page, "phone-sip-incoming-answered")
    time.sleep(1.5)

    # The phone hangs up: the page says so.
    stack.phone.command("/hangup")
    wait(lambda: call_state(page)[0] == "ended", 10, f"the page's call ends: {call_state(page)}")
    assert f"{PHONE} hung up" in call_state(page)[1], call_state(page)
    wait(lambda: phone_calls_ended(stack.phone, mark), 10, "the phone's call ends")
    screenshot(page, "phone-sip-incoming-ended")
    time.sleep(0.5)
    phone_heard(stack.phone, 440)
    inbound = [c for c in stack.calls() if c["direction"] == "inbound"][0]
    assert inbound["from"] == {"type": "phone", "number": PHONE} and inbound["to"]["number"] == APP_NUMBER, inbound
    wait(lambda: ("completed", inbound["uuid"], "inbound") in stack.events(), 10, f"inbound completed: {stack.events()}")
    page.click("#done")

    # The next call is rejected: the page is back at the dialer, the phone's call is refused with 603.
    time.sleep(1)
    mark = len(stack.phone.log())

    def sent(kind, **labels):
        return metric(stack.server, f"switchboard_sip_{kind}_total", direction="out", **labels) or 0
    before = sent("responses", method="INVITE", code="200"), sent("requests", method="BYE"), \
        sent("responses", method="INVITE", code="486"), sent("responses", method="INVITE", code="603")
    stack.phone.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{stack.sip_port}")
    page.wait_for_selector("#incoming-view:not([hidden])", timeout=15_000)
    page.click("#reject")
    page.wait_for_selector("#dial-view:not([hidden])")
    assert f"{PHONE} · Declined" in page.inner_text("#recent")
    assert "You rejected the call" in page.inner_text("#announcer")
    wait(lambda: phone_calls_ended(stack.phone, mark), 10, f"the phone's call ends:\n{stack.phone.log()[mark:][-1500:]}")
    screenshot(page, "phone-sip-rejected")
    # What the phone got: 603 Decline, never answered (no 200 OK, no BYE).
    after = sent("responses", method="INVITE", code="200"), sent("requests", method="BYE"), \
        sent("responses", method="INVITE", code="486"), sent("responses", method="INVITE", code="603")
    delta = [a - b for a, b in zip(after, before)]
    print("200 OK, BYE, 486, 603 sent to the phone:", delta)
    assert delta == [0, 0, 0, 1], (before, after)
    ended = stack.phone.log()[mark:]
    print("the phone saw:", [line for line in ended.splitlines() if "terminated" in line.lower() or "closed" in line.lower()])
    legs = stack.calls()
    app_leg = [c for c in legs if c["to"]["type"] == "app"][0]
    phone_leg = [c for c in legs if c["direction"] == "inbound"][0]
    assert app_leg["status"] == "rejected", app_leg
    wait(lambda: ("rejected", phone_leg["uuid"], "inbound") in stack.events(), 10, f"inbound rejected: {stack.events()}")
    page.context.close()


def test_the_page_calls_the_built_in_test_number_and_hears_the_prompt_then_itself(stack, browser):
    """The test number is on the dev-loopback trunk: the call goes there even though the page's caller id,
    the application's number, belongs to the carrier trunk."""
    mark = len(stack.phone.log())
    page = open_phone(browser, stack.server, "newcomer")
    page.wait_for_selector("#test-hint:not([hidden])")
    assert page.inner_text("#test-number") == "15550100"
    page.click("#test-number")
    assert page.input_value("#number") == "15550100"
    page.click("#call")
    wait(lambda: call_state(page)[0] == "answered", 15,
         lambda: f"the test phone answers: {call_state(page)} {page.inner_text('#error')}\n"
                 f"the carrier's phone:\n{stack.phone.log()[mark:][-1000:]}")
    # The prompt first: speech, well above silence, and not the page's own tone.
    # Speech moves its strongest frequency from moment to moment (one look found it at 447 Hz); the page's own tone,
    # echoed once the prompt ends, holds it at 440 Hz: at least one of five looks 200 ms apart finds it elsewhere.
    looks = []
    for _ in range(5):
        looks.append(page.evaluate(DOMINANT_FREQUENCY_JS))
        time.sleep(0.2)
    prompt_level = page.evaluate(LOUDEST_JS, 2000)
    print("prompt loudest", prompt_level, "dBFS; dominant", looks)
    assert prompt_level > -40 and any(abs(look["frequency"] - 440) > 20 for look in looks), (prompt_level, looks)
    screenshot(page, "phone-sip-test-number")
    # Then the page's 440 Hz comes back.
    echo = heard(page, 440, timeout=20)
    print("echo", echo)
    assert abs(echo["frequency"] - 440) < 15 and echo["level"] > -70, echo
    screenshot(page, "phone-sip-test-number-echo")
    page.click("#hangup")
    wait(lambda: call_state(page)[0] == "ended", 5, "ended")
    assert "incoming call" not in stack.phone.log()[mark:].lower(), "the carrier's phone rang"
    page.context.close()


def test_the_page_calls_a_sip_address_directly_and_they_hear_each_other(stack, browser, tmp_path):
    """A SIP address typed into the dialer: the demo app server's NCCO connects to it, and the server calls the
    desk phone at its own address (no trunk involved)."""
    desk = Baresip("<sip:desk@127.0.0.1>;regint=0;answermode=auto", tmp_path, tone=880)
    try:
        page = open_phone(browser, stack.server, "sipper")
        page.fill("#number", "sip:desk@127.0.0.1 extra")
        page.click("#call")
        assert "SIP address is sip:user@host" in page.inner_text("#number-error")
        page.fill("#number", f"sip:desk@127.0.0.1:{desk.sip_port}")
        page.click("#call")
        wait(lambda: call_state(page)[0] == "answered", 15,
             lambda: f"the desk phone answers: {call_state(page)} {page.inner_text('#error')}\n{desk.log()[-1500:]}")
        assert f"desk@127.0.0.1:{desk.sip_port}" in call_state(page)[1]
        tone = heard(page, 880)
        print("the page hears", tone)
        assert abs(tone["frequency"] - 880) < 15 and tone["level"] > -70, tone
        screenshot(page, "phone-sip-address")
        time.sleep(2.5)  # the desk phone's recording of the page's tone
        page.click("#hangup")
        wait(lambda: call_state(page)[0] == "ended", 5, "ended")
        wait(lambda: "terminated" in desk.log().lower() or "closed" in desk.log().lower(), 10, "the desk phone's call ended")
        phone_heard(desk, 440)
        page.context.close()
    finally:
        desk.stop()


def transfer_before_reply(context, seen):
    """Routes the page's realtime socket so that the server's reply to `call:create` reaches the page only after
    the `call:transfer` for that call: the order a fast answer webhook can give (the NCCO runs as the call is
    created). `seen` is filled with what happened, for the test to check the order was the one it meant."""
    seen.update(create_tid=None, held=None, reordered=False)

    def route(ws):
        server = ws.connect_to_server()

        def from_page(message):
            m = json.loads(message)
            if m.get("type") == "call:create":
                seen["create_tid"] = str(m.get("tid"))
            server.send(message)

        def from_server(message):
            m = json.loads(message)
            if seen["create_tid"] is not None and str(m.get("rid")) == seen["create_tid"] and not seen["reordered"]:
                seen["held"] = message
                return
            ws.send(message)
            if m.get("type") == "call:transfer" and seen["held"] is not None:
                seen["reordered"] = True
                ws.send(seen["held"])

        ws.on_message(from_page)
        server.on_message(from_server)

    context.route_web_socket("**/v1/realtime", route)


@pytest.mark.parametrize("order", ["reply-first", "transfer-first"])
def test_the_pages_call_follows_its_ncco_into_a_conversation_with_a_phone(stack, browser, order):
    """The application's answer webhook (a hooks server here) answers every call with `conversation` "web-conf": the
    page's call is moved there (`call:transfer`), shows as answered and publishes into it; the phone that dialled in
    is in the same conversation, so each hears the other (the page 660 Hz, the phone 440 Hz); the phone hanging up
    ends the page's call, as a one-to-one dialer does. `transfer-first`: the page is told of the move before
    `call:create`'s reply gives it the call's id (the page keeps the move until then)."""
    from voice_support import Hooks
    hooks = Hooks()
    hooks.ncco = lambda req: [{"action": "conversation", "name": "web-conf"}]
    original = api(stack.server, "GET", f"/v2/applications/{stack.app_id}").json()
    webhooks = {"answer_url": {"address": hooks.url + "/answer", "http_method": "POST"},
                "event_url": {"address": hooks.url + "/event", "http_method": "POST"}}
    r = api(stack.server, "PUT", f"/v2/applications/{stack.app_id}", json={"name": original["name"], "capabilities": {"voice": {"webhooks": webhooks}}})
    assert r.status_code == 200, r.text
    routed = {}
    page = open_phone(browser, stack.server, "carol",
                      prepare=(lambda context: transfer_before_reply(context, routed)) if order == "transfer-first" else None)
    try:
        page.fill("#number", "conference")
        page.click("#call")
        wait(lambda: call_state(page)[0] == "answered", 15, lambda: f"the page's call answered once moved into the conversation: {call_state(page)} {routed}")
        if order == "transfer-first":
            assert routed["reordered"], routed
        assert page.evaluate("phone.media.conversationID") == page.evaluate("phone.call.conversationID")
        screenshot(page, "phone-sip-conversation")
        before = len(stack.phone.log())
        stack.phone.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{stack.sip_port}")
        wait(lambda: len(hooks.answers) == 2, 15, "the phone's call answered")
        measured = heard(page, 660)
        print("the page heard", measured)
        assert abs(measured["frequency"] - 660) < 15, measured
        time.sleep(3)
        stack.phone.command("/hangup")
        wait(lambda: phone_calls_ended(stack.phone, before), 10, "the phone's call ended")
        phone_heard(stack.phone, 440)
        # The dialer is one-to-one: the other side leaving ends the page's call too.
        wait(lambda: call_state(page)[0] == "ended", 10, f"the page's call ended: {call_state(page)}")
    finally:
        page.close()
        original_hooks = original["capabilities"]["voice"]["webhooks"]
        api(stack.server, "PUT", f"/v2/applications/{stack.app_id}",
            json={"name": original["name"], "capabilities": {"voice": {"webhooks": original_hooks}}})
        hooks.http.shutdown()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip") or not shutil.which(FIREFOX),
                    reason="Firefox's media test needs root, iproute2 and Firefox ESR (scripts/setup --test)")
def test_firefox_calls_a_phone_which_answers_hears_it_gets_digits_and_is_hung_up():
    """Firefox gathers ICE candidates only on non-loopback interfaces: the whole stack runs in a network
    namespace whose veth ends stand in for a real interface (phone_firefox_netns.py)."""
    namespace = f"sb-phone-ff-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    try:
        for command in NAMESPACE_SETUP:
            subprocess.run(["ip", "netns", "exec", namespace] + command, check=True)
        here = Path(__file__).resolve().parent
        run = subprocess.run(["ip", "netns", "exec", namespace, sys.executable, str(here / "phone_firefox_netns.py")],
                             cwd=here, capture_output=True, text=True, timeout=240)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
        result = json.loads(run.stdout.strip().splitlines()[-1])
        print(result)
        assert result["states"] == ["calling", "ringing", "answered"], result
        assert result["inbound_packets"] > 50 and result["outbound_packets"] > 50, result
        assert result["dtmf_at_phone"], result
        assert "You hung up" in result["ended_text"], result
        assert result["own_leg_completed"] and result["completed_legs"] >= 2, result
        # Firefox's fake microphone is a 1 kHz sine; the phone plays 660 Hz.
        assert result["phone_heard_rms"] > 100 and abs(result["phone_heard_hz"] - 1000) < 15, result
        assert abs(result["page_heard"]["frequency"] - 660) < 15, result
    finally:
        subprocess.run(["ip", "netns", "del", namespace])
