"""switchboard-video (the reference app server of the video chat app) against a live Switchboard in production
mode (no `--dev`: the playground's built-in session and token routes do not exist).

The app server creates sessions through the Video REST API with its application JWT and mints the clients'
tokens with the application's key. The video page opened with `?app=` takes them from it; two Chromium pages and
a Swift SDK client (`switchboard client video join`) meet in one session, each decoding the others.
"""
import os
import subprocess
import tempfile

import jwt as pyjwt
import pytest
import requests

from conv_support import binary
from rig import REPO, chromium, client, client_lines, free_port, new_page, screenshot, start_server, wait_until
from video_support import CHROMIUM_ARGS, account, decoding, wait_for_log

RECORDING = REPO / "Tests" / "Fixtures" / "media" / "vp8-320x240.ivf"
SDK_SECONDS = 20


@pytest.fixture(scope="module")
def stack():
    server = start_server(["--media-port", "0", "--log-level", "warn"])
    acc = account(server)
    r = requests.post(server.http_url + "/v2/applications", auth=(acc["api_key"], acc["api_secret"]),
                      json={"name": "video-chat", "capabilities": {"video": {}}}, timeout=10)
    assert r.status_code == 201, r.text
    app = r.json()
    work = tempfile.mkdtemp(prefix="video-app-")
    key_file = os.path.join(work, "app.key")
    with open(key_file, "w") as f:
        f.write(app["keys"]["private_key"])
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    out = os.path.join(work, "video.log")
    proc = subprocess.Popen([binary("switchboard-video", "SWITCHBOARD_VIDEO_BIN"), "--switchboard", server.http_url,
                             "--app-id", app["id"], "--key-file", key_file, "--listen", f"127.0.0.1:{port}"],
                            stdout=open(out, "wb"), stderr=subprocess.STDOUT, cwd=work)

    def up():
        assert proc.poll() is None, open(out).read()
        try:
            requests.post(base + "/session", json={"mediaMode": "nonsense"}, timeout=1)
            return True
        except requests.ConnectionError:
            return False
    wait_until(up, timeout=15, what="switchboard-video")
    yield server, app["id"], base
    proc.terminate()
    proc.wait(10)
    code = server.stop()
    log = server.log()
    server.cleanup()
    assert code == 0, log[-4000:]


def test_rooms_sessions_and_tokens_come_from_the_app_server(stack):
    server, app_id, video = stack
    # Production: the playground's development routes are not there.
    assert requests.post(server.http_url + "/video/api/session", timeout=5).status_code == 404

    first = requests.get(video + "/room/standup", timeout=10).json()
    again = requests.get(video + "/room/standup", timeout=10).json()
    other = requests.get(video + "/room/retro", timeout=10).json()
    assert first["applicationId"] == app_id and first["sessionId"].startswith("1_")
    assert again["sessionId"] == first["sessionId"] and other["sessionId"] != first["sessionId"]
    claims = pyjwt.decode(first["token"], options={"verify_signature": False})
    assert (claims["application_id"], claims["session_id"], claims["role"], claims["scope"]) == \
        (app_id, first["sessionId"], "publisher", "session.connect")
    assert claims["exp"] - claims["iat"] == 3600

    relayed = requests.post(video + "/session", json={"mediaMode": "relayed"}, timeout=10).json()
    assert relayed["mediaMode"] == "relayed" and relayed["applicationId"] == app_id
    t = requests.post(video + "/token", json={"sessionId": relayed["sessionId"], "role": "subscriber", "data": "name=eve", "ttl": 60},
                      timeout=10)
    assert t.status_code == 200, t.text
    claims = pyjwt.decode(t.json()["token"], options={"verify_signature": False})
    assert (claims["role"], claims["connection_data"], claims["exp"] - claims["iat"]) == ("subscriber", "name=eve", 60)

    # Bad input: the JSON error shape, never a token.
    for body, status in [({"sessionId": relayed["sessionId"], "role": "king"}, 400),
                         ({"sessionId": relayed["sessionId"], "ttl": 0}, 400),
                         ({"role": "publisher"}, 400),
                         ({"sessionId": "1_not-a-session-of-this-application"}, 404)]:
        r = requests.post(video + "/token", json=body, timeout=10)
        assert r.status_code == status and r.json()["title"] and "token" not in r.json(), (body, r.text)
    assert requests.post(video + "/session", json={"mediaMode": "p2p"}, timeout=10).status_code == 400
    for raw in ("[1]", "{not json"):
        r = requests.post(video + "/token", data=raw, headers={"Content-Type": "application/json"}, timeout=10)
        assert r.status_code == 400 and r.json()["title"], (raw, r.text)
    # A relayed session cannot be broadcast: Switchboard's refusal comes back as the app server's 502 with the reason.
    r = requests.post(video + "/broadcast", json={"sessionId": relayed["sessionId"]}, timeout=10)
    assert r.status_code == 502 and "routed" in r.json()["detail"], r.text


