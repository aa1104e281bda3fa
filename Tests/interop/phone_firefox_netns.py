"""Runs inside the network namespace `test_phone_sip_web.py` creates for Firefox (loopback plus a veth pair,
10.203.0.1 and 10.203.0.2, no route out): Firefox gathers ICE candidates only on non-loopback interfaces, so
the server announces 10.203.0.1 and listens on every address. That is production mode (`--dev` is loopback
only), so the page logs in through the reference voice app server, switchboard-voice, as a deployment would.

The dialer in Firefox calls a baresip phone behind a `carrier` trunk: ringing, answered, the page's inbound
audio, the digits at the phone, hang up, `completed` at the event URL, and what the phone recorded (Firefox's
fake microphone is its own 1 kHz sine). Prints one JSON line with what it measured; assertions are the caller's."""
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conv_support import binary
from firefox_support import Firefox
from media_support import dominant_frequency
from phone_support import DOMINANT_FREQUENCY_JS
from rig import free_port, wait_until
from sip_support import Baresip, api, start_sip_server

ADDRESS = "10.203.0.1"
PHONE = "15557654321"
APP_NUMBER = "15550142"


def main():
    work = Path(tempfile.mkdtemp(prefix="phone-firefox-"))
    server, sip_port = start_sip_server(["--media-announce", ADDRESS], host="0.0.0.0")
    phone = Baresip(f"<sip:{PHONE}@127.0.0.1>;regint=0;answermode=manual", work, tone=660)
    voice_port = free_port()
    voice = f"http://127.0.0.1:{voice_port}"
    result = {"states": []}
    proc = firefox = None
    try:
        r = api(server, "POST", "/v2/applications", json={"name": "phone firefox", "capabilities": {"voice": {"webhooks": {
            "answer_url": {"address": voice + "/voice/answer", "http_method": "GET"},
            "event_url": {"address": voice + "/voice/event", "http_method": "POST"}}}}})
        assert r.status_code == 201, r.text
        app_id = r.json()["id"]
        (work / "app.key").write_text(r.json()["keys"]["private_key"])
        r = api(server, "POST", "/v1/sip/trunks", json={"name": "carrier", "host": "127.0.0.1", "port": phone.sip_port,
                                                         "transport": "udp", "allow": ["127.0.0.0/8"], "health_interval": 0})
        assert r.status_code == 201, r.text
        assert api(server, "POST", "/number/buy", data={"country": "US", "msisdn": APP_NUMBER, "trunk_id": r.json()["id"]}).ok
        assert api(server, "POST", "/number/update", data={"country": "US", "msisdn": APP_NUMBER, "app_id": app_id}).ok
        account = json.loads((server.data_dir / "account.json").read_text())
        out = work / "voice.log"
        with open(out, "wb") as log:
            proc = subprocess.Popen([binary("switchboard-voice", "SWITCHBOARD_VOICE_BIN"), "--switchboard", server.http_url,
                                     "--app-id", app_id, "--key-file", str(work / "app.key"), "--listen", f"127.0.0.1:{voice_port}",
                                     "--api-key", account["api_key"], "--api-secret", account["api_secret"]],
                                    stdout=log, stderr=subprocess.STDOUT, cwd=work)
        wait_until(lambda: "serving" in out.read_text(), 15, what="switchboard-voice")

        firefox = Firefox()
        firefox.goto(f"http://127.0.0.1:{server.http_port}/phone/?app={voice}")
        firefox.wait_for("#login-view:not([hidden])")
        firefox.fill("#name", "fern")
        firefox.click("#login")
        firefox.wait_for("#dial-view:not([hidden])")
        firefox.fill("#number", PHONE)
        firefox.js("window.seenStates = []; const el = document.getElementById('call-state');"
                   "new MutationObserver(() => { const s = el.dataset.state; if (s && seenStates.at(-1) !== s) seenStates.push(s); })"
                   ".observe(el, {attributes: true, childList: true, subtree: true, characterData: true})")
        firefox.click("#call")
        state = lambda: firefox.js("return document.getElementById('call-state').dataset.state || ''")
        page_error = "return document.getElementById('error').textContent"
        wait_until(lambda: state() == "ringing", 15, what=f"ringing in Firefox (state {state()}; error {firefox.js(page_error)})")
        firefox.screenshot("phone-sip-firefox-ringing")
        phone.command("/accept")
        wait_until(lambda: state() == "answered", 10, what="answered in Firefox")
        result["states"] = firefox.js("return window.seenStates")

        def inbound():
            stats = firefox.js_async("phone.stats()")
            return (sum(s.get("packetsReceived", 0) for s in stats["inbound"].values()),
                    sum(s.get("bytesReceived", 0) for s in stats["inbound"].values()), stats["outbound"].get("packetsSent", 0))
        try:
            wait_until(lambda: inbound()[0] > 0, 15, what="Firefox receives audio")
        except TimeoutError:
            pass
        # Audio flows both ways: 50 packets each way (a second of audio at 20 ms) within 10 s, whatever else loads the
        # machine (a fixed 2 s window saw Firefox send 43 on a busy one).
        first = inbound()
        started = time.monotonic()
        flowed = lambda now: now[0] - first[0] > 50 and now[2] - first[2] > 50
        try:
            wait_until(lambda: flowed(inbound()), 10, what="50 packets each way")
        except TimeoutError:
            pass
        second = inbound()
        result["flow_seconds"] = round(time.monotonic() - started, 2)
        result["inbound_packets"] = second[0] - first[0]
        result["inbound_bytes"] = second[1] - first[1]
        result["outbound_packets"] = second[2] - first[2]
        result["page_heard"] = firefox.js_async(f"({DOMINANT_FREQUENCY_JS})()")
        firefox.screenshot("phone-sip-firefox-answered")

        firefox.click("#show-dtmf")
        firefox.click('#dtmf-keypad button[data-key="5"]')
        try:
            wait_until(lambda: "received event: '5'" in phone.log(), 10, what="DTMF at the phone")
            result["dtmf_at_phone"] = True
        except TimeoutError:
            result["dtmf_at_phone"] = False
        time.sleep(1)
        call_id = firefox.js("return phone.call.id")
        firefox.click("#hangup")
        wait_until(lambda: state() == "ended", 5, what="ended in Firefox")
        result["ended_text"] = firefox.js("return document.getElementById('call-state').textContent")
        wait_until(lambda: "terminated" in phone.log().lower() or "closed" in phone.log().lower(), 10, what="the phone's call ends")
        firefox.screenshot("phone-sip-firefox-ended")

        def completed():
            events = [json.loads(line) for line in out.read_text().splitlines() if line.startswith("{")]
            return [e["uuid"] for e in events if e.get("status") == "completed"]
        wait_until(lambda: len(completed()) >= 2, 10, what="completed at the event URL")
        result["completed_legs"] = len(completed())
        result["own_leg_completed"] = call_id in completed()
        time.sleep(0.5)
        played, rate = phone.played()
        tone = played[-int(rate * 2.5):-int(rate * 0.5)]
        result["phone_heard_hz"] = dominant_frequency(tone, rate)
        result["phone_heard_rms"] = float((tone ** 2).mean() ** 0.5)
    finally:
        if firefox:
            firefox.close()
        if proc:
            proc.terminate()
            proc.wait(10)
        phone.stop()
        server.stop()
        server.cleanup()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.exit(main())
