"""Live-streaming broadcasts through the official `opentok` SDK: a session with an aiortc publisher (a solid colour
and a tone) is broadcast to HLS, which the server serves and FFmpeg's own HLS client (PyAV) plays, and to an RTMP
server — FFmpeg's RTMP listener (PyAV), a real peer on loopback — which receives the picture and the tone; the RTMP
server going away and coming back is seen in the broadcast's status and the stream resumes. Manual stream mode
sends only the chosen stream; every refusal has its status and code."""
from __future__ import annotations

import asyncio
import io
import socket
import threading
import time

import numpy as np
import pytest
import requests

from rig import free_port
from test_video_archive_manual import tones
from test_video_audio_connector import server  # noqa: F401 (the module's media server fixture)
from video_support import opentok_client, publish, unpublish

opentok = pytest.importorskip("opentok")
av = pytest.importorskip("av")

RED, BLUE = (220, 30, 30), (30, 30, 220)


def share(samples, rate, frequency):
    """The tone's share of the samples' energy (440 or 880 Hz)."""
    return tones(samples, rate)[0][frequency]


class RTMPPeer:
    """FFmpeg's RTMP server (PyAV with `listen`) on a loopback port: takes one publisher and keeps the mean colour of
    each picture and the sound, until the stream ends or `close`."""

    def __init__(self, port: int):
        self.port = port
        self.colours, self.sizes, self.samples, self.codecs = [], [], [], set()
        self.rate, self.ended, self.stopping = 48000, threading.Event(), False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            container = av.open(f"rtmp://127.0.0.1:{self.port}/live/room", options={"listen": "1"})
            try:
                for packet in container.demux():
                    if self.stopping:
                        break
                    for frame in packet.decode():
                        self.codecs.add(packet.stream.codec_context.name)
                        if isinstance(frame, av.VideoFrame):
                            picture = frame.to_ndarray(format="rgb24")
                            self.sizes.append((frame.width, frame.height))
                            self.colours.append(picture.reshape(-1, 3).mean(axis=0))
                        else:
                            self.rate = frame.sample_rate
                            self.samples.append(frame.to_ndarray()[0].astype(np.float64))
            finally:
                container.close()
        except Exception:  # the stream's end, or closed by `close`
            pass
        finally:
            self.ended.set()

    def close(self):
        """Stops taking the stream: the connection closes (as a server going away does)."""
        self.stopping = True
        # A listener still waiting for its publisher is woken by a connection that says nothing.
        if not self.ended.is_set() and not self.colours and not self.samples:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2):
                    pass
            except OSError:
                pass  # it ended meanwhile
        self.ended.wait(10)

    def sound(self):
        return np.concatenate(self.samples) if self.samples else np.zeros(0)


