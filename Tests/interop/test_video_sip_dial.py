"""SIP interconnect driven by the official `opentok` SDK: `dial` calls a SIP URI and the call joins a video
session as a connection with an audio-only stream. baresip answers as a desk phone: a subscriber of the call's
stream hears the phone, the phone hears the session's aiortc publisher, keys from `play_dtmf` reach it as RFC
4733, and a force disconnect or the phone hanging up ends the call and the connection. SIPp checks the digest
the server answers with `auth`; bad requests are refused before any call."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest
import requests

from media_support import collect_audio, dominant_frequency, loopback_ice
from rig import wait_until
from sip_support import Baresip, SippPBX, metric, start_sip_server
from test_video_audio_connector import caller_session, hear, tone_level, until
from video_support import account, opentok_client

opentok = pytest.importorskip("opentok")


@pytest.fixture(scope="module")
def server():
    loopback_ice()
    s, _ = start_sip_server(["--log-level", "warn"])
    yield s
    s.stop()


def sip_calls(server):
    for line in requests.get(server.http_url + "/metrics", timeout=5).text.splitlines():
        if line.startswith("switchboard_video_sip_calls "):
            return float(line.split()[1])
    return None


def test_dialled_phone_joins_the_session_both_ways(server, tmp_path):
    asyncio.run(_desk_phone(server, tmp_path))


async def _desk_phone(server, tmp_path):
    desk = Baresip("<sip:desk@127.0.0.1>;regint=0;answermode=auto", tmp_path, tone=660)
    try:
        async with caller_session(server) as (ot, sid, watcher, pcs):
            call = await asyncio.to_thread(ot.dial, sid, ot.generate_token(sid, data="name=desk"), f"sip:desk@127.0.0.1:{desk.sip_port}",
                                           {"from": "video@switchboard.test", "headers": {"X-Meeting": "m-1"}})
            assert call.id and call.connectionId and call.streamId
            created = await asyncio.to_thread(watcher.wait_push, "video:connectionCreated",
                                              where=lambda b: b["connection"]["connectionId"] == call.connectionId)
            assert created["connection"]["data"] == "name=desk"
            await until(lambda: "Call established" in desk.log() or "call established" in desk.log(), 15,
                        "the desk phone to answer")
            assert "sip:video@switchboard.test" in desk.log(), desk.log()[-1500:]
            assert sip_calls(server) == 1
            # A subscriber of the call's stream hears the desk phone's 660 Hz, not the session's 440 Hz.
            stream, track, heard, rate = await hear(watcher, call.connectionId, pcs)
            assert stream["streamId"] == call.streamId and stream["hasAudio"] and not stream["hasVideo"]
            assert np.abs(heard).max() > 2000 and tone_level(heard, rate, 660) == 0 and tone_level(heard, rate, 440) < -30
            # Keys to the phone as RFC 4733 events.
            await asyncio.to_thread(ot.play_dtmf, sid, call.connectionId, "5#")
            await until(lambda: "received event: '5'" in desk.log() and "received event: '#'" in desk.log(), 10, "DTMF at the desk phone")
            # observeForceMute is off: moderation's mute leaves the call's audio as it is.
            await asyncio.to_thread(ot.mute_stream, sid, call.streamId)
            still, rate = await collect_audio(track, 1.0)
            assert np.abs(still).max() > 2000
            # A force disconnect hangs up: the phone's call ends, the stream and connection leave the session.
            await asyncio.to_thread(ot.force_disconnect, sid, call.connectionId)
            gone = await asyncio.to_thread(watcher.wait_push, "video:streamDestroyed",
                                           where=lambda b: b["stream"]["streamId"] == call.streamId)
            assert gone["reason"] == "forceDisconnected"
            await until(lambda: "terminated" in desk.log().lower() or "closed" in desk.log().lower(), 10, "the desk phone's call to end")
            await until(lambda: sip_calls(server) == 0, 5, "the SIP calls gauge back at 0")
        # The phone heard the session's 440 Hz caller.
        played, prate = desk.played()
        assert len(played) > prate * 2
        assert abs(dominant_frequency(played[-int(prate * 2):-int(prate * 0.3)], prate) - 440) < 15
    finally:
        desk.stop()


def test_the_phone_hanging_up_ends_the_connection(server, tmp_path):
    asyncio.run(_phone_hangs_up(server, tmp_path))


async def _phone_hangs_up(server, tmp_path):
    desk = Baresip("<sip:desk@127.0.0.1>;regint=0;answermode=auto", tmp_path, tone=660)
    try:
        async with caller_session(server) as (ot, sid, watcher, pcs):
            call = await asyncio.to_thread(ot.dial, sid, ot.generate_token(sid), f"sip:desk@127.0.0.1:{desk.sip_port}",
                                           {"observeForceMute": True})
            await until(lambda: "call established" in desk.log().lower(), 15, "the desk phone to answer")
            # observeForceMute: moderation's mute reaches the call's stream.
            await asyncio.to_thread(ot.mute_stream, sid, call.streamId)
            changed = await asyncio.to_thread(watcher.wait_push, "video:streamPropertyChanged",
                                              where=lambda b: b["stream"]["streamId"] == call.streamId)
            assert (changed["property"], changed["newValue"]) == ("hasAudio", False)
            desk.command("/hangup")
            gone = await asyncio.to_thread(watcher.wait_push, "video:connectionDestroyed",
                                           where=lambda b: b["connection"]["connectionId"] == call.connectionId)
            assert gone["reason"] == "clientDisconnected"
    finally:
        desk.stop()


def test_digest_auth_and_refusals(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    with SippPBX("uas-digest.xml") as pbx:
        # The PBX challenges; the server answers with `auth` and the call is up.
        answered = lambda: metric(server, "switchboard_sip_responses_total", direction="in", method="INVITE", code="200") or 0
        before = answered()
        call = ot.dial(sid, ot.generate_token(sid), f"sip:pbx@127.0.0.1:{pbx.port}", {"auth": {"username": "trunk", "password": "s3cret"}})
        assert sip_calls(server) == 1
        wait_until(lambda: answered() > before, timeout=10, what="the PBX's 200 to the authenticated INVITE")
        ot.force_disconnect(sid, call.connectionId)
        pbx.finish()

    acc = account(server)
    url = f"{server.http_url}/v2/project/{acc['api_key']}/dial"
    headers = ot.get_json_headers()
    token = ot.generate_token(sid)

    def dial(sip, session=sid, tok=token):
        return requests.post(url, headers=headers, json={"sessionId": session, "token": tok, "sip": sip}, timeout=10)

    for sip, fragment in [({"uri": "http://pbx.example"}, "sip.uri"),
                          ({"uri": "sip:pbx@127.0.0.1;transport=sctp"}, "sip.uri"),
                          ({"uri": "sip:pbx@127.0.0.1", "headers": {"Via": "SIP/2.0/UDP evil"}}, "sip.headers"),
                          ({"uri": "sip:pbx@127.0.0.1", "headers": {"X-Note": "a\r\nVia: x"}}, "sip.headers.X-Note"),
                          ({"uri": "sip:pbx@127.0.0.1", "secure": True}, "sip.secure"),
                          ({"uri": "sip:pbx@127.0.0.1", "video": True}, "sip.video"),
                          ({"uri": "sip:pbx@127.0.0.1", "from": "a b"}, "sip.from"),
                          ({"uri": "sip:pbx@127.0.0.1", "auth": {"username": "u"}}, "sip.auth"),
                          ({"uri": "sip:pbx@127.0.0.1", "streams": ["no-such-stream"]}, "stream")]:
        r = dial(sip)
        assert r.status_code == 400 and fragment in r.json()["detail"], (sip, r.text)
    assert dial({"uri": "sip:pbx@127.0.0.1"}, tok="T1==bad").status_code == 400
    relayed = ot.create_session(media_mode=opentok.MediaModes.relayed).session_id
    assert dial({"uri": "sip:pbx@127.0.0.1"}, session=relayed, tok=ot.generate_token(relayed)).status_code == 409
    assert dial({"uri": "sip:pbx@127.0.0.1"}, session="1_nosuchsession").status_code == 404
    r = requests.post(f"{server.http_url}/v2/project/{acc['api_key']}/session/{sid}/connection/nobody/play-dtmf", headers=headers,
                      json={"digits": "1"}, timeout=10)
    assert r.status_code == 404
    r = requests.post(f"{server.http_url}/v2/project/{acc['api_key']}/session/{sid}/play-dtmf", headers=headers, json={"digits": "x"}, timeout=10)
    assert r.status_code == 400
    assert sip_calls(server) == 0



def test_cli_dials_a_desk_phone_and_sends_keys(server, tmp_path):
    from test_video_cli import cli
    from video_support import VideoPeer
    desk = Baresip("<sip:desk@127.0.0.1>;regint=0;answermode=auto", tmp_path, tone=660)
    try:
        sid = cli(server, "session", "create", "--server", server.http_url)
        watcher = VideoPeer(server, sid, cli(server, "token", sid, "--data", "name=watcher"))
        connection = cli(server, "dial", sid, "--server", server.http_url, "--sip-uri", f"sip:desk@127.0.0.1:{desk.sip_port}",
                         "--from", "support", "--sip-headers", '{"X-Ticket": "T-7"}', "--data", "name=desk")
        joined = watcher.wait_push("video:connectionCreated")["connection"]
        assert (joined["connectionId"], joined["data"]) == (connection, "name=desk")
        wait_until(lambda: "call established" in desk.log().lower(), timeout=15, what=lambda: f"answered:\n{desk.log()[-1500:]}")
        assert "support" in desk.log()
        cli(server, "dtmf", sid, "42", "--server", server.http_url)
        wait_until(lambda: "received event: '4'" in desk.log() and "received event: '2'" in desk.log(), timeout=10,
                   what=lambda: f"DTMF at the desk phone:\n{desk.log()[-1500:]}")
        opentok_client(server).force_disconnect(sid, connection)
        wait_until(lambda: "terminated" in desk.log().lower() or "closed" in desk.log().lower(), timeout=10, what="the call to end")
        watcher.close()
    finally:
        desk.stop()


def test_a_dialled_phone_s_voice_is_captioned(server, tmp_path):
    """Live captions transcribe a SIP call's stream without its publisher asking (the Video API captions SIP
    participants): a phone (baresip, Opus) saying a sentence three times is read into final captions."""
    import subprocess
    from test_video_captions import SENTENCE, captions
    from video_support import VideoPeer
    voice, once, wav = tmp_path / "voice.wav", tmp_path / "once.wav", tmp_path / "said.wav"
    subprocess.run(["espeak-ng", "-v", "en-us+f2", "-w", str(voice), SENTENCE], check=True)
    subprocess.run(["sox", str(voice), "-r", "48000", "-c", "2", "-b", "16", str(once), "pad", "0", "1.5"], check=True)
    # Three sayings, 1.5 s of silence after each, after a second of it, at 48 kHz stereo as baresip plays a file.
    subprocess.run(["sox", str(once), str(once), str(once), str(wav), "pad", "1", "0"], check=True)
    # A wideband phone (Opus): read from G.711's 8 kHz, dictation without a context is mostly wrong (docs/operations.md).
    desk = Baresip("<sip:desk@127.0.0.1>;regint=0;answermode=auto;audio_codecs=opus/48000/2", tmp_path, source=str(wav),
                   extra_config="module opus.so\n")
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    reader = VideoPeer(server, sid, ot.generate_token(sid, data="name=reader"))
    try:
        started = ot.start_captions(sid, ot.generate_token(sid, role=opentok.Roles.moderator), partial_captions=False)
        call = ot.dial(sid, ot.generate_token(sid, data="name=desk"), f"sip:desk@127.0.0.1:{desk.sip_port}")
        reader.wait_push("video:streamCreated", timeout=10, where=lambda b: b["stream"]["streamId"] == call.streamId)
        reader.request("video:subscribeToCaptions", {"streamId": call.streamId})
        got = captions(reader, 14)
        print("phone captions:", [c["caption"] for c in got])
        assert got and all(c["streamId"] == call.streamId and c["isFinal"] for c in got), got
        assert len(set(" ".join(c["caption"] for c in got).split()) & set(SENTENCE.split())) >= 3, got
        ot.stop_captions(started.captions_id)
    finally:
        reader.close()
        desk.stop()