def test_two_pages_and_an_sdk_client_chat_through_the_app_server(stack):
    server, _, video = stack
    with chromium(extra_args=CHROMIUM_ARGS[3:]) as browser:
        alice, bob = new_page(browser), new_page(browser)
        # Opened without ?app= on a server in production, the page says why it cannot make a session.
        alice.goto(f"{server.http_url}/video/")
        alice.click("#create-session")
        alice.wait_for_selector("#alert:not([hidden])")
        assert "no built-in app server" in alice.inner_text("#alert-text") and "?app=" in alice.inner_text("#alert-text")
        for page in (alice, bob):
            page.goto(f"{server.http_url}/video/?app={video}")
        # Alice creates the session through the app server; bob pastes its id. Each makes a token there and joins.
        alice.click("#create-session")
        wait_until(lambda: alice.input_value("#session-id"), timeout=10, what="session created")
        sid = alice.input_value("#session-id")
        bob.fill("#session-id", sid)
        for page, name in ((alice, "alice"), (bob, "bob")):
            page.fill("#token-data", f"name={name}")
            page.click("#make-token")
            wait_until(lambda: page.input_value("#token"), timeout=10, what=f"{name}'s token")
            page.fill("#name", name)
            page.click("#join")
            wait_for_log(page, "publishing stream", timeout=15)
        # A Swift SDK client with a token from the same app server publishes a recording.
        token = requests.post(video + "/token", json={"sessionId": sid, "data": "name=sdk"}, timeout=10).json()["token"]
        sdk = client(server, "video", "join", sid, "--token", token, "--publish", str(RECORDING), "--name", "sdk",
                     seconds=SDK_SECONDS)
        try:
            # Each page decodes the other page and the SDK client.
            for page in (alice, bob):
                wait_until(decoding(page, 1), timeout=20, what="a page decodes the other")
                wait_for_log(page, "streamCreated sdk", timeout=20)
                wait_until(lambda: sum((s["video"] or {}).get("framesDecoded") or 0 > 0
                                       for s in page.evaluate("window.playground.stats()").values()) >= 2,
                           timeout=20, what="two streams decoded")
            # What a person sees: three playing tiles on each page (its own preview, the other page, the SDK client).
            for page in (alice, bob):
                wait_until(lambda: page.evaluate(
                    "[...document.querySelectorAll('.tile:not([hidden]) video')].every(v => v.videoWidth > 0 && !v.paused)"
                    " && document.querySelectorAll('.tile:not([hidden])').length === 3"), timeout=10, what="three playing tiles")
            screenshot(alice, "video-example-chat.png")
            lines = client_lines(sdk, timeout=SDK_SECONDS + 30)
        finally:
            if sdk.poll() is None:
                sdk.kill()
                sdk.wait()
        alice_stream = alice.evaluate("window.playground.state.publisher.streamId")
        bob_stream = bob.evaluate("window.playground.state.publisher.streamId")
        received = {l["received"]: l for l in lines if "received" in l}
        assert {alice_stream, bob_stream} <= received.keys(), lines
        for stream in (alice_stream, bob_stream):
            assert received[stream]["frames"] > 30, received[stream]
        # The SDK client left: both pages see its stream go.
        for page in (alice, bob):
            wait_for_log(page, "streamDestroyed sdk", timeout=10)
            page.click("#leave")
            wait_for_log(page, "left the session")


def test_live_stream_captions_and_composer_start_and_stop_through_the_app_server(stack):
    """The page's other buttons: each starts through the app server's route (Switchboard's REST API with the
    application JWT) and stops through its stop route; a second stop is Switchboard's refusal, passed on."""
    server, _, video = stack
    room = requests.get(video + "/room/launch", timeout=10).json()
    sid = room["sessionId"]
    # Broadcasts and captions are of a session with clients: a Swift SDK client publishing a recording, which asks
    # the app server for the room's session and token as a video chat client does (`VideoAppServer.room`).
    sdk = client(server, "video", "join", "launch", "--app", video, "--publish", str(RECORDING), seconds=12)
    try:
        # Until the client is connected Switchboard refuses a broadcast (404: no clients), which comes back as 502.
        live = wait_until(lambda: (r := requests.post(video + "/broadcast", json={"sessionId": sid}, timeout=20)).status_code == 200 and r,
                          timeout=15, what="the broadcast started")
        assert live.json()["hls"].startswith(server.http_url + "/") and live.json()["hls"].endswith(".m3u8"), live.json()
        captions = requests.post(video + "/captions", json={"sessionId": sid}, timeout=20)
        assert captions.status_code == 200 and captions.json()["captionsId"], captions.text
        composer = requests.post(video + "/render", json={"sessionId": sid, "url": server.http_url + "/health"}, timeout=20)
        assert composer.status_code == 200 and composer.json()["id"], composer.text
        for route, body in [("/broadcast/stop", {"id": live.json()["id"]}), ("/captions/stop", {"id": captions.json()["captionsId"]}),
                            ("/render/stop", {"id": composer.json()["id"]})]:
            assert requests.post(video + route, json=body, timeout=20).status_code == 204, route
            again = requests.post(video + route, json=body, timeout=20)
            assert again.status_code == 502 and again.json()["detail"].startswith("Switchboard answered 40"), (route, again.text)
        # The SDK client was in the room's session: it published there and left when its time was up.
        lines = client_lines(sdk, timeout=40)
        assert any("published" in l for l in lines), lines
    finally:
        if sdk.poll() is None:
            sdk.kill()
            sdk.wait()
    assert requests.post(video + "/render", json={"sessionId": sid}, timeout=10).status_code == 400
