"""The dialer web app (/phone/) in real Debian Chromium, two browsers on loopback: alice's fake
microphone plays a 440 Hz WAV, bob's 660 Hz. alice calls bob by user name, bob answers, both hear
each other (getStats bytes rising, the tone's frequency measured in the page), a DTMF key is sent,
alice hangs up; then bob rejects a second call. A browser that refuses the microphone says so.
Screenshots of every state go to Tests/interop/artifacts/phone-*.png."""
import tempfile
import time

import pytest
import requests

from phone_support import (DOMINANT_FREQUENCY_JS, PHONE_SIZE, call_state, inbound_bytes, launch, open_phone, tone_wav,
                           wait)
from rig import CHROMIUM, screenshot, start_server


@pytest.fixture(scope="module")
def server():
    s = start_server(https=False, dev=True)
    yield s
    s.stop()
    s.cleanup()


@pytest.fixture(scope="module")
def playwright():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        yield p


def test_start_page_links_the_dialer_and_the_demo_routes_answer(server):
    start = requests.get(server.http_url + "/", timeout=5)
    assert start.status_code == 200 and 'href="/phone/"' in start.text
    page = requests.get(server.http_url + "/phone/", timeout=5)
    assert page.status_code == 200 and "phone.js" in page.text
    assert requests.get(server.http_url + "/phone/api/config", timeout=5).json() == {"test_number": None}
    auth = requests.post(server.http_url + "/phone/api/auth", json={"name": "carol"}, timeout=10).json()
    assert set(auth) == {"name", "jwt", "user_id"} and auth["user_id"].startswith("USR-")
    bad = requests.post(server.http_url + "/phone/api/auth", json={"name": ""}, timeout=5)
    assert bad.status_code == 400 and bad.json()["title"] and bad.json()["type"]
    # The tutorial's NCCO: a number gets the caller id and a phone endpoint, a user name an app endpoint.
    to_phone = requests.get(server.http_url + "/phone/api/answer", params={"to": "+15550100", "from": "alice"}, timeout=5).json()
    assert to_phone == [{"action": "talk", "text": "Please wait while we connect you."},
                        {"action": "connect", "from": "15550199", "endpoint": [{"type": "phone", "number": "15550100"}]}]
    to_user = requests.get(server.http_url + "/phone/api/answer", params={"to": "bob"}, timeout=5).json()
    assert to_user[1] == {"action": "connect", "endpoint": [{"type": "app", "user": "bob"}]}
    assert requests.get(server.http_url + "/phone/api/answer", timeout=5).status_code == 400
    assert requests.post(server.http_url + "/phone/api/event", json={"status": "started"}, timeout=5).status_code == 204


