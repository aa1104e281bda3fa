"""SRTP with SDES keys (RFC 4568) on SIP calls, against baresip's srtp module with `mediaenc=srtp-mand` (it sends
and accepts nothing but SRTP): a trunk with `media_encryption: srtp` over TLS carries an app-to-phone call and a
phone-to-app call, each heard both ways (the phone's tone in the call's recording, the webhook's tone at the phone);
a plain phone on that trunk is refused both ways; the Video API's `dial` with `secure: true` brings an SRTP desk
phone into a session (test_video_sip_dial.py checks that `secure` over a clear-text transport is refused). Bad
trunk settings are refused before any call."""

from __future__ import annotations

import asyncio
import io
import json
import re
import time

import numpy as np
import pytest
import requests

from accounts_support import bearer, token
from media_support import dominant_frequency, loopback_ice, wav_samples
from phone_support import tone_wav
from rig import wait_until
from sip_support import Baresip, api, metric
from test_sip_tls import _listening, app_request, call_status, carrier_certificate, start_tls_server
from voice_support import Hooks, application

APP_NUMBER = "15550188"
CARRIER_PHONE = "15550199"


def srtp_phone(tmp_path, name, bundle, ca, tone, mediaenc="srtp-mand", user=CARRIER_PHONE):
    """baresip as a carrier's phone: SIP over TLS on its SIP port + 1 with the carrier's certificate, trusting the
    server's development CA, and (unless `mediaenc` is None) SRTP only."""
    account = f"<sip:{user}@127.0.0.1>;regint=0;answermode=auto" + (f";mediaenc={mediaenc}" if mediaenc else "")
    phone = Baresip(account, tmp_path / name, tone=tone,
                    extra_config=f"sip_certificate {bundle}\nsip_cafile {ca}\nmodule srtp.so\n")
    wait_until(lambda: _listening(phone.sip_port + 1), timeout=10, what=lambda: f"baresip TLS listener:\n{phone.log()}")
    return phone


@pytest.fixture
def tls_server(tmp_path):
    ca_file, bundle = carrier_certificate(tmp_path)
    server, sip_port, tls_port, ca = start_tls_server(tmp_path, ["--sip-tls-ca", str(ca_file)])
    yield server, tls_port, ca, bundle
    server.stop()


def srtp_trunk(server, phone, **fields):
    r = api(server, "POST", "/v1/sip/trunks", json={"name": "srtp-carrier", "host": "127.0.0.1", "port": phone.sip_port + 1,
                                                     "transport": "tls", "allow": ["127.0.0.0/8"], "health_interval": 0,
                                                     "media_encryption": "srtp", **fields})
    assert r.status_code == 201, r.text
    return r.json()


def recorded(hooks, app_id, key, after=0):
    """The samples and rate of the `after`-th recording the application was told about."""
    wait_until(lambda: len([e for e in hooks.events if "recording_url" in e]) > after, timeout=20,
               what=lambda: f"record event: {hooks.events}")
    record = [e for e in hooks.events if "recording_url" in e][after]
    r = requests.get(record["recording_url"], headers={"Authorization": bearer(token(app_id, key))}, timeout=10)
    assert r.status_code == 200 and r.content[:4] == b"RIFF", r.status_code
    return wav_samples(io.BytesIO(r.content))


def has_tone(samples, rate, frequency):
    """Whether `frequency` stands out in `samples` (within a tenth of the strongest component's magnitude)."""
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    bins = np.fft.rfftfreq(len(samples), 1 / rate)
    near = spectrum[(bins > frequency - 10) & (bins < frequency + 10)]
    return near.max() > 0.1 * spectrum[5:].max()


def assert_heard(samples, rate, frequency, what):
    assert len(samples) > rate * 2, f"{what}: {len(samples) / rate:.1f} s"
    tail = samples[-rate * 2:]
    assert np.sqrt(np.mean(tail ** 2)) > 300, f"{what}: silence"
    heard = dominant_frequency(tail, rate)
    assert abs(heard - frequency) < 15, f"{what}: {heard:.0f} Hz, not {frequency}"


