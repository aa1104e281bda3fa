"""`switchboard video session create` and `switchboard video token`: the tokens they print let
clients join, with the account (T1) or an application key (RS256); `switchboard video connect` starts an
Audio Connector."""
import json
import socket
import subprocess
import time
import zipfile

import pytest
import requests

from rig import server_binary
from video_support import AudioConnectorSink, VideoPeer, VideoRequestError, account, opentok_client, start_video_server


@pytest.fixture(scope="module")
def server():
    s = start_video_server()
    yield s
    s.stop()
    s.cleanup()


def cli(server, *args):
    out = subprocess.run([str(server_binary()), "video", *args, "--data-dir", str(server.data_dir)],
                         capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_account_session_and_t1_tokens(server):
    sid = cli(server, "session", "create", "--server", server.http_url)
    assert sid.startswith("1_")
    made = json.loads(cli(server, "session", "create", "--server", server.http_url, "--json"))
    assert made["session_id"].startswith("1_") and made["project_id"] == account(server)["api_key"]

    token = cli(server, "token", sid, "--role", "publisher", "--data", "name=alice", "--ttl", "1h")
    assert token.startswith("T1==")
    alice = VideoPeer(server, sid, token)
    assert alice.connect_reply["connection"]["data"] == "name=alice"
    viewer = json.loads(cli(server, "token", sid, "--role", "subscriber", "--ttl", "90s", "--json"))
    assert viewer["role"] == "subscriber"
    bob = VideoPeer(server, sid, viewer["token"])
    with pytest.raises(VideoRequestError) as e:
        bob.publish("bob")
    assert e.value.code == "notAllowedToPublish"
    alice.close()
    bob.close()


def test_application_session_and_rs256_tokens(server, tmp_path):
    acc = account(server)
    app = requests.post(server.http_url + "/v2/applications", auth=(acc["api_key"], acc["api_secret"]),
                        json={"name": "cli video"}, timeout=10).json()
    key_file = tmp_path / "app.key"
    key_file.write_text(app["keys"]["private_key"])
    creds = ["--app-id", app["id"], "--key-file", str(key_file)]
    sid = cli(server, "session", "create", "--server", server.http_url, *creds)
    token = cli(server, "token", sid, "--role", "moderator", "--data", "name=mod", *creds)
    assert token.count(".") == 2
    mod = VideoPeer(server, sid, token)
    assert mod.connect_reply["capabilities"]["forceMute"] is True
    mod.close()


def test_token_refuses_a_session_of_another_project(server):
    foreign = "1_" + "MX5vdGhlcmtleX5-MTcwMDAwMDAwMDAwMH5hYmN-UH5-"  # 1~otherkey~~1700000000000~abc~P~~
    out = subprocess.run([str(server_binary()), "video", "token", foreign, "--data-dir", str(server.data_dir)],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode != 0 and "otherkey" in out.stderr


def test_tokens_are_only_made_for_the_signers_own_sessions(server, tmp_path):
    """A session belongs to one project: the CLI and the playground will not sign for another's."""
    acc = account(server)
    app = requests.post(server.http_url + "/v2/applications", auth=(acc["api_key"], acc["api_secret"]),
                        json={"name": "cli video other"}, timeout=10).json()
    key_file = tmp_path / "app.key"
    key_file.write_text(app["keys"]["private_key"])
    creds = ["--app-id", app["id"], "--key-file", str(key_file)]
    app_sid = cli(server, "session", "create", "--server", server.http_url, *creds)
    key_sid = cli(server, "session", "create", "--server", server.http_url)

    def refused(*args):
        out = subprocess.run([str(server_binary()), "video", "token", *args, "--data-dir", str(server.data_dir)],
                             capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
        assert out.returncode != 0
        return out.stderr

    assert app["id"] in refused(app_sid)
    assert acc["api_key"] in refused(key_sid, *creds)
    r = requests.post(server.http_url + "/video/api/token", auth=(acc["api_key"], acc["api_secret"]),
                      json={"sessionId": app_sid}, timeout=10)
    assert r.status_code == 404 and r.json()["detail"] == "No such session for this account."
    r = requests.post(server.http_url + "/video/api/token", auth=(acc["api_key"], acc["api_secret"]),
                      json={"sessionId": key_sid}, timeout=10)
    assert r.status_code == 200 and r.json()["token"].startswith("T1==")


def test_connect_starts_an_audio_connector(server):
    sid = cli(server, "session", "create", "--server", server.http_url)
    watcher = VideoPeer(server, sid, cli(server, "token", sid, "--data", "name=watcher"))
    sink = AudioConnectorSink()
    connection = cli(server, "connect", sid, "--server", server.http_url, "--uri", sink.uri("/cli"), "--rate", "8000",
                     "--headers", '{"lang": "en-US"}', "--data", "name=captions")
    joined = watcher.wait_push("video:connectionCreated")["connection"]
    assert (joined["connectionId"], joined["data"]) == (connection, "name=captions")
    deadline = time.monotonic() + 5
    while len(sink.frames.get("/cli", [])) < 10 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sink.first["/cli"] == {"content-type": "audio/l16;rate=8000", "lang": "en-US"}
    assert {len(f) for f in sink.frames["/cli"]} == {320}
    opentok_client(server).force_disconnect(sid, connection)
    assert sink.closed["/cli"].wait(5)
    # Nothing listening: the command fails with the server's reason.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"ws://127.0.0.1:{s.getsockname()[1]}/"
    out = subprocess.run([str(server_binary()), "video", "connect", sid, "--server", server.http_url, "--uri", dead,
                          "--data-dir", str(server.data_dir)], capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    assert out.returncode != 0 and "HTTP 400" in out.stderr and "websocket-failed" in out.stderr, out.stderr
    watcher.close()


def test_archive_commands_record_list_download_and_delete(server, tmp_path):
    sid = cli(server, "session", "create", "--server", server.http_url)
    peer = VideoPeer(server, sid, cli(server, "token", sid, "--data", "name=host"))
    peer.publish("camera")  # a stream without media: archives record (black, silent) rather than pause
    archive = cli(server, "archive", "start", sid, "--name", "weekly", "--server", server.http_url)
    time.sleep(1.2)
    stopped = json.loads(cli(server, "archive", "stop", archive, "--server", server.http_url))
    assert (stopped["id"], stopped["status"], stopped["name"], stopped["hasVideo"]) == (archive, "available", "weekly", False)
    listed = json.loads(cli(server, "archive", "list", "--session", sid, "--server", server.http_url))
    assert listed["count"] == 1 and listed["items"][0]["id"] == archive
    out = tmp_path / "weekly.mp4"
    cli(server, "archive", "download", archive, "--out", str(out), "--server", server.http_url)
    assert out.read_bytes()[4:8] == b"ftyp" and out.stat().st_size == stopped["size"]
    cli(server, "archive", "delete", archive, "--server", server.http_url)
    assert json.loads(cli(server, "archive", "list", "--session", sid, "--server", server.http_url))["count"] == 0
    # An unknown archive id is the server's 404, with its reason.
    failed = subprocess.run([str(server_binary()), "video", "archive", "get", "nope", "--server", server.http_url,
                             "--data-dir", str(server.data_dir)], capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    assert failed.returncode != 0 and "HTTP 404" in failed.stderr, failed.stderr
    # --individual: each stream in a file of its own, in a ZIP with the manifest (no media published here: the manifest alone).
    archive = cli(server, "archive", "start", sid, "--individual", "--server", server.http_url)
    stopped = json.loads(cli(server, "archive", "stop", archive, "--server", server.http_url))
    assert (stopped["outputMode"], stopped["hasVideo"], stopped["status"]) == ("individual", True, "available")
    out = tmp_path / "each.zip"
    cli(server, "archive", "download", archive, "--out", str(out), "--server", server.http_url)
    with zipfile.ZipFile(out) as z:
        assert z.namelist() == [f"{archive}.json"]
        manifest = json.loads(z.read(f"{archive}.json"))
    assert (manifest["id"], manifest["sessionId"], manifest["files"]) == (archive, sid, [])
    # --video: the streams laid out with the mix in an MP4 file (no media published: a black picture), here at 1280 × 720.
    archive = cli(server, "archive", "start", sid, "--video", "--resolution", "1280x720", "--server", server.http_url)
    time.sleep(1.2)
    stopped = json.loads(cli(server, "archive", "stop", archive, "--server", server.http_url))
    assert (stopped["outputMode"], stopped["hasVideo"], stopped["resolution"], stopped["status"]) == ("composed", True, "1280x720", "available")
    out = tmp_path / "grid.mp4"
    cli(server, "archive", "download", archive, "--out", str(out), "--server", server.http_url)
    assert out.read_bytes()[4:8] == b"ftyp" and out.stat().st_size == stopped["size"]
    # --manual: only the streams chosen with `archive add` (here its video alone), until `archive remove`.
    stream = peer.publish("host")
    archive = cli(server, "archive", "start", sid, "--video", "--manual", "--server", server.http_url)
    assert json.loads(cli(server, "archive", "get", archive, "--server", server.http_url))["streamMode"] == "manual"
    cli(server, "archive", "add", archive, stream, "--no-audio", "--server", server.http_url)
    got = json.loads(cli(server, "archive", "get", archive, "--server", server.http_url))
    assert got["streams"] == [{"streamId": stream, "hasAudio": False, "hasVideo": True}]
    cli(server, "archive", "remove", archive, stream, "--server", server.http_url)
    assert json.loads(cli(server, "archive", "get", archive, "--server", server.http_url))["streams"] == []
    failed = subprocess.run([str(server_binary()), "video", "archive", "remove", archive, stream, "--server", server.http_url,
                             "--data-dir", str(server.data_dir)], capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    assert failed.returncode != 0 and "HTTP 404" in failed.stderr and "stream-not-found" in failed.stderr, failed.stderr
    cli(server, "archive", "stop", archive, "--server", server.http_url)
    peer.close()


def test_broadcast_commands_stream_to_hls_and_rtmp(server):
    from rig import free_port
    from test_video_broadcast import RTMPPeer
    sid = cli(server, "session", "create", "--server", server.http_url)
    peer = VideoPeer(server, sid, cli(server, "token", sid))
    port = free_port()
    rtmp = RTMPPeer(port)
    try:
        # start prints the broadcast's id and its playlist's address.
        broadcast, playlist = cli(server, "broadcast", "start", sid, "--hls", "--rtmp", f"rtmp://127.0.0.1:{port}/live/room",
                                  "--resolution", "1280x720", "--max-duration", "600", "--tag", "cli", "--server", server.http_url).splitlines()
        assert playlist == f"{server.http_url}/broadcast/{broadcast}/hls/live.m3u8"
        got = json.loads(cli(server, "broadcast", "get", broadcast, "--server", server.http_url))
        assert (got["resolution"], got["maxDuration"], got["multiBroadcastTag"]) == ("1280x720", 600, "cli")
        assert got["broadcastUrls"]["rtmp"][0]["serverUrl"] == f"rtmp://127.0.0.1:{port}/live" and got["broadcastUrls"]["rtmp"][0]["streamName"] == "room"
        deadline = time.monotonic() + 15
        while len(rtmp.sizes) < 5 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert set(rtmp.sizes) == {(1280, 720)}, "the RTMP server receives the session (nobody publishing: black)"
        listed = json.loads(cli(server, "broadcast", "list", "--session", sid, "--server", server.http_url))
        assert listed["count"] == 1 and listed["items"][0]["id"] == broadcast
        stopped = json.loads(cli(server, "broadcast", "stop", broadcast, "--server", server.http_url))
        assert stopped["status"] == "stopped"
        # --low-latency: low-latency HLS, its parts listed in the playlist.
        broadcast, playlist = cli(server, "broadcast", "start", sid, "--low-latency", "--server", server.http_url).splitlines()
        got = json.loads(cli(server, "broadcast", "get", broadcast, "--server", server.http_url))
        assert got["settings"]["hls"] == {"dvr": False, "lowLatency": True}
        deadline = time.monotonic() + 15
        while "#EXT-X-PART:" not in requests.get(playlist, timeout=5).text and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "#EXT-X-PART-INF:PART-TARGET=0.500" in requests.get(playlist, timeout=5).text
        assert json.loads(cli(server, "broadcast", "stop", broadcast, "--server", server.http_url))["status"] == "stopped"
        failed = subprocess.run([str(server_binary()), "video", "broadcast", "start", sid, "--server", server.http_url,
                                 "--data-dir", str(server.data_dir)], capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
        assert failed.returncode != 0 and "--hls" in failed.stderr, failed.stderr
    finally:
        rtmp.close()
        peer.close()