def test_alice_calls_bob_by_name_they_talk_send_a_tone_and_hang_up_then_bob_rejects(server, playwright):
    alice_browser = launch(playwright, f"--use-file-for-fake-audio-capture={tone_wav(440)}")
    bob_browser = launch(playwright, f"--use-file-for-fake-audio-capture={tone_wav(660)}")
    try:
        alice = open_phone(alice_browser, server, "alice")
        bob = open_phone(bob_browser, server, "bob")
        screenshot(alice, "phone-dial")

        # Validation: letters after digits is neither a number nor a name.
        alice.fill("#number", "12ab")
        alice.click("#call")
        assert alice.is_visible("#number-error") and "6 to 15 digits" in alice.inner_text("#number-error")
        assert alice.get_attribute("#number", "aria-invalid") == "true"
        screenshot(alice, "phone-invalid-number")
        # A number the Voice API would refuse (E.164: 6 to 15 digits) is refused in the page.
        alice.fill("#number", "12345")
        alice.click("#call")
        assert alice.is_visible("#number-error") and "6 to 15 digits" in alice.inner_text("#number-error")

        # Readable at 375 px: nothing sticks out sideways.
        assert alice.evaluate("document.documentElement.scrollWidth") <= PHONE_SIZE["width"]
        # By keyboard: Enter in the number field calls; the incoming call takes the focus to Answer.
        alice.fill("#number", "bob")
        alice.press("#number", "Enter")
        alice.wait_for_selector("#call-view:not([hidden])")
        assert alice.get_attribute("#call-state", "aria-live") == "polite"
        bob.wait_for_selector("#incoming-view:not([hidden])", timeout=10_000)
        assert bob.inner_text("#incoming-from") == "alice"
        assert bob.evaluate("document.activeElement.id") == "answer"
        assert "Incoming call from alice" in bob.inner_text("#announcer")
        wait(lambda: call_state(alice)[0] in ("calling", "ringing"), 5, "alice calling")
        wait(lambda: call_state(alice)[0] == "ringing", 5, "alice sees ringing")
        assert "Ringing bob" in call_state(alice)[1]
        screenshot(alice, "phone-ringing")
        screenshot(bob, "phone-incoming")

        bob.keyboard.press("Enter")
        for page, who in ((alice, "alice"), (bob, "bob")):
            wait(lambda: call_state(page)[0] == "answered", 10, f"{who} answered")
        # The timer runs.
        wait(lambda: alice.inner_text("#timer") not in ("0:00", ""), 3, "alice's timer moves")
        first = alice.inner_text("#timer")
        wait(lambda: alice.inner_text("#timer") != first, 3, "alice's timer moves on")

        # Audio both ways: inbound bytes growing on both pages.
        for page, who in ((alice, "alice"), (bob, "bob")):
            wait(lambda: inbound_bytes(page)[0] > 0, 10, f"{who} receives audio")
        before = {who: inbound_bytes(page) for who, page in (("alice", alice), ("bob", bob))}
        time.sleep(2)
        after = {who: inbound_bytes(page) for who, page in (("alice", alice), ("bob", bob))}
        print("bytes in/out before", before, "after", after)
        for who in ("alice", "bob"):
            assert after[who][0] - before[who][0] > 5000, f"{who}'s inbound audio is not growing: {before} {after}"
            assert after[who][1] > before[who][1], f"{who} sends nothing"
        # What bob hears is alice's 440 Hz; alice hears bob's 660 Hz (within an FFT bin or two).
        heard_by_bob = bob.evaluate(DOMINANT_FREQUENCY_JS)
        heard_by_alice = alice.evaluate(DOMINANT_FREQUENCY_JS)
        print("bob hears", heard_by_bob, "alice hears", heard_by_alice)
        assert abs(heard_by_bob["frequency"] - 440) < 15, heard_by_bob
        assert abs(heard_by_alice["frequency"] - 660) < 15, heard_by_alice
        screenshot(alice, "phone-answered-alice")
        screenshot(bob, "phone-answered-bob")

        # Mute toggles; DTMF is accepted by the server.
        alice.click("#mute")
        wait(lambda: alice.get_attribute("#mute", "aria-pressed") == "true", 3, "alice muted")
        alice.click("#mute")
        wait(lambda: alice.get_attribute("#mute", "aria-pressed") == "false", 3, "alice unmuted")
        alice.click("#show-dtmf")
        alice.click('#dtmf-keypad button[data-key="5"]')
        alice.keyboard.press("#")
        wait(lambda: alice.inner_text("#dtmf-sent") == "5#", 3, "digits accepted")
        assert alice.is_hidden("#error")
        screenshot(alice, "phone-dtmf")

        alice.click("#hangup")
        wait(lambda: call_state(alice)[0] == "ended", 3, "alice ended")
        assert "You hung up" in call_state(alice)[1]
        wait(lambda: call_state(bob)[0] == "ended", 5, "bob ended")
        assert "alice hung up" in call_state(bob)[1]
        screenshot(alice, "phone-ended-alice")
        screenshot(bob, "phone-ended-bob")

        # Second call: bob rejects; alice sees why.
        alice.click("#done")
        bob.click("#done")
        alice.fill("#number", "bob")
        alice.click("#call")
        bob.wait_for_selector("#incoming-view:not([hidden])", timeout=10_000)
        bob.click("#reject")
        wait(lambda: call_state(alice)[0] == "ended", 10, "alice sees the rejection")
        assert "bob declined the call" in call_state(alice)[1]
        screenshot(alice, "phone-rejected")
        alice.click("#done")
        bob.wait_for_selector("#dial-view:not([hidden])")
        # Recent calls: newest first.
        recent = alice.eval_on_selector_all("#recent li", "els => els.map(e => e.textContent)")
        assert "bob · Declined" in recent[0] and "bob · 0:" in recent[1], recent
        assert "alice · Declined" in bob.inner_text("#recent")
        screenshot(alice, "phone-recent")
    finally:
        alice_browser.close()
        bob_browser.close()