def test_srtp_trunk_carries_calls_both_ways_heard_both_ways(tls_server, tmp_path):
    server, tls_port, ca, bundle = tls_server
    phone = srtp_phone(tmp_path, "carrier", bundle, ca, tone=660)
    try:
        trunk = srtp_trunk(server, phone)
        assert trunk["media_encryption"] == "srtp" and trunk["transport"] == "tls"
        assert api(server, "GET", f"/v1/sip/trunks/{trunk['id']}").json()["media_encryption"] == "srtp"
        # App to phone: the INVITE offers RTP/SAVP with keys over TLS; baresip (SRTP only) answers. Phone to app over
        # the same trunk: baresip offers RTP/SAVP; the answer carries our key.
        assert_calls_heard_both_ways(server, trunk, phone, f"sip:{APP_NUMBER}@127.0.0.1:{tls_port};transport=tls")
        assert metric(server, "switchboard_sip_tls_handshake_failures_total", reason="failed") == 0
        # The phone's packets authenticated: each call's RTP was counted, and what failed is the one RTCP APP packet
        # baresip sends in the clear at the start of the call it places (16 bytes: no SRTCP index or tag).
        assert metric(server, "switchboard_phone_rtp_arrived_total") > 300
        assert metric(server, "switchboard_phone_srtp_failures_total") <= 2
        assert metric(server, "switchboard_phone_srtp_legs_total") == 2
    finally:
        phone.stop()


def recording_application(server, trunk, number, seconds):
    """An application answering at `number` (on `trunk`) and the NCCO its calls run: record what the far end says
    while it hears a 440 Hz stream of `seconds`, then hang up."""
    hooks = Hooks()
    hooks.files["/tone.wav"] = tone_wav(440, seconds=seconds, rate=16000).read_bytes()
    app_id, key = application(server, hooks)
    assert api(server, "POST", "/number/buy", data={"country": "US", "msisdn": number, "trunk_id": trunk["id"]}).status_code == 200
    assert api(server, "POST", "/number/update", data={"country": "US", "msisdn": number, "app_id": app_id}).status_code == 200
    ncco = [{"action": "record", "format": "wav", "eventUrl": [hooks.url + "/event/record"]},
            {"action": "stream", "streamUrl": [hooks.url + "/tone.wav"]}]
    return hooks, app_id, key, ncco


