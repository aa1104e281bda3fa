"""DTLS-SRTP (RFC 5763, RFC 5764) on SIP calls, against baresip's dtls_srtp module (`mediaenc=dtls_srtp`: it offers
UDP/TLS/RTP/SAVPF with its certificate's fingerprint, checks ours, and sends no media until its handshakes are
done). No keys travel in the signalling, so the trunk is plain UDP: a trunk with `media_encryption: dtls-srtp`
carries an app-to-phone call (we offer, baresip starts the handshakes) and a phone-to-app call (baresip offers,
we start them), each heard both ways; a phone that only does plain RTP is refused on that trunk."""

from __future__ import annotations

import pytest

from rig import wait_until
from sip_support import Baresip, api, metric, start_sip_server
from test_sip_srtp import assert_heard, assert_plain_refused, has_tone, recorded
from test_sip_tls import app_request, call_status
from phone_support import tone_wav
from voice_support import Hooks, application

APP_NUMBER = "15550177"
CARRIER_PHONE = "15550166"


def dtls_phone(tmp_path, name, tone, mediaenc="dtls_srtp"):
    account = f"<sip:{CARRIER_PHONE}@127.0.0.1>;regint=0;answermode=auto" + (f";mediaenc={mediaenc}" if mediaenc else "")
    return Baresip(account, tmp_path / name, tone=tone, extra_config="module dtls_srtp.so\n")


@pytest.fixture
def sip_server():
    server, sip_port = start_sip_server()
    yield server, sip_port
    server.stop()


def dtls_trunk(server, phone):
    r = api(server, "POST", "/v1/sip/trunks", json={"name": "dtls-carrier", "host": "127.0.0.1", "port": phone.sip_port,
                                                     "transport": "udp", "allow": ["127.0.0.0/8"], "health_interval": 0,
                                                     "media_encryption": "dtls-srtp"})
    assert r.status_code == 201, r.text
    return r.json()


def test_dtls_srtp_trunk_carries_calls_both_ways_heard_both_ways(sip_server, tmp_path):
    server, sip_port = sip_server
    hooks = Hooks()
    hooks.files["/tone.wav"] = tone_wav(440, seconds=4, rate=16000).read_bytes()
    app_id, key = application(server, hooks)
    phone = dtls_phone(tmp_path, "carrier", tone=660)
    try:
        trunk = dtls_trunk(server, phone)
        assert trunk["media_encryption"] == "dtls-srtp" and trunk["transport"] == "udp"
        assert api(server, "POST", "/number/buy", data={"country": "US", "msisdn": APP_NUMBER, "trunk_id": trunk["id"]}).status_code == 200
        assert api(server, "POST", "/number/update", data={"country": "US", "msisdn": APP_NUMBER, "app_id": app_id}).status_code == 200
        ncco = [{"action": "record", "format": "wav", "eventUrl": [hooks.url + "/event/record"]},
                {"action": "stream", "streamUrl": [hooks.url + "/tone.wav"]}]

        # App to phone: we offer UDP/TLS/RTP/SAVP with actpass; baresip answers active and starts both handshakes.
        r = app_request(server, app_id, key, "POST", "/v1/calls", json={
            "to": [{"type": "phone", "number": CARRIER_PHONE}], "from": {"type": "phone", "number": APP_NUMBER}, "ncco": ncco})
        assert r.status_code == 201, r.text
        uuid = r.json()["uuid"]
        wait_until(lambda: call_status(server, app_id, key, uuid) == "completed", timeout=30,
                   what=lambda: f"the call to play out ({call_status(server, app_id, key, uuid)}); baresip:\n{phone.log()[-2000:]}\n"
                                f"server:\n{server.log()[-3000:]}")
        samples, rate = recorded(hooks, app_id, key)
        assert len(samples) > rate * 2 and has_tone(samples[-rate * 2:], rate, 660), "the recording lacks the phone's 660 Hz"
        played, prate = phone.played()
        assert_heard(played[:-prate // 2], prate, 440, "the phone")
        assert phone.log().count("verified sha-256 fingerprint OK") == 2, "baresip checked our certificate (RTP's and RTCP's) against our SDP"

        # Phone to app: baresip offers actpass; we answer active and start the handshakes.
        hooks.ncco = lambda req: ncco
        phone.command(f"/dial sip:{APP_NUMBER}@127.0.0.1:{sip_port}")
        samples, rate = recorded(hooks, app_id, key, after=1)
        assert len(samples) > rate * 2 and has_tone(samples[-rate * 2:], rate, 660), "the recording lacks the calling phone's 660 Hz"
        wait_until(lambda: len(hooks.legs()) == 2 and "completed" in hooks.statuses(hooks.legs()[1]), timeout=20,
                   what=lambda: f"the inbound call completed: {hooks.events}")
        wait_until(lambda: len(list(phone.dir.glob("dump-*-dec.wav"))) == 2, timeout=10, what="baresip's recording of the second call")
        played, prate = phone.played()
        assert_heard(played[:-prate // 2], prate, 440, "the calling phone")
        # Both legs keyed by DTLS, RTP's port and RTCP's each by its own handshake; the phone's packets authenticated:
        # what may fail is the one RTCP APP packet baresip sends in the clear as the call it places starts (dropped
        # unseen when it comes before the RTCP port is keyed).
        assert metric(server, "switchboard_phone_dtls_srtp_legs_total") == 2
        assert metric(server, "switchboard_phone_dtls_failures_total") == 0
        assert metric(server, "switchboard_phone_rtp_arrived_total") > 300
        assert metric(server, "switchboard_phone_srtp_failures_total") <= 1
    finally:
        phone.stop()


def test_dtls_srtp_trunk_refuses_plain_media_both_ways(sip_server, tmp_path):
    server, sip_port = sip_server
    plain = dtls_phone(tmp_path, "plain", tone=660, mediaenc=None)
    try:
        assert_plain_refused(server, dtls_trunk(server, plain), plain, f"sip:{APP_NUMBER}@127.0.0.1:{sip_port}",
                             number=APP_NUMBER, phone_number=CARRIER_PHONE)
        # The trunk's setting: any transport; an unknown scheme refused.
        r = api(server, "POST", "/v1/sip/trunks", json={"name": "t", "host": "127.0.0.9", "transport": "tcp", "media_encryption": "DTLS-SRTP"})
        assert r.status_code == 201 and r.json()["media_encryption"] == "dtls-srtp", r.text
        r = api(server, "POST", "/v1/sip/trunks", json={"name": "u", "host": "127.0.0.9", "media_encryption": "zrtp"})
        assert r.status_code == 400 and "none, optional, srtp or dtls-srtp" in r.text, r.text
    finally:
        plain.stop()
