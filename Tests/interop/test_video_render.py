"""Experience Composer: the `opentok` and `vonage` SDKs start a render of a web page (served on loopback: a coloured
page playing a 660 Hz tone) into a routed session; the server's headless Chromium loads it, and the page's own tab —
picture and sound — is published as a stream that an aiortc subscriber decodes (the page's colour, the tone). The
render is listed, read and stopped (its stream destroyed, `stopped` with its reason); a page that cannot be loaded
is `failed` with why; bad requests, a relayed session and a token that may not publish are refused."""
import asyncio
import functools
import time

import numpy as np
import pytest
import requests

from media_support import collect_audio, dominant_frequency
from rig import free_port, wait_until
from video_support import VideoPeer, opentok_client, serve_page, video_server

opentok = pytest.importorskip("opentok")
pytest.importorskip("aiortc")

COLOUR = (30, 200, 90)
TONE = 660
PAGE = f"""<!doctype html><html><head><title>composed</title><style>
html, body {{ margin: 0; height: 100%; background: rgb{COLOUR}; }}</style></head>
<body><div id="dot" style="position: absolute; width: 8px; height: 8px; background: rgb{COLOUR[::-1]}"></div><script>
  // Something moving, so the page keeps changing (a still page is captured only when it changes).
  const dot = document.getElementById("dot");
  const move = (t) => {{ dot.style.left = `${{Math.round(t / 10) % 300}}px`; requestAnimationFrame(move); }};
  requestAnimationFrame(move);
  // A tone for as long as the page is open (the renderer allows sound without a gesture).
  const ctx = new AudioContext();
  const tone = ctx.createOscillator();
  tone.frequency.value = {TONE};
  const level = ctx.createGain();
  level.gain.value = 0.3;
  tone.connect(level).connect(ctx.destination);
  tone.start();
</script></body></html>"""


@pytest.fixture(scope="module")
def site():
    """The page to render, on a loopback HTTP server of the test's own."""
    with serve_page(PAGE, "/composed") as url:
        yield url


@pytest.fixture(scope="module")
def server():
    with video_server() as s:
        yield s


def render_url(server, ot, render_id=""):
    return f"{server.http_url}/v2/project/{ot.api_key}/render" + (f"/{render_id}" if render_id else "")


async def watch(peer, stream_id, seconds):
    """Subscribes to `stream_id` with aiortc through `peer`; returns (mean colours, frame sizes, audio samples, rate)."""
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    tracks = {}
    pc.on("track", lambda t: tracks.__setitem__(t.kind, t))
    offer = await asyncio.to_thread(peer.request, "video:subscribe", {"streamId": stream_id})
    await pc.setRemoteDescription(RTCSessionDescription(sdp=offer["offer"], type="offer"))
    await pc.setLocalDescription(await pc.createAnswer())
    await asyncio.to_thread(peer.request, "video:subscribe:answer", {"streamId": stream_id, "answer": pc.localDescription.sdp})
    deadline = time.monotonic() + 10
    while len(tracks) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert set(tracks) == {"audio", "video"}, tracks

    async def pictures():
        colours, sizes = [], []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            frame = await asyncio.wait_for(tracks["video"].recv(), timeout=5)
            picture = frame.to_ndarray(format="rgb24")
            sizes.append((frame.width, frame.height))
            colours.append(picture.reshape(-1, 3).mean(axis=0))
        return colours, sizes
    try:
        await collect_audio(tracks["audio"], 0.5)
        (colours, sizes), (samples, rate) = await asyncio.gather(pictures(), collect_audio(tracks["audio"], seconds))
    finally:
        await pc.close()
    return colours, sizes, samples, rate


