"""DTLS-SRTP (RFC 5763, RFC 5764) on SIP calls, against baresip's dtls_srtp module (`mediaenc=dtls_srtp`: it offers
UDP/TLS/RTP/SAVPF with its certificate's fingerprint, checks ours, and sends no media until its handshakes are
done). No keys travel in the signalling, so the trunk is plain UDP: a trunk with `media_encryption: dtls-srtp`
carries an app-to-phone call (we offer, baresip starts the handshakes) and a phone-to-app call (baresip offers,
we start them), each heard both ways; a phone that only does plain RTP is refused on that trunk; a caller that
offers DTLS-SRTP but does not speak it is hung up as soon as the handshake fails."""

from __future__ import annotations

import time

import pytest

from rig import wait_until
from sip_support import SIPP_SCENARIOS, Baresip, FreePort, api, metric, sipp, start_sip_server
from test_sip_srtp import assert_calls_heard_both_ways, assert_heard_after_hold_and_resume, assert_plain_refused
from voice_support import Hooks, application

APP_NUMBER = "15550177"
CARRIER_PHONE = "15550166"


def dtls_phone(tmp_path, name, tone, mediaenc="dtls_srtp", rtcp_mux=False):
    account = f"<sip:{CARRIER_PHONE}@127.0.0.1>;regint=0;answermode=auto" + (f";mediaenc={mediaenc}" if mediaenc else "")
    return Baresip(account, tmp_path / name, tone=tone, extra_config="module dtls_srtp.so\n" + ("rtcp_mux yes\n" if rtcp_mux else ""))


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


@pytest.mark.parametrize("rtcp_mux", [False, True], ids=["rtcp-apart", "rtcp-mux"])
def test_dtls_srtp_trunk_carries_calls_both_ways_heard_both_ways(sip_server, tmp_path, rtcp_mux):
    """Without RTCP multiplexing, RTP's and RTCP's ports each run a handshake; with it (baresip's `rtcp_mux yes`, and
    our offer's `a=rtcp-mux`), one handshake on the RTP port keys both."""
    server, sip_port = sip_server
    phone = dtls_phone(tmp_path, "carrier", tone=660, rtcp_mux=rtcp_mux)
    try:
        trunk = dtls_trunk(server, phone)
        assert trunk["media_encryption"] == "dtls-srtp" and trunk["transport"] == "udp"
        # App to phone: we offer UDP/TLS/RTP/SAVP with actpass; baresip answers active and starts both handshakes.
        # Phone to app: baresip offers actpass; we answer active and start them.
        assert_calls_heard_both_ways(server, trunk, phone, f"sip:{APP_NUMBER}@127.0.0.1:{sip_port}", number=APP_NUMBER,
                                     phone_number=CARRIER_PHONE)
        handshakes = 2 if rtcp_mux else 4
        assert phone.log().count("verified sha-256 fingerprint OK") == handshakes, "baresip checked our certificate against our SDP"
        assert ("DTLS-SRTP complete (audio/RTCP)" in phone.log()) != rtcp_mux
        # Both legs keyed by DTLS; the phone's packets authenticated: what may fail is the one RTCP APP packet baresip
        # sends in the clear as the call it places starts (dropped unseen when it comes before RTCP is keyed).
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


def test_a_caller_whose_dtls_handshake_fails_is_hung_up(sip_server):
    """SIPp offers DTLS-SRTP with `a=setup:passive` (we start the handshake) but speaks no DTLS: its RTP echo sends our
    ClientHello back. The handshake fails at once and the server ends the call (`failed`, with why) rather than keep
    one that can never carry audio — refused with 488 while it rings; the application's NCCO would have waited 10 s
    for a key."""
    server, sip_port = sip_server
    hooks = Hooks()
    hooks.ncco = lambda req: [{"action": "input", "type": ["dtmf"], "dtmf": {"timeOut": 10}}]
    app_id, _ = application(server, hooks)
    r = api(server, "POST", "/v1/sip/trunks", json={"name": "echo", "host": "127.0.0.1", "port": 5999, "transport": "udp",
                                                     "allow": ["127.0.0.0/8"], "health_interval": 0})
    assert r.status_code == 201, r.text
    assert api(server, "POST", "/number/buy", data={"country": "US", "msisdn": APP_NUMBER, "trunk_id": r.json()["id"]}).status_code == 200
    assert api(server, "POST", "/number/update", data={"country": "US", "msisdn": APP_NUMBER, "app_id": app_id}).status_code == 200
    started = time.monotonic()
    p = sipp(["-sf", str(SIPP_SCENARIOS / "uac-dtls-echo.xml"), f"127.0.0.1:{sip_port}", "-i", "127.0.0.1",
              "-p", FreePort(), "-mp", FreePort(), "-rtp_echo", "-m", "1", "-s", APP_NUMBER], timeout=30)
    took = time.monotonic() - started
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:] + server.log()[-2000:]
    assert took < 8, f"hung up after {took:.1f} s: the NCCO's time-out, not the handshake"
    wait_until(lambda: hooks.legs() and "failed" in hooks.statuses(hooks.legs()[0]), timeout=10, what=lambda: f"failed: {hooks.events}")
    failed = [e for e in hooks.events if e.get("status") == "failed"][0]
    assert "DTLS-SRTP handshake failed" in failed.get("reason", ""), failed
    # Counted when the leg's line closes, on its media loop: a moment after the event may be.
    wait_until(lambda: metric(server, "switchboard_phone_dtls_failures_total") >= 1, timeout=10,
               what=lambda: f"the failure counted: {metric(server, 'switchboard_phone_dtls_failures_total')}")


@pytest.mark.parametrize("initiator", ["app", "phone"])
def test_a_call_held_and_resumed_by_the_phone_keeps_its_dtls_keys(sip_server, tmp_path, initiator):
    """The phone puts the call on hold and takes it back (two re-INVITEs, same certificate): the call keeps the keys
    of its first handshakes — no new handshake, nothing fails to authenticate — and after the resume each side hears
    the other again. Both on a call the server placed and on one it received."""
    server, sip_port = sip_server
    phone = dtls_phone(tmp_path, "carrier", tone=660)
    try:
        keyed = lambda: phone.log().count("verified sha-256 fingerprint OK") == 2
        assert_heard_after_hold_and_resume(server, dtls_trunk(server, phone), phone, f"sip:{APP_NUMBER}@127.0.0.1:{sip_port}", initiator,
                                           number=APP_NUMBER, phone_number=CARRIER_PHONE, keyed=keyed)
        assert keyed(), "no new handshake"
        assert metric(server, "switchboard_phone_dtls_failures_total") == 0
        assert metric(server, "switchboard_phone_srtp_failures_total") <= 1
    finally:
        phone.stop()