async def until(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await asyncio.to_thread(condition)
        if value:
            return value
        await asyncio.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def segment_media(url):
    """The pictures' mean colours and the sound (float, its rate) of the newest segment the playlist at `url` lists."""
    playlist = requests.get(url, timeout=5)
    assert playlist.status_code == 200 and playlist.headers["Content-Type"] == "application/vnd.apple.mpegurl"
    name = [line for line in playlist.text.splitlines() if line.startswith("segment-")][-1]
    segment = requests.get(url.rsplit("/", 1)[0] + "/" + name, timeout=5)
    assert segment.status_code == 200 and segment.headers["Content-Type"] == "video/mp2t"
    return decode_ts(segment.content)


def decode_ts(data: bytes):
    """The pictures' mean colours and the sound (float samples, its rate) in MPEG-TS bytes."""
    container = av.open(io.BytesIO(data), format="mpegts")
    colours, sound, rate = [], [], 48000
    for packet in container.demux():
        for frame in packet.decode():
            if isinstance(frame, av.VideoFrame):
                colours.append(frame.to_ndarray(format="rgb24").reshape(-1, 3).mean(axis=0))
            else:
                rate = frame.sample_rate
                sound.append(frame.to_ndarray()[0].astype(np.float64))
    container.close()
    return colours, (np.concatenate(sound) if sound else np.zeros(0)), rate


def play_hls(url, count=20):
    """The mean colours of the first `count` pictures FFmpeg's HLS client plays from the playlist at `url`."""
    container = av.open(url, timeout=10)
    pictures = []
    for frame in container.decode(video=0):
        pictures.append(frame.to_ndarray(format="rgb24").reshape(-1, 3).mean(axis=0))
        if len(pictures) >= count:
            break
    container.close()
    return pictures


def watch_in_chromium(url, screenshot):
    """Plays the playlist at `url` in Chromium's `<video>` (its own HLS player) for over a second: what it shows
    and whether it decoded sound. Nothing is loaded before `play()` (`preload=none`): Chromium 156's player fails
    with DEMUXER_ERROR_COULD_NOT_PARSE on any live playlist it began loading before it was played — FFmpeg's own
    HLS segments, served by Python's HTTP server, as well."""
    from rig import artifact_path, chromium, new_page
    with chromium() as browser:
        page = new_page(browser)
        # A page of the playlist's own origin (given by the test, not the server).
        origin = url.split("/broadcast/")[0]
        page.route(origin + "/player.test.html", lambda route: route.fulfill(
            status=200, content_type="text/html",
            body=f"<video id=v muted preload=none src='{url}' width=640 height=480></video><canvas id=c width=640 height=480></canvas>"))
        page.goto(origin + "/player.test.html")
        watched = page.evaluate("""async () => {
            const v = document.getElementById('v');
            await v.play();
            for (let waited = 0; v.currentTime <= 1.2 && waited < 15000; waited += 100) await new Promise(r => setTimeout(r, 100));
            const c = document.getElementById('c').getContext('2d');
            c.drawImage(v, 0, 0);
            return {width: v.videoWidth, height: v.videoHeight, time: v.currentTime, audioBytes: v.webkitAudioDecodedByteCount,
                    pixel: Array.from(c.getImageData(320, 240, 1, 1).data), error: v.error && v.error.message};
        }""")
        page.screenshot(path=str(artifact_path(screenshot)))
        return watched


def test_a_broadcast_goes_to_hls_and_to_an_rtmp_server_that_can_go_away_and_come_back(server):
    asyncio.run(_broadcast(server))


async def _broadcast(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    red = await publish(server, sid, ot.generate_token(sid, data="name=red"), RED, 440)
    port = free_port()
    peer = RTMPPeer(port)
    try:
        await asyncio.sleep(1)
        broadcast = await asyncio.to_thread(ot.start_broadcast, sid, {
            "outputs": {"hls": {}, "rtmp": [{"id": "peer", "serverUrl": f"rtmp://127.0.0.1:{port}/live", "streamName": "room"}]},
            "maxDuration": 600, "resolution": "640x480", "layout": {"type": "bestFit"}})
        assert broadcast.status == "started" and broadcast.resolution == "640x480" and broadcast.maxDuration == 600
        hls_url = broadcast.broadcastUrls["hls"]
        assert hls_url.startswith(server.http_url + "/broadcast/" + broadcast.id + "/hls/")
        assert broadcast.broadcastUrls["rtmp"][0]["id"] == "peer" and broadcast.broadcastUrls["rtmp"][0]["streamName"] == "room"

        def statuses():
            b = ot.get_broadcast(broadcast.id)
            return b.broadcastUrls["hlsStatus"], b.broadcastUrls["rtmp"][0]["status"]

        await until(lambda: statuses() == ("live", "live"), 15, "HLS and RTMP live")
        # The RTMP server receives the publisher's picture and tone, H.264 and AAC at 640 × 480.
        await until(lambda: len(peer.colours) >= 45 and peer.sound().size >= 48000 * 2, 15, "3 s over RTMP")
        assert peer.codecs == {"h264", "aac"} and set(peer.sizes) == {(640, 480)}
        r, g, b = peer.colours[-1]
        assert r > 150 and g < 80 and b < 80, peer.colours[-1]
        assert share(peer.sound()[-48000:], peer.rate, 440) > 0.5

        # HLS: the newest segment holds the same, and FFmpeg's HLS client plays the playlist over HTTP.
        colours, sound, rate = await asyncio.to_thread(segment_media, hls_url)
        assert len(colours) >= 15 and all(c[0] > 150 and c[1] < 80 for c in colours[-5:]), colours[-1]
        assert share(sound, rate, 440) > 0.5

        played = await asyncio.to_thread(play_hls, hls_url)
        assert len(played) == 20 and played[-1][0] > 150 and played[-1][2] < 80
        assert requests.get(hls_url.rsplit("/", 1)[0] + "/../../x", timeout=5).status_code == 404
        assert requests.get(hls_url.rsplit("/", 1)[0] + "/segment-x.ts", timeout=5).status_code == 404

        # The RTMP server goes away: the output is offline, the broadcast goes on; back, and the stream resumes.
        await asyncio.to_thread(peer.close)
        await until(lambda: statuses()[1] == "offline", 15, "RTMP offline")
        assert statuses()[0] == "live"
        peer = RTMPPeer(port)
        await until(lambda: statuses()[1] == "live", 15, "RTMP live again")
        await until(lambda: len(peer.colours) >= 15, 15, "pictures over the new connection")
        assert peer.colours[-1][0] > 150

        # One broadcast per session unless each has its own tag.
        with pytest.raises(opentok.exceptions.BroadcastError):
            await asyncio.to_thread(ot.start_broadcast, sid, {"outputs": {"hls": {}}})
        listed = requests.get(f"{server.http_url}/v2/project/{ot.api_key}/broadcast", params={"sessionId": sid},
                              headers=ot.get_json_headers(), timeout=5).json()
        assert listed["count"] == 1 and listed["items"][0]["id"] == broadcast.id

        # (once the playlist holds the few segments a live player starts behind the end with)
        await until(lambda: requests.get(hls_url, timeout=5).text.count("#EXTINF") >= 4, 15, "four whole segments")
        # Chromium's own HLS player plays it live: the picture and sound.
        watched = await asyncio.to_thread(watch_in_chromium, hls_url, "broadcast-hls.png")
        assert watched["error"] is None and (watched["width"], watched["height"]) == (640, 480), watched
        assert watched["time"] > 1 and watched["audioBytes"] > 0, watched
        assert watched["pixel"][0] > 150 and watched["pixel"][2] < 80, watched

        stopped = await asyncio.to_thread(ot.stop_broadcast, broadcast.id)
        assert stopped.status == "stopped"
        got = await asyncio.to_thread(ot.get_broadcast, broadcast.id)
        assert got.status == "stopped" and got.broadcastUrls["rtmp"][0]["status"] == "ended" and got.broadcastUrls["hlsStatus"] == "ended"
        assert await asyncio.to_thread(peer.ended.wait, 10), "the RTMP stream ends"
        playlist = requests.get(hls_url, timeout=5).text
        assert "#EXT-X-ENDLIST" in playlist, "the playlist says the stream ended"

        with pytest.raises(opentok.exceptions.BroadcastError):
            await asyncio.to_thread(ot.stop_broadcast, broadcast.id)
    finally:
        peer.close()
        await unpublish(red)


def test_a_manual_broadcast_sends_only_the_chosen_stream(server):
    asyncio.run(_manual(server))


async def _manual(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    red = await publish(server, sid, ot.generate_token(sid, data="name=red"), RED, 440)
    blue = await publish(server, sid, ot.generate_token(sid, data="name=blue"), BLUE, 880)
    try:
        await asyncio.sleep(1)
        broadcast = await asyncio.to_thread(ot.start_broadcast, sid, {"outputs": {"hls": {"dvr": True}}, "resolution": "1280x720"},
                                            opentok.BroadcastStreamModes.manual)
        assert broadcast.stream_mode == "manual" and broadcast.streams == []
        await asyncio.to_thread(ot.add_broadcast_stream, broadcast.id, blue[2])
        got = await asyncio.to_thread(ot.get_broadcast, broadcast.id)
        assert got.streams == [{"streamId": blue[2], "hasAudio": True, "hasVideo": True}]
        hls_url = broadcast.broadcastUrls["hls"]
        # Segments made after blue was chosen: blue fills the picture, 880 Hz alone is heard.
        first = await until(lambda: _newest_segment(hls_url), 15, "a segment")
        await until(lambda: (_newest_segment(hls_url) or -1) >= first + 2, 15, "two more segments")
        colours, sound, rate = await asyncio.to_thread(segment_media, hls_url)
        r, g, b = colours[-1]
        assert b > 150 and r < 80, colours[-1]
        assert share(sound, rate, 880) > 0.5 and share(sound, rate, 440) < 0.01
        playlist = requests.get(hls_url, timeout=5).text
        assert "segment-0.ts" in playlist, "dvr keeps two hours of segments"
        await asyncio.to_thread(ot.remove_broadcast_stream, broadcast.id, blue[2])
        got = await asyncio.to_thread(ot.get_broadcast, broadcast.id)
        assert got.streams == []
        await asyncio.to_thread(ot.stop_broadcast, broadcast.id)
    finally:
        await unpublish(red, blue)


def _newest_segment(url):
    r = requests.get(url, timeout=5)
    if r.status_code != 200:
        return None
    numbers = [int(line[8:-3]) for line in r.text.splitlines() if line.startswith("segment-")]
    return max(numbers) if numbers else None


def test_broadcast_refusals(server):
    asyncio.run(_refusals(server))


async def _refusals(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    base = f"{server.http_url}/v2/project/{ot.api_key}/broadcast"
    headers = ot.get_json_headers()

    def post(body, path=""):
        return requests.post(base + path, json=body, headers=headers, timeout=10)

    def refused(response, status, code=None):
        assert response.status_code == status, response.text
        if code:
            assert response.json()["code"] == code, response.text

    rtmp = {"serverUrl": "rtmp://127.0.0.1:9/live", "streamName": "x"}
    refused(post({"sessionId": sid, "outputs": {"hls": {}}}), 404, "no-clients")
    red = await publish(server, sid, ot.generate_token(sid), RED, 440)
    try:
        refused(post({"sessionId": sid}), 400)
        refused(post({"sessionId": sid, "outputs": {}}), 400)
        refused(post({"sessionId": sid, "outputs": {"hls": {"lowLatency": True, "dvr": True}}}), 400)
        refused(post({"sessionId": sid, "outputs": {"rtmp": [rtmp] * 6}}), 400)
        refused(post({"sessionId": sid, "outputs": {"rtmp": [{"serverUrl": "http://x/live", "streamName": "x"}]}}), 400)
        refused(post({"sessionId": sid, "outputs": {"rtmp": [{"serverUrl": "rtmp://x/live"}]}}), 400)
        refused(post({"sessionId": sid, "outputs": {"hls": {}}, "maxDuration": 30}), 400)
        refused(post({"sessionId": sid, "outputs": {"hls": {}}, "resolution": "800x600"}), 400)
        refused(post({"sessionId": sid, "outputs": {"hls": {}}, "hasAudio": False, "hasVideo": False}), 400)
        refused(post({"sessionId": sid, "outputs": {"hls": {}}, "layout": {"type": "custom", "stylesheet": "x"}}), 400)
        refused(post({"sessionId": "2_MX4xMjM0NTZ-fjE2MDAwMDAwMDB-eHl6", "outputs": {"hls": {}}}), 404)
        refused(requests.get(base + "/nope", headers=headers, timeout=5), 404)
        # Two at once under their own tags; the untagged third is refused, as is a stream change in auto mode.
        a = post({"sessionId": sid, "outputs": {"rtmp": [rtmp]}, "multiBroadcastTag": "a"})
        b = post({"sessionId": sid, "outputs": {"hls": {}}, "multiBroadcastTag": "b", "hasVideo": False})
        assert a.status_code == 200 and b.status_code == 200, (a.text, b.text)
        assert a.json()["multiBroadcastTag"] == "a" and b.json()["hasVideo"] is False
        refused(post({"sessionId": sid, "outputs": {"hls": {}}}), 409, "broadcast-in-progress")
        refused(requests.patch(f"{base}/{a.json()['id']}/streams", json={"addStream": "x"}, headers=headers, timeout=5), 405, "stream-mode-auto")
        refused(requests.put(f"{base}/{b.json()['id']}/layout", json={"type": "pip"}, headers=headers, timeout=5), 409)
        assert requests.put(f"{base}/{a.json()['id']}/layout", json={"type": "pip"}, headers=headers, timeout=5).status_code == 200
        # An RTMP server nothing listens at: the broadcast runs, the output says it is offline.
        await until(lambda: requests.get(f"{base}/{a.json()['id']}", headers=headers, timeout=5).json()["broadcastUrls"]["rtmp"][0]["status"] == "offline",
                    10, "offline")
        for x in (a, b):
            assert post({}, f"/{x.json()['id']}/stop").status_code == 200
    finally:
        await unpublish(red)
