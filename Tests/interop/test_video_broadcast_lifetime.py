"""How long a broadcast lives, and what of it is kept: it stops at its `maxDuration`, and a minute after its session's
last client left unless one came back; a broadcast is acknowledged only once its metadata is written (with the
broadcasts directory unwritable the start is 503, and a manual broadcast's stream change is 503 and undone); one still
running when the server stops is listed as stopped after the restart, and its HLS files are gone; one whose HLS files
can no longer be written stops by itself. An RTMPS server's certificate is checked: one that chains to `--rtmps-ca`
takes the stream, the same without it (not in the system store) is refused."""
from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from rig import start_server, wait_until
from video_support import VideoPeer, opentok_client

opentok = pytest.importorskip("opentok")

RTMP_NOWHERE = {"serverUrl": "rtmp://127.0.0.1:9/live", "streamName": "x"}  # nothing listens: the output is offline


@contextlib.contextmanager
def publishing_session(data=None, settings=()):
    """A server of its own (over `data` when given), a routed session and a client in it publishing a stream without
    media (so the session has a publisher); yields (server, opentok client, session id, client, stream id)."""
    server = start_server(["--media-port", "0", "--log-level", "warn", *settings], https=False, dev=True, data_dir=data)
    try:
        ot = opentok_client(server)
        sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
        peer = VideoPeer(server, sid, ot.generate_token(sid))
        yield server, ot, sid, peer, peer.publish("cam")
        peer.close()
    finally:
        server.stop()


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
    with publishing_session(data) as (server, ot, sid, peer, stream):
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
    with publishing_session(data) as (server, ot, sid, peer, _):
        broadcast = ot.start_broadcast(sid, {"outputs": {"hls": {}}, "hasVideo": False})
        wait_until(lambda: requests.get(broadcast.broadcastUrls["hls"], timeout=5).status_code == 200, timeout=15, what="the playlist")
        hls = data / "video" / "broadcasts" / broadcast.id
        shutil.rmtree(hls)
        hls.write_text("not a directory")  # the next segment cannot be written
        wait_until(lambda: ot.get_broadcast(broadcast.id).status == "stopped", timeout=15, what="the broadcast to stop")


class TLSFront:
    """`tls_front.py` in a process of its own: an RTMPS server's TLS in front of `target`'s RTMP, counting the
    handshakes that completed."""

    def __init__(self, cert, key, target):
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("tls_front.py")), str(cert), str(key), str(target)],
                                        stdout=subprocess.PIPE, text=True)
        first = self.process.stdout.readline().split()
        assert first[:1] == ["port"], f"tls_front.py did not start: {first}"
        self.port = int(first[1])
        self.handshakes = 0
        threading.Thread(target=self._count, daemon=True).start()

    def _count(self):
        for line in self.process.stdout:
            if line.strip() == "handshake":
                self.handshakes += 1

    def close(self):
        self.process.kill()
        self.process.wait(5)


def make_ca_and_certificate(directory):
    """A CA, and a certificate it signed for 127.0.0.1 (PEM files: ca.pem, cert.pem, key.pem)."""
    def run(*args):
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Test RTMPS CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out", "cert.csr", "-subj", "/CN=127.0.0.1")
    (directory / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", "cert.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial", "-out", "cert.pem", "-days", "2",
        "-extfile", "ext.cnf")
    return directory / "ca.pem", directory / "cert.pem", directory / "key.pem"


def test_an_rtmps_server_must_have_a_certificate_the_server_trusts(tmp_path):
    from rig import free_port
    from test_video_broadcast import RTMPPeer
    ca, cert, key = make_ca_and_certificate(tmp_path)
    for trusted in (True, False):
        rtmp_port = free_port()
        front = TLSFront(cert, key, rtmp_port)
        peer = RTMPPeer(rtmp_port)
        try:
            with publishing_session(settings=["--rtmps-ca", str(ca)] if trusted else []) as (server, ot, sid, _, _):
                broadcast = ot.start_broadcast(sid, {"outputs": {"rtmp": [{"serverUrl": f"rtmps://127.0.0.1:{front.port}/live", "streamName": "room"}]}})

                def status():
                    return ot.get_broadcast(broadcast.id).broadcastUrls["rtmp"][0]["status"]

                if trusted:
                    wait_until(lambda: status() == "live" and len(peer.sizes) >= 5, timeout=15, what=lambda: (status(), len(peer.sizes)))
                    assert front.handshakes >= 1 and set(peer.sizes) == {(640, 480)}
                else:
                    # libavformat checks the certificate once the TLS handshake is done, and hangs up: the output goes
                    # offline, and is tried again every 2 s without ever sending.
                    wait_until(lambda: front.handshakes >= 1 and status() == "offline", timeout=15, what=lambda: (status(), front.handshakes))
                    seen = set()
                    for _ in range(12):
                        seen.add(status())
                        time.sleep(0.25)
                    assert "live" not in seen and not peer.sizes, "nothing sent to a server whose certificate is not trusted"
                ot.stop_broadcast(broadcast.id)
        finally:
            front.close()
            peer.close()
