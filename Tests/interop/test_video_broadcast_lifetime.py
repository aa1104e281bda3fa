"""How long a broadcast lives, and what of it is kept: it stops at its `maxDuration`, and a minute after its session's
last client left unless one came back; a broadcast is acknowledged only once its metadata is written (with the
broadcasts directory unwritable the start is 503, and a manual broadcast's stream change is 503 and undone); one still
running when the server stops is listed as stopped after the restart, and its HLS files are gone; one whose HLS files
can no longer be written stops by itself."""
from __future__ import annotations

import shutil
import time

import pytest
import requests

from rig import start_server, wait_until
from video_support import VideoPeer, opentok_client

opentok = pytest.importorskip("opentok")

RTMP_NOWHERE = {"serverUrl": "rtmp://127.0.0.1:9/live", "streamName": "x"}  # nothing listens: the output is offline


def test_a_broadcast_stops_at_its_maximum_duration_and_a_minute_after_its_session_empties():
    server = start_server(["--media-port", "0", "--log-level", "warn"], https=False, dev=True)
    try:
        ot = opentok_client(server)
        base = f"{server.http_url}/v2/project/{ot.api_key}/broadcast"
        headers = ot.get_json_headers()
        sessions = [ot.create_session(media_mode=opentok.MediaModes.routed).session_id for _ in range(3)]
        peers = [VideoPeer(server, sid, ot.generate_token(sid)) for sid in sessions]

        def start(sid, **fields):
            r = requests.post(base, json={"sessionId": sid, "outputs": {"rtmp": [RTMP_NOWHERE]}, "hasVideo": False, **fields},
                              headers=headers, timeout=10)
            assert r.status_code == 200, r.text
            return r.json()["id"]

        def status(bid):
            return requests.get(f"{base}/{bid}", headers=headers, timeout=5).json()["status"]

        # The first runs at most 60 s with its client staying; the second's client leaves; the third's leaves and comes back.
        timed, emptied, returned = start(sessions[0], maxDuration=60), start(sessions[1]), start(sessions[2])
        began = time.monotonic()
        peers[1].close()
        peers[2].close()
        time.sleep(20)
        back = VideoPeer(server, sessions[2], ot.generate_token(sessions[2]))
        time.sleep(30)
        assert [status(b) for b in (timed, emptied, returned)] == ["started"] * 3, "nothing stops before its time"
        wait_until(lambda: status(timed) == "stopped" and status(emptied) == "stopped", timeout=25,
                   what=lambda: [status(b) for b in (timed, emptied)])
        assert time.monotonic() - began >= 58
        assert status(returned) == "started", "a client came back within the minute"
        assert requests.post(f"{base}/{returned}/stop", headers=headers, timeout=10).json()["status"] == "stopped"
        peers[0].close()
        back.close()
    finally:
        server.stop()


def test_a_broadcast_is_acknowledged_only_once_saved_and_is_stopped_after_a_restart(tmp_path):
    data = tmp_path / "data"
    server = start_server(["--media-port", "0", "--log-level", "warn"], https=False, dev=True, data_dir=data)
    try:
        ot = opentok_client(server)
        sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
        peer = VideoPeer(server, sid, ot.generate_token(sid))
        stream = peer.publish("cam")
        base = f"{server.http_url}/v2/project/{ot.api_key}/broadcast"
        headers = ot.get_json_headers()
        broadcasts = data / "video" / "broadcasts"
        shutil.rmtree(broadcasts)
        broadcasts.write_text("not a directory")
        body = {"sessionId": sid, "outputs": {"rtmp": [RTMP_NOWHERE]}, "hasVideo": False, "streamMode": "manual", "multiBroadcastTag": "manual"}
        r = requests.post(base, json=body, headers=headers, timeout=10)
        assert r.status_code == 503 and "saved" in r.json()["detail"], r.text
        assert requests.get(base, headers=headers, timeout=5).json()["count"] == 0
        broadcasts.unlink()
        r = requests.post(base, json=body, headers=headers, timeout=10)
        assert r.status_code == 200, r.text
        manual = r.json()["id"]
        ot.add_broadcast_stream(manual, stream)
        chosen = [{"streamId": stream, "hasAudio": True, "hasVideo": True}]
        assert (broadcasts / f"{manual}.json").exists() and ot.get_broadcast(manual).streams == chosen
        shutil.rmtree(broadcasts)
        broadcasts.write_text("not a directory")
        r = requests.patch(f"{base}/{manual}/streams", json={"removeStream": stream}, headers=headers, timeout=10)
        assert r.status_code == 503, r.text
        assert ot.get_broadcast(manual).streams == chosen, "a change that was not saved is undone"
        broadcasts.unlink()
        ot.remove_broadcast_stream(manual, stream)  # saved again (the directory had gone with its files)
        assert ot.get_broadcast(manual).streams == [] and (broadcasts / f"{manual}.json").exists()
        # Running when the server stops: an HLS broadcast with its playlist served.
        hls = ot.start_broadcast(sid, {"outputs": {"hls": {}}, "hasVideo": False, "multiBroadcastTag": "hls"})
        playlist = hls.broadcastUrls["hls"]
        wait_until(lambda: requests.get(playlist, timeout=5).status_code == 200, timeout=15, what="the playlist")
        peer.close()
    finally:
        server.stop()
    again = start_server(["--media-port", "0", "--log-level", "warn"], https=False, dev=True, data_dir=data)
    try:
        ot = opentok_client(again)
        for bid in (manual, hls.id):
            got = ot.get_broadcast(bid)
            assert got.status == "stopped", got.json()
        assert ot.get_broadcast(manual).streams == []
        assert requests.get(playlist.replace(server.http_url, again.http_url), timeout=5).status_code == 404
        assert not (data / "video" / "broadcasts" / hls.id).exists(), "its HLS files are gone"
    finally:
        again.stop()


def test_a_broadcast_whose_files_cannot_be_written_stops(tmp_path):
    data = tmp_path / "data"
    server = start_server(["--media-port", "0", "--log-level", "warn"], https=False, dev=True, data_dir=data)
    try:
        ot = opentok_client(server)
        sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
        peer = VideoPeer(server, sid, ot.generate_token(sid))
        peer.publish("cam")
        broadcast = ot.start_broadcast(sid, {"outputs": {"hls": {}}, "hasVideo": False})
        wait_until(lambda: requests.get(broadcast.broadcastUrls["hls"], timeout=5).status_code == 200, timeout=15, what="the playlist")
        hls = data / "video" / "broadcasts" / broadcast.id
        shutil.rmtree(hls)
        hls.write_text("not a directory")  # the next segment cannot be written
        wait_until(lambda: ot.get_broadcast(broadcast.id).status == "stopped", timeout=15, what="the broadcast to stop")
        peer.close()
    finally:
        server.stop()