def assert_calls_heard_both_ways(server, trunk, phone, dial_uri, number=APP_NUMBER, phone_number=CARRIER_PHONE):
    """A call from an application to the phone on `trunk`, then one from the phone to the application's number (at
    `dial_uri`): in each the call's recording holds the phone's 660 Hz and the phone hears the application's 440 Hz."""
    hooks, app_id, key, ncco = recording_application(server, trunk, number, seconds=4)

    r = app_request(server, app_id, key, "POST", "/v1/calls", json={
        "to": [{"type": "phone", "number": phone_number}], "from": {"type": "phone", "number": number}, "ncco": ncco})
    assert r.status_code == 201, r.text
    uuid = r.json()["uuid"]
    wait_until(lambda: call_status(server, app_id, key, uuid) == "completed", timeout=30,
               what=lambda: f"the call to play out ({call_status(server, app_id, key, uuid)}); baresip:\n{phone.log()[-2000:]}\n"
                            f"server:\n{server.log()[-3000:]}")
    # The recording is the call's conversation: the stream's 440 Hz and what the phone says.
    samples, rate = recorded(hooks, app_id, key)
    assert len(samples) > rate * 2 and has_tone(samples[-rate * 2:], rate, 660), "the recording lacks the phone's 660 Hz"
    played, prate = phone.played()
    assert_heard(played[:-prate // 2], prate, 440, "the phone")

    hooks.ncco = lambda req: ncco
    phone.command(f"/dial {dial_uri}")
    samples, rate = recorded(hooks, app_id, key, after=1)
    assert len(samples) > rate * 2 and has_tone(samples[-rate * 2:], rate, 660), "the recording lacks the calling phone's 660 Hz"
    wait_until(lambda: len(hooks.legs()) == 2 and "completed" in hooks.statuses(hooks.legs()[1]), timeout=20,
               what=lambda: f"the inbound call completed: {hooks.events}")
    wait_until(lambda: len(list(phone.dir.glob("dump-*-dec.wav"))) == 2, timeout=10, what="baresip's recording of the second call")
    played, prate = phone.played()
    assert_heard(played[:-prate // 2], prate, 440, "the calling phone")


def assert_heard_after_hold_and_resume(server, trunk, phone, dial_uri, initiator, number=APP_NUMBER, phone_number=CARRIER_PHONE,
                                       keyed=lambda: True):
    """A call between an application and the phone on `trunk` — placed by the application (`initiator` "app") or by the
    phone (at `dial_uri`) — that the phone holds and resumes (two re-INVITEs) once `keyed()` says its media is keyed:
    after the resume, the phone's 660 Hz is in the call's recording and the phone says it receives audio (its status
    line, `audio=<sent>/<received> (bit/s)`; its decoded-audio dump ends at the hold)."""
    hooks, app_id, key, ncco = recording_application(server, trunk, number, seconds=9)
    if initiator == "app":
        r = app_request(server, app_id, key, "POST", "/v1/calls", json={
            "to": [{"type": "phone", "number": phone_number}], "from": {"type": "phone", "number": number}, "ncco": ncco})
        assert r.status_code == 201, r.text
    else:
        hooks.ncco = lambda req: ncco
        phone.command(f"/dial {dial_uri}")
    wait_until(lambda: hooks.legs() and "answered" in hooks.statuses(hooks.legs()[0]), timeout=15,
               what=lambda: f"answered: {hooks.events}\n{phone.log()[-2000:]}")
    uuid = hooks.legs()[0]
    wait_until(keyed, timeout=10, what=lambda: phone.log()[-2000:])
    time.sleep(1.5)
    phone.command("/hold")
    time.sleep(1)
    phone.command("/resume")
    wait_until(lambda: call_status(server, app_id, key, uuid) == "completed", timeout=30,
               what=lambda: f"the call to play out; baresip:\n{phone.log()[-3000:]}\nserver:\n{server.log()[-3000:]}")
    # After the resume: the last 2 s of the stream's 9.
    samples, rate = recorded(hooks, app_id, key)
    assert len(samples) > rate * 6 and has_tone(samples[-rate * 2:], rate, 660), "the recording lacks the phone's 660 Hz after the resume"
    after = phone.log().replace("\r", "\n").split("call: resume")[-1]
    received = [int(m) for m in re.findall(r"audio=\d+/(\d+) \(bit/s\)", after)]
    assert received and max(received) >= 60000, f"the phone received nothing after the resume: {received}"


@pytest.mark.parametrize("initiator", ["app", "phone"])
def test_a_call_held_and_resumed_by_the_phone_stays_srtp(tls_server, tmp_path, initiator):
    """SDES keys across the phone's hold and resume, on a call the server placed and on one it received."""
    server, tls_port, ca, bundle = tls_server
    phone = srtp_phone(tmp_path, "carrier", bundle, ca, tone=660)
    failed_before = metric(server, "switchboard_phone_srtp_failures_total")
    try:
        assert_heard_after_hold_and_resume(server, srtp_trunk(server, phone), phone, f"sip:{APP_NUMBER}@127.0.0.1:{tls_port};transport=tls",
                                           initiator)
        # Keys kept across the hold: at most the few packets in flight while the re-INVITEs crossed fail (a loaded
        # machine saw two); lost keys would fail every packet after the resume, about 50 a second.
        assert metric(server, "switchboard_phone_srtp_failures_total") - failed_before <= 3
    finally:
        phone.stop()


def test_a_device_registered_over_tls_is_offered_keys_and_keys_its_media(tls_server, tmp_path):
    """A call to a device that registered over TLS offers SDES keys best effort (RTP/AVP with keys): baresip with
    `mediaenc=srtp` keys its answer, and the call is SRTP, heard both ways. (test_sip_tls.py calls a device that
    does not do SDES over TLS: it ignores the keys and the call stays plain RTP.)"""
    server, tls_port, ca, _ = tls_server
    hooks = Hooks()
    hooks.files["/tone.wav"] = tone_wav(440, seconds=4, rate=16000).read_bytes()
    app_id, key = application(server, hooks)
    assert app_request(server, app_id, key, "POST", "/v1/users", json={"name": "alice"}).status_code == 201
    from test_sip_edge import cli
    p = cli(server, "trunks", "device-password", "--app-id", app_id, "--user", "alice", "--password", "correct-horse")
    assert p.returncode == 0, p.stderr
    phone = Baresip(f'<sip:alice@{app_id};transport=tls>;auth_pass=correct-horse;outbound="sip:127.0.0.1:{tls_port};transport=tls";'
                    f'regint=600;answermode=auto;mediaenc=srtp', tmp_path / "device", tone=660,
                    extra_config=f"sip_cafile {ca}\nmodule srtp.so\n")
    try:
        wait_until(lambda: metric(server, "switchboard_sip_registrations") == 1, timeout=20,
                   what=lambda: f"registered over TLS:\n{phone.log()[-2000:]}")
        r = app_request(server, app_id, key, "POST", "/v1/calls", json={
            "to": [{"type": "sip", "uri": f"sip:alice@{app_id}"}], "from": {"type": "phone", "number": "14155550100"},
            "ncco": [{"action": "record", "format": "wav", "eventUrl": [hooks.url + "/event/record"]},
                     {"action": "stream", "streamUrl": [hooks.url + "/tone.wav"]}]})
        assert r.status_code == 201, r.text
        uuid = r.json()["uuid"]
        wait_until(lambda: call_status(server, app_id, key, uuid) == "completed", timeout=30,
                   what=lambda: f"the call to play out ({call_status(server, app_id, key, uuid)}); baresip:\n{phone.log()[-2000:]}")
        samples, rate = recorded(hooks, app_id, key)
        assert len(samples) > rate * 2 and has_tone(samples[-rate * 2:], rate, 660), "the recording lacks the device's 660 Hz"
        played, prate = phone.played()
        assert_heard(played[:-prate // 2], prate, 440, "the device")
        assert metric(server, "switchboard_phone_srtp_legs_total") == 1
        assert metric(server, "switchboard_phone_srtp_failures_total") <= 2
    finally:
        phone.stop()


def test_srtp_trunk_refuses_plain_media_both_ways(tls_server, tmp_path):
    server, tls_port, ca, bundle = tls_server
    plain = srtp_phone(tmp_path, "plain", bundle, ca, tone=660, mediaenc=None)
    try:
        assert_plain_refused(server, srtp_trunk(server, plain), plain, f"sip:{APP_NUMBER}@127.0.0.1:{tls_port};transport=tls")
    finally:
        plain.stop()


def assert_plain_refused(server, trunk, plain, dial_uri, number=APP_NUMBER, phone_number=CARRIER_PHONE):
    """On a trunk that requires encrypted media, a plain phone's call to the application's number (at `dial_uri`)
    is refused with 488 before the application is asked, and a call out to the phone fails without ever being
    answered: no audio in the clear either way."""
    hooks = Hooks()
    hooks.ncco = lambda req: [{"action": "talk", "text": "never heard"}]
    app_id, key = application(server, hooks)
    assert api(server, "POST", "/number/buy", data={"country": "US", "msisdn": number, "trunk_id": trunk["id"]}).status_code == 200
    assert api(server, "POST", "/number/update", data={"country": "US", "msisdn": number, "app_id": app_id}).status_code == 200

    plain.command(f"/dial {dial_uri}")
    wait_until(lambda: metric(server, "switchboard_sip_responses_total", direction="out", method="INVITE", code="488"), timeout=15,
               what=lambda: f"488 to the plain offer; baresip:\n{plain.log()[-2000:]}\nserver:\n{server.log()[-2000:]}")
    assert not hooks.answers

    r = app_request(server, app_id, key, "POST", "/v1/calls", json={
        "to": [{"type": "phone", "number": phone_number}], "from": {"type": "phone", "number": number},
        "ncco": [{"action": "talk", "text": "never heard"}]})
    assert r.status_code == 201, r.text
    uuid = r.json()["uuid"]
    wait_until(lambda: call_status(server, app_id, key, uuid) in ("failed", "rejected", "unanswered", "completed"), timeout=20,
               what=lambda: f"the call ended ({call_status(server, app_id, key, uuid)}); baresip:\n{plain.log()[-2000:]}")
    assert "answered" not in hooks.statuses(uuid), hooks.events


def test_trunk_media_encryption_settings_are_checked(tls_server):
    server, _, _, _ = tls_server
    base = {"name": "t", "host": "127.0.0.1", "health_interval": 0}
    for fields, message in [({"transport": "udp", "media_encryption": "srtp"}, "needs transport tls"),
                            ({"transport": "tcp", "media_encryption": "srtp"}, "needs transport tls"),
                            ({"transport": "udp", "media_encryption": "optional"}, "needs transport tls"),
                            ({"transport": "tls", "media_encryption": "zrtp"}, "none, optional, srtp or dtls-srtp"),
                            ({"transport": "tls", "media_encryption": True}, "must be a string")]:
        r = api(server, "POST", "/v1/sip/trunks", json={**base, **fields})
        assert r.status_code == 400 and message in r.text, (fields, r.status_code, r.text)
    r = api(server, "POST", "/v1/sip/trunks", json={**base, "transport": "udp"})
    assert r.status_code == 201 and r.json()["media_encryption"] == "none", r.text
    trunk = r.json()["id"]
    r = api(server, "PATCH", f"/v1/sip/trunks/{trunk}", json={"media_encryption": "srtp"})
    assert r.status_code == 400 and "needs transport tls" in r.text, r.text
    r = api(server, "PATCH", f"/v1/sip/trunks/{trunk}", json={"media_encryption": "srtp", "transport": "tls"})
    assert r.status_code == 200 and r.json()["media_encryption"] == "srtp", r.text
    # The CLI sets it, shows it, and passes the server's refusal on.
    from test_sip_edge import cli
    p = cli(server, "trunks", "create", "--host", "127.0.0.2", "--name", "cli-srtp", "--transport", "tls", "--media-encryption", "srtp")
    assert p.returncode == 0, p.stderr
    p = cli(server, "trunks", "show", "--trunk", "cli-srtp", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["media_encryption"] == "srtp", p.stdout + p.stderr
    p = cli(server, "trunks", "create", "--host", "127.0.0.3", "--name", "cli-udp", "--media-encryption", "srtp")
    assert p.returncode != 0 and "needs transport tls" in p.stderr, p.stderr
    # DTLS-SRTP's keys never travel in SIP: any transport.
    p = cli(server, "trunks", "create", "--host", "127.0.0.4", "--name", "cli-dtls", "--media-encryption", "dtls-srtp")
    assert p.returncode == 0, p.stderr
    p = cli(server, "trunks", "show", "--trunk", "cli-dtls", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["media_encryption"] == "dtls-srtp" and json.loads(p.stdout)["transport"] == "udp", p.stdout


def test_video_dial_secure_brings_an_srtp_desk_phone_into_the_session(tmp_path):
    loopback_ice()
    ca_file, bundle = carrier_certificate(tmp_path)
    server, _, _, ca = start_tls_server(tmp_path, ["--sip-tls-ca", str(ca_file), "--log-level", "warn"])
    try:
        asyncio.run(_secure_desk(server, tmp_path, bundle, ca))
    finally:
        server.stop()


async def _secure_desk(server, tmp_path, bundle, ca):
    from test_video_audio_connector import caller_session, hear, tone_level
    desk = srtp_phone(tmp_path, "desk", bundle, ca, tone=660, user="desk")
    try:
        async with caller_session(server) as (ot, sid, watcher, pcs):
            tls_uri = f"sip:desk@127.0.0.1:{desk.sip_port + 1};transport=tls"
            call = await asyncio.to_thread(ot.dial, sid, ot.generate_token(sid, data="name=desk"), tls_uri, {"secure": True})
            # The session hears the desk phone's 660 Hz through SRTP, and the phone hears the session's 440 Hz.
            stream, track, heard, rate = await hear(watcher, call.connectionId, pcs)
            assert np.abs(heard).max() > 2000 and tone_level(heard, rate, 660) == 0, "the session does not hear the desk phone"
            await asyncio.sleep(2.5)
            await asyncio.to_thread(ot.force_disconnect, sid, call.connectionId)
            played, prate = await asyncio.to_thread(desk.played)
            assert_heard(played[:-prate // 2], prate, 440, "the desk phone")
    finally:
        desk.stop()