def test_a_rendered_page_is_a_stream_of_the_session(server, site):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    watcher = VideoPeer(server, sid, ot.generate_token(sid, data="name=watcher"))
    try:
        render = ot.start_render(sid, ot.generate_token(sid, role=opentok.Roles.publisher, data="name=composer"), site,
                                 max_duration=300, resolution="640x480", properties={"name": "composed page"})
        assert render.status == "starting" and render.sessionId == sid and render.url == site and render.resolution == "640x480"
        started = wait_until(lambda: (r := ot.get_render(render.id)).status != "starting" and r, timeout=30,
                             what="the render started")
        assert started.status == "started" and started.streamId, started.attrs()
        created = watcher.wait_push("video:streamCreated", timeout=5)["stream"]
        assert created["streamId"] == started.streamId and created["name"] == "composed page" and created["hasAudio"]

        # The page's own picture and sound, as a subscriber receives them.
        colours, sizes, samples, rate = asyncio.run(watch(watcher, started.streamId, 2.0))
        assert len(colours) >= 10, len(colours)
        mean = np.mean(colours[-5:], axis=0)
        assert np.all(np.abs(mean - COLOUR) < 25), mean
        assert sizes[-1] == (640, 480), set(sizes)
        assert abs(dominant_frequency(samples, rate) - TONE) < 15, dominant_frequency(samples, rate)
        assert np.sqrt(np.mean(samples ** 2)) > 0.01

        listed = ot.list_renders()
        assert render.id in [r.id for r in listed.items] and listed.count >= 1

        # Stopped: its stream goes, and it says why.
        ot.stop_render(render.id)
        destroyed = watcher.wait_push("video:streamDestroyed", timeout=10)["stream"]
        assert destroyed["streamId"] == started.streamId
        stopped = wait_until(lambda: (r := ot.get_render(render.id)).status == "stopped" and r, timeout=10, what="stopped")
        assert stopped.reason == "Stopped by the user." and stopped.updatedAt >= stopped.createdAt
        assert requests.delete(render_url(server, ot, render.id), headers=ot.get_json_headers(), timeout=10).status_code == 404
    finally:
        watcher.close()


