"""NCCO `connect` and `POST /v1/calls` to a SIP URI that is not a device of this server: the server dials the
URI's own host (a name it resolves, or a numeric address) on the URI's port and transport, with the
endpoint's `headers` as `X-` headers, and no trunk configured at all. baresip at a named host answers and each
side hears the other's tone; over TLS (`sips:`) its certificate must name the host the URI names; SIPp checks the
headers; bad URIs and headers are refused before any call."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
import requests

from accounts_support import bearer, token
from media_support import dominant_frequency, wav_samples
from rig import wait_until
from sip_support import Baresip, SippPBX, metric, start_sip_server
from voice_support import Hooks, application, client_call, user_jwt

UUI = "56a390f3d2b7310023a2;encoding=hex"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a private /etc/hosts needs root (a mount namespace)")


@pytest.fixture
def sip_server():
    # A 2 s RTP timeout: calls whose far end sends media (baresip) must outlast it, one that sends none must not.
    server, port = start_sip_server(["--rtp-timeout", "2"], hosts={"pbx.switchboard.test": ["127.0.0.1"]})
    yield server, port
    server.stop()


def test_connect_to_a_sip_uri_at_a_named_host_talks_both_ways(sip_server, tmp_path):
    server, _ = sip_server
    hooks = Hooks()
    app_id, key = application(server, hooks)
    pbx = Baresip("<sip:desk@127.0.0.1>;regint=0;answermode=auto", tmp_path, tone=660)
    try:
        uri = f"sip:desk@pbx.switchboard.test:{pbx.sip_port}"
        hooks.ncco = lambda req: [{"action": "connect", "endpoint": [{"type": "sip", "uri": uri}]}]
        out = tmp_path / "heard.wav"
        events = client_call(server, "desk", "alice", user_jwt(server, app_id, key, "alice"), "--play", "tone:440",
                             "--record", str(out), seconds=6, timeout=40)
        assert any(e.get("event") == "media" for e in events), events
        legs = hooks.legs()
        assert len(legs) == 2 and hooks.statuses(legs[1])[:3] == ["started", "ringing", "answered"], hooks.events
        # The app user hears the desk phone's 660 Hz, and the desk phone heard the user's 440 Hz.
        data, rate = wav_samples(out)
        tail = data[-rate * 2:]
        assert np.sqrt(np.mean(tail ** 2)) > 100 and abs(dominant_frequency(tail, rate) - 660) < 15
        wait_until(lambda: "completed" in hooks.statuses(legs[1]), timeout=10, what=lambda: f"completed: {hooks.events}")
        to = [e for e in hooks.events if e.get("uuid") == legs[1]][0]["to"]
        assert to == uri, hooks.events
        wait_until(lambda: list(pbx.dir.glob("dump-*-dec.wav")), timeout=10, what="the desk phone's recording")
        played, prate = pbx.played()
        assert abs(dominant_frequency(played[-int(prate * 2.5):-int(prate * 0.5)], prate) - 440) < 15
    finally:
        pbx.stop()


def test_sips_uri_checks_the_certificate_against_the_name(tmp_path):
    from test_sip_tls import _listening, carrier_certificate
    ca_file, bundle = carrier_certificate(tmp_path, dns_name="pbx.switchboard.test")
    server, _ = start_sip_server(["--sip-tls-ca", str(ca_file)], hosts={"pbx.switchboard.test": ["127.0.0.1"]})
    hooks = Hooks()
    pbx = None
    try:
        app_id, key = application(server, hooks)
        pbx = Baresip("<sip:desk@127.0.0.1>;regint=0;answermode=auto", tmp_path / "pbx", tone=660,
                      extra_config=f"sip_certificate {bundle}\n")
        tls_port = pbx.sip_port + 1
        wait_until(lambda: _listening(tls_port), timeout=10, what=lambda: f"baresip TLS listener:\n{pbx.log()}")
        sender = {"from": {"type": "phone", "number": "14155550100"}, "ncco": [{"action": "talk", "text": "one two three"}],
                  "event_url": [hooks.url + "/event"]}
        # By its address, which the certificate does not hold: no handshake, no call.
        r = calls(server, app_id, key, {**sender, "to": [{"type": "sip", "uri": f"sip:desk@127.0.0.1:{tls_port};transport=tls"}]})
        assert r.status_code == 201, r.text
        numeric = r.json()["uuid"]
        wait_until(lambda: {"failed", "unanswered"} & set(hooks.statuses(numeric)), timeout=20, what=lambda: f"failed: {hooks.events}")
        assert "answered" not in hooks.statuses(numeric)
        assert metric(server, "switchboard_sip_tls_handshake_failures_total", reason="failed") == 1
        assert "incoming call" not in pbx.log().lower()
        # By its name, which the certificate holds: answered over TLS.
        r = calls(server, app_id, key, {**sender, "to": [{"type": "sip", "uri": f"sips:desk@pbx.switchboard.test:{tls_port}"}]})
        assert r.status_code == 201, r.text
        named = r.json()["uuid"]
        wait_until(lambda: "answered" in hooks.statuses(named), timeout=20,
                   what=lambda: f"answered over TLS: {hooks.events}\nbaresip:\n{pbx.log()[-2000:]}\nserver:\n{server.log()[-2000:]}")
        wait_until(lambda: "completed" in hooks.statuses(named), timeout=20, what=lambda: f"completed: {hooks.events}")
    finally:
        if pbx:
            pbx.stop()
        server.stop()


def calls(server, app_id, key, body):
    return requests.post(server.http_url + "/v1/calls", headers={"Authorization": bearer(token(app_id, key))}, json=body, timeout=10)


def test_voice_api_calls_a_sip_uri_with_x_headers_and_refuses_bad_ones(sip_server, tmp_path):
    server, _ = sip_server
    hooks = Hooks()
    app_id, key = application(server, hooks)
    with SippPBX("uas-x-headers.xml") as pbx:
        port = pbx.port
        sender = {"from": {"type": "phone", "number": "14155550100"}, "ncco": [{"action": "talk", "text": "one two"}],
                  "event_url": [hooks.url + "/event"]}
        r = calls(server, app_id, key, {**sender, "to": [{"type": "sip", "uri": f"sip:pbx@127.0.0.1:{port}",
                                                           "headers": {"Account": 42, "Note": "blue sky"},
                                                           "standardHeaders": {"User-to-User": UUI}}]})
        assert r.status_code == 201, r.text
        uuid = r.json()["uuid"]
        wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=20, what=lambda: f"completed: {hooks.events}\n{server.log()[-2000:]}")
        assert hooks.statuses(uuid) == ["started", "ringing", "answered", "completed"], hooks.events
        pbx.finish()

        # Refused before any call: a transport SIP has not, a header name that is not a token, a header on two lines.
        for endpoint, field in [({"uri": f"sip:pbx@127.0.0.1:{port};transport=sctp"}, "uri"),
                                ({"uri": "sip:@"}, "uri"),
                                ({"uri": f"sip:pbx@127.0.0.1:{port}", "headers": {"Bad Name": "x"}}, "headers.Bad Name"),
                                ({"uri": f"sip:pbx@127.0.0.1:{port}", "headers": {"Note": "a\r\nVia: x"}}, "headers.Note"),
                                ({"uri": f"sip:pbx@127.0.0.1:{port}", "standardHeaders": {"Diversion": "x"}}, "standardHeaders.Diversion")]:
            r = calls(server, app_id, key, {**sender, "to": [{"type": "sip", **endpoint}]})
            assert r.status_code == 400 and field in r.json()["detail"], (endpoint, r.text)

        # A name the server cannot resolve ends the leg failed, with the reason in its event.
        r = calls(server, app_id, key, {**sender, "to": [{"type": "sip", "uri": "sip:pbx@nowhere.switchboard.test"}]})
        assert r.status_code == 201, r.text
        gone = r.json()["uuid"]
        wait_until(lambda: "failed" in hooks.statuses(gone), timeout=10, what=lambda: f"failed: {hooks.events}")
        failed = [e for e in hooks.events if e.get("uuid") == gone and e.get("status") == "failed"][0]
        assert "cannot resolve nowhere.switchboard.test" in failed.get("reason", ""), failed


def test_a_far_end_that_sends_no_media_is_hung_up_after_the_rtp_timeout(sip_server):
    server, _ = sip_server
    hooks = Hooks()
    app_id, key = application(server, hooks)
    # SIPp answers with SDP, then sends no RTP at all (a phone gone without a BYE), and waits for our BYE.
    with SippPBX("uas-x-headers.xml") as pbx:
        port = pbx.port
        r = calls(server, app_id, key, {"from": {"type": "phone", "number": "14155550100"}, "event_url": [hooks.url + "/event"],
                                         "ncco": [{"action": "conversation", "name": "quiet"}],
                                         "to": [{"type": "sip", "uri": f"sip:pbx@127.0.0.1:{port}",
                                                 "headers": {"Account": "42", "Note": "blue sky"},
                                                 "standardHeaders": {"User-to-User": UUI}}]})
        assert r.status_code == 201, r.text
        uuid = r.json()["uuid"]
        wait_until(lambda: "answered" in hooks.statuses(uuid), timeout=10, what=lambda: f"answered: {hooks.events}")
        answered = time.monotonic()
        wait_until(lambda: "completed" in hooks.statuses(uuid), timeout=10, what=lambda: f"completed: {hooks.events}")
        held = time.monotonic() - answered
        assert 1.5 < held < 6, f"hung up {held:.1f} s after the answer"
        assert "no RTP or RTCP from the far end" in server.log()
        pbx.finish()
        assert metric(server, "switchboard_phone_rtp_timeouts_total") == 1