def test_a_refused_microphone_is_explained_and_no_call_is_placed(server, playwright):
    # No fake UI: the permission prompt is dismissed, so getUserMedia fails with NotAllowedError.
    browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                         args=["--no-sandbox", "--use-fake-device-for-media-stream"])
    try:
        page = open_phone(browser, server, "dave")
        page.fill("#number", "15550100")
        page.click("#call")
        page.wait_for_selector("#mic-message:not([hidden])")
        text = page.inner_text("#mic-message")
        assert "Microphone access was refused" in text, text
        assert page.is_visible("#dial-view") and page.is_hidden("#call-view")
        screenshot(page, "phone-mic-refused")
    finally:
        browser.close()


def test_losing_the_server_is_announced_and_the_page_comes_back(playwright):
    data = tempfile.mkdtemp(prefix="phone-net-")
    s = start_server(https=False, dev=True, data_dir=data)
    port = s.http_port
    browser = launch(playwright)
    try:
        page = open_phone(browser, s, "erin")
        s.stop()
        page.wait_for_selector("#net-message:not([hidden])", timeout=10_000)
        assert "connection to the server was lost" in page.inner_text("#net-message")
        assert page.inner_text("#net") == "Reconnecting…"
        assert page.inner_text("#announcer").startswith("Connection lost")
        screenshot(page, "phone-network-lost")
        s = start_server(https=False, dev=True, data_dir=data, http_port=port)
        # Back on the same address: the session is gone with the old process, so the page logs in again.
        page.wait_for_selector("#net-message", state="hidden", timeout=20_000)
        assert page.evaluate("phone.rt.state") == "connected" and page.is_hidden("#net")
        assert page.is_visible("#dial-view")
    finally:
        browser.close()
        s.stop()
        s.cleanup()
        import shutil
        shutil.rmtree(data, ignore_errors=True)


def test_a_call_cut_by_a_server_restart_ends_on_both_pages_with_a_reason(playwright):
    data = tempfile.mkdtemp(prefix="phone-restart-")
    s = start_server(https=False, dev=True, data_dir=data)
    port = s.http_port
    browser = launch(playwright)
    try:
        alice = open_phone(browser, s, "alice")
        bob = open_phone(browser, s, "bob")
        alice.fill("#number", "bob")
        alice.click("#call")
        bob.wait_for_selector("#incoming-view:not([hidden])")
        bob.click("#answer")
        for page in (alice, bob):
            wait(lambda: call_state(page)[0] == "answered", 10, "answered")
        s.stop()
        alice.wait_for_selector("#net-message:not([hidden])", timeout=10_000)
        assert "call's audio stops" in alice.inner_text("#net-message")
        screenshot(alice, "phone-call-network-lost")
        s = start_server(https=False, dev=True, data_dir=data, http_port=port)
        # The restarted server ended the interrupted legs; the pages read that back after logging in again.
        for page, who in ((alice, "alice"), (bob, "bob")):
            wait(lambda: call_state(page)[0] == "ended", 20, f"{who}'s call ends after the restart")
            assert "cut off while the connection was down" in call_state(page)[1]
        screenshot(alice, "phone-call-ended-by-restart")
    finally:
        browser.close()
        s.stop()
        s.cleanup()
        import shutil
        shutil.rmtree(data, ignore_errors=True)