def test_a_page_that_cannot_be_loaded_fails_and_says_why(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    keep = VideoPeer(server, sid, ot.generate_token(sid))
    try:
        render = ot.start_render(sid, ot.generate_token(sid), f"http://127.0.0.1:{free_port()}/nothing-here")
        failed = wait_until(lambda: (r := ot.get_render(render.id)).status != "starting" and r, timeout=30, what="the render ended")
        assert failed.status == "failed" and "ERR_CONNECTION_REFUSED" in failed.reason, failed.attrs()
        assert failed.streamId is None
    finally:
        keep.close()


def test_bad_requests_are_refused(server, site):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    headers = ot.get_json_headers()
    good = {"sessionId": sid, "token": ot.generate_token(sid), "url": site}
    post = functools.partial(requests.post, render_url(server, ot), headers=headers, timeout=10)
    for change, says in (
        ({"url": "ftp://127.0.0.1/page.html"}, "url"),
        ({"url": "http://x"}, "url"),
        ({"maxDuration": 30}, "maxDuration"),
        ({"maxDuration": 36_001}, "maxDuration"),
        ({"resolution": "800x600"}, "resolution"),
        ({"properties": {"name": ""}}, "properties.name"),
        ({"token": "T1==nonsense"}, "token"),
        ({"token": ot.generate_token(sid, role=opentok.Roles.subscriber)}, "publish"),
        ({"sessionId": "1_nope"}, "sessionId"),
    ):
        r = post(json={**good, **change})
        assert r.status_code == 400 and says in r.json().get("detail", r.text), (change, r.status_code, r.text)
    relayed = ot.create_session(media_mode=opentok.MediaModes.relayed).session_id
    r = post(json={**good, "sessionId": relayed, "token": ot.generate_token(relayed)})
    assert r.status_code == 409, r.text
    assert requests.get(render_url(server, ot, "0" * 8 + "-0000-0000-0000-" + "0" * 12), headers=headers, timeout=10).status_code == 404
    assert requests.get(render_url(server, ot, "..%2F..%2Faccount"), headers=headers, timeout=10).status_code == 404


def test_a_restart_ends_a_render_and_leaves_no_browser(site, tmp_path):
    """Stopping the server ends its browsers with it; the render it left running is `failed` after the restart."""
    import subprocess

    from rig import start_server
    start = lambda: start_server(["--media-port", "0", "--log-level", "warn"], https=False, dev=True, data_dir=tmp_path)
    server = start()
    try:
        ot = opentok_client(server)
        sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
        keep = VideoPeer(server, sid, ot.generate_token(sid))
        render = ot.start_render(sid, ot.generate_token(sid), site, resolution="640x480")
        wait_until(lambda: ot.get_render(render.id).status == "started", timeout=30, what="started")
        keep.close()
        browsers = lambda: subprocess.run(["pgrep", "-f", f"switchboard-render-{render.id}"], capture_output=True, text=True).stdout.split()
        assert browsers()
        assert server.stop() == 0
        wait_until(lambda: not browsers(), timeout=10, what="the render's browser gone with the server")
    finally:
        server.cleanup()
    again = start()
    try:
        left = opentok_client(again).get_render(render.id)
        assert left.status == "failed" and left.reason == "The server stopped while rendering.", left.attrs()
    finally:
        again.stop()
        again.cleanup()


def test_the_cli_starts_reads_lists_and_stops_a_render(server, site):
    import json
    import subprocess

    from rig import server_binary

    def cli(*args):
        out = subprocess.run([str(server_binary()), "video", *args, "--server", server.http_url, "--data-dir", str(server.data_dir)],
                             capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    keep = VideoPeer(server, sid, ot.generate_token(sid))
    try:
        render_id = cli("render", "start", sid, "--url", site, "--resolution", "640x480", "--name", "from the cli")
        started = wait_until(lambda: (r := json.loads(cli("render", "get", render_id)))["status"] == "started" and r, timeout=30,
                             what="started")
        assert keep.wait_push("video:streamCreated", timeout=5)["stream"]["name"] == "from the cli" and started["streamId"]
        assert render_id in [r["id"] for r in json.loads(cli("render", "list"))["items"]]
        cli("render", "stop", render_id)
        wait_until(lambda: json.loads(cli("render", "get", render_id))["status"] == "stopped", timeout=10, what="stopped")
    finally:
        keep.close()


def test_the_playground_composes_a_page_into_its_session(server, site):
    pytest.importorskip("playwright.sync_api")
    from rig import chromium, new_page, screenshot
    from video_support import CHROMIUM_ARGS, decoding, join, wait_for_log
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    with chromium(extra_args=CHROMIUM_ARGS[3:]) as browser:
        page = new_page(browser)
        join(page, server, sid, ot.generate_token(sid, data="name=host"), "host", publish=False)
        page.fill("#render-url", site)
        page.click("#start-render")
        wait_for_log(page, "streamCreated composed page", timeout=30)
        (stream,) = wait_until(decoding(page), timeout=20, what="the composed page decoded").values()
        assert stream["name"] == "composed page" and stream["video"]["frameWidth"] > 0
        screenshot(page, "video-playground-composed-page.png")
        page.click("#stop-render")
        wait_for_log(page, "streamDestroyed composed page", timeout=10)
        page.context.close()


def test_renders_beyond_the_server_s_limit_are_refused(site):
    with video_server(settings=["--renders-max", "1"]) as server:
        ot = opentok_client(server)
        sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
        keep = VideoPeer(server, sid, ot.generate_token(sid))
        try:
            first = ot.start_render(sid, ot.generate_token(sid), site, resolution="640x480")
            r = requests.post(render_url(server, ot), headers=ot.get_json_headers(), timeout=10,
                              json={"sessionId": sid, "token": ot.generate_token(sid), "url": site})
            assert r.status_code == 503 and "--renders-max" in r.json()["detail"], r.text
            wait_until(lambda: ot.get_render(first.id).status == "started", timeout=30, what="the first started")
            ot.stop_render(first.id)
            wait_until(lambda: ot.get_render(first.id).status == "stopped", timeout=10, what="the first stopped")
            second = ot.start_render(sid, ot.generate_token(sid), site, resolution="640x480")
            wait_until(lambda: ot.get_render(second.id).status == "started", timeout=30, what="a place freed, the next one started")
            ot.stop_render(second.id)
        finally:
            keep.close()


def test_a_page_that_loads_anew_publishes_anew(server):
    """A page that reloads itself (a dashboard refreshing) is the same render with a new stream."""
    page = "<!doctype html><body style='background: rgb(200, 200, 0)'><script>" \
           "if (!location.search) setTimeout(() => { location.search = '?again'; }, 1500);</script></body>"
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    watcher = VideoPeer(server, sid, ot.generate_token(sid))
    with serve_page(page, "/reloading") as url:
        try:
            render = ot.start_render(sid, ot.generate_token(sid), url, resolution="640x480")
            first = watcher.wait_push("video:streamCreated", timeout=30)["stream"]["streamId"]
            assert watcher.wait_push("video:streamDestroyed", timeout=10)["stream"]["streamId"] == first
            second = watcher.wait_push("video:streamCreated", timeout=15)["stream"]["streamId"]
            now = wait_until(lambda: (r := ot.get_render(render.id)).streamId == second and r, timeout=5, what="the render's new stream")
            assert now.status == "started" and second != first
            ot.stop_render(render.id)
            wait_until(lambda: ot.get_render(render.id).status == "stopped", timeout=10, what="stopped")
        finally:
            watcher.close()


def test_a_page_over_plain_http_on_another_host_is_composed(site, tmp_path):
    """A page over plain HTTP from a host that is not this machine is not a secure context, where alone a page may
    capture itself: the render's browser treats its origin as one. `--chromium` names the browser — here Debian's,
    through a wrapper that resolves `composer.test` to loopback, so the page is on "another host" without leaving it."""
    import shutil
    wrapper = tmp_path / "chromium-with-hosts"
    wrapper.write_text(f"#!/bin/sh\nexec {shutil.which('chromium')} --host-resolver-rules='MAP composer.test 127.0.0.1' \"$@\"\n")
    wrapper.chmod(0o755)
    with video_server(settings=["--chromium", str(wrapper)]) as server:
        ot = opentok_client(server)
        sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
        keep = VideoPeer(server, sid, ot.generate_token(sid))
        try:
            url = site.replace("127.0.0.1", "composer.test")
            render = ot.start_render(sid, ot.generate_token(sid), url, resolution="640x480")
            started = wait_until(lambda: (r := ot.get_render(render.id)).status != "starting" and r, timeout=30, what="the render ended starting")
            assert started.status == "started", started.attrs()
            ot.stop_render(render.id)
        finally:
            keep.close()


def test_a_render_whose_page_never_answers_can_be_stopped_while_it_starts(server):
    """A server that takes the connection and never answers holds the page's loading; the render stays `starting`
    (at most 30 s, then `failed`), and stopping it then ends it at once."""
    import socket
    silent = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    keep = VideoPeer(server, sid, ot.generate_token(sid))
    try:
        render = ot.start_render(sid, ot.generate_token(sid), f"http://127.0.0.1:{silent.getsockname()[1]}/never")
        time.sleep(2)
        assert ot.get_render(render.id).status == "starting"
        ot.stop_render(render.id)
        stopped = wait_until(lambda: (r := ot.get_render(render.id)).status != "starting" and r, timeout=5, what="stopped at once")
        assert stopped.status == "stopped" and stopped.reason == "Stopped by the user." and stopped.streamId is None, stopped.attrs()
    finally:
        keep.close()
        silent.close()


def test_a_render_whose_browser_dies_fails_and_its_stream_goes(server, site):
    import os
    import signal
    import subprocess
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    watcher = VideoPeer(server, sid, ot.generate_token(sid))
    try:
        render = ot.start_render(sid, ot.generate_token(sid), site, resolution="640x480")
        started = wait_until(lambda: (r := ot.get_render(render.id)).status == "started" and r, timeout=30, what="started")
        leader = int(subprocess.run(["pgrep", "-o", "-f", f"switchboard-render-{render.id}"], capture_output=True, text=True).stdout.split()[0])
        os.killpg(leader, signal.SIGKILL)
        failed = wait_until(lambda: (r := ot.get_render(render.id)).status != "started" and r, timeout=10, what="the render ended")
        assert failed.status == "failed" and failed.reason == "the browser exited", failed.attrs()
        destroyed = watcher.wait_push("video:streamDestroyed", timeout=10, where=lambda b: b["stream"]["streamId"] == started.streamId)
        assert destroyed["stream"]["streamId"] == started.streamId
    finally:
        watcher.close()
