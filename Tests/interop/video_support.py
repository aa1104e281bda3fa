"""Helpers for the video tests: a server with free media ports, the official `opentok` client
pointed at it, and the playground driven in Chromium."""
from __future__ import annotations

import asyncio
import base64
import fractions
import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import requests

from rig import serve_websocket, start_server, wait_until

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--use-fake-ui-for-media-stream",
    "--use-fake-device-for-media-stream",
    "--allow-loopback-in-peer-connection",
    "--autoplay-policy=no-user-gesture-required",
]


def start_video_server(https: bool = False, settings=()):
    """`switchboard serve --dev` (the playground's token helper) on free TCP and UDP ports, with any other `settings`."""
    return start_server(["--media-port", "0", "--log-level", "warn", *settings], https=https, dev=True)


@contextlib.contextmanager
def video_server(settings=()):
    """A video server for a module's tests, which must exit 0 when stopped (its log tail otherwise)."""
    s = start_video_server(settings=settings)
    yield s
    code = s.stop()
    log = s.log()
    s.cleanup()
    assert code == 0, log[-4000:]


def account(server) -> dict:
    """The primary account (api_key, api_secret) the server wrote into its data directory."""
    return json.loads((server.data_dir / "account.json").read_text())


def dev_session(server) -> str:
    """A routed session from the development app server (`serve --dev`, /video/api)."""
    r = requests.post(server.http_url + "/video/api/session", timeout=10)
    r.raise_for_status()
    return r.json()["sessionId"]


def dev_token(server, session_id: str, name: str, role: str = "publisher") -> str:
    """A token for `session_id` from the development app server, with `name=NAME` as its data."""
    r = requests.post(server.http_url + "/video/api/token", timeout=10,
                      json={"sessionId": session_id, "role": role, "data": f"name={name}"})
    r.raise_for_status()
    return r.json()["token"]


# A test's own network namespace behind a veth pair (`linked_namespace`): its end's address and ours.
NEAR, FAR = "10.205.0.1", "10.205.0.2"
NAMESPACES = os.geteuid() == 0 and shutil.which("ip") is not None and shutil.which("tc") is not None


@contextlib.contextmanager
def linked_namespace(tag: str, near: str = NEAR, far: str = FAR):
    """A network namespace of the test's own joined to this (the root) one by a veth pair: `near` on `{veth}0`, which
    stays here, `far` on `{veth}1`, inside, in one /24. Yields (namespace, veth); both are gone on the way out. Shape the
    link with `tc` on either end (`ip netns exec NAMESPACE tc …` for the inside one)."""
    namespace, veth = f"sb-{tag}-{os.getpid()}", f"sb{tag[:3]}{os.getpid() % 100000}"
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    try:
        for command in (["ip", "link", "add", f"{veth}0", "type", "veth", "peer", "name", f"{veth}1"],
                        ["ip", "addr", "add", f"{near}/24", "dev", f"{veth}0"], ["ip", "link", "set", f"{veth}0", "up"],
                        ["ip", "link", "set", f"{veth}1", "netns", namespace]):
            subprocess.run(command, check=True)
        for command in (["ip", "link", "set", "lo", "up"], ["ip", "addr", "add", f"{far}/24", "dev", f"{veth}1"],
                        ["ip", "link", "set", f"{veth}1", "up"]):
            subprocess.run(["ip", "netns", "exec", namespace, *command], check=True)
        yield namespace, veth
    finally:
        subprocess.run(["ip", "link", "del", f"{veth}0"], capture_output=True)
        subprocess.run(["ip", "netns", "del", namespace])


def beyond_loopback_server(announce: str = NEAR):
    """A production server (listening beyond loopback is production mode: --dev is loopback only) whose media
    announces `announce`, for a page in a linked namespace; sessions and tokens come from the `opentok` SDK."""
    return start_server(["--media-port", "0", "--media-announce", announce, "--log-level", "warn"], https=False, host="0.0.0.0")


class NamespacePage:
    """A playground page in `namespace` (video_netns_page.py as `role`), joined to `session_id` on `server`; `read_until`
    takes its JSON lines."""

    def __init__(self, namespace, role, server, session_id, token, seconds=150):
        here = Path(__file__).resolve().parent
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", namespace, sys.executable, str(here / "video_netns_page.py"), role,
             f"http://{NEAR}:{server.http_port}", session_id, token, str(seconds)],
            cwd=here, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []

    def read_until(self, done, timeout, what):
        """Reads lines until `done(line)`; the lines read."""
        deadline, read = time.monotonic() + timeout, []
        while time.monotonic() < deadline:
            raw = self.process.stdout.readline()
            if not raw:
                raise AssertionError(f"the page in the namespace ended: {self.process.stderr.read()[-4000:]}")
            line = json.loads(raw)
            read.append(line)
            self.lines.append(line)
            if done(line):
                return read
        raise AssertionError(f"{what} within {timeout} s: {self.lines}")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()


def opentok_client(server):
    import opentok
    acc = account(server)
    return opentok.Client(acc["api_key"], acc["api_secret"], api_url=server.http_url)


def join(page, server, session_id: str, token: str, name: str, publish: bool = True, query: str = ""):
    """Opens the playground, pastes the session id and token, and joins."""
    page.goto(server.http_url + "/video" + query)
    page.fill("#session-id", session_id)
    page.fill("#token", token)
    page.fill("#name", name)
    if not publish:
        page.uncheck("#auto-publish")
    page.click("#join")
    wait_until(lambda: page.evaluate("window.playground.connectionId()"), timeout=10, what=f"{name} connected")


def decoding(page, stream_count: int = 1):
    """Stats of every subscribed stream once `stream_count` streams decode video and audio."""
    def ready():
        stats = page.evaluate("window.playground.stats()")
        live = [s for s in stats.values()
                if s["video"] and s["audio"] and (s["video"]["framesDecoded"] or 0) > 0
                and (s["video"]["frameWidth"] or 0) > 0 and (s["audio"]["totalSamplesReceived"] or 0) > 0]
        return stats if len(live) >= stream_count else None
    return ready


def log_lines(page) -> list[str]:
    return page.eval_on_selector_all("#log li b", "els => els.map(e => e.textContent)")


def wait_for_log(page, fragment: str, timeout: float = 5.0) -> float:
    """Waits until a log line contains `fragment`; returns how long it took."""
    start = time.monotonic()
    wait_until(lambda: any(fragment in line for line in log_lines(page)), timeout=timeout, what=f"log '{fragment}'")
    return time.monotonic() - start


class VideoPeer:
    """A signaling-only client of the `video:*` protocol over the realtime gateway WebSocket."""

    def __init__(self, server, session_id: str, token: str):
        from websockets.sync.client import connect
        self.ws = connect(server.ws_url + "/v1/realtime").__enter__()  # kept open past this scope; close() ends it
        self.pushes: list[dict] = []
        self.next_cid = 1
        reply = self.request("video:connect", {"sessionId": session_id, "token": token})
        self.connection_id = reply["connectionId"]
        self.connect_reply = reply

    def request(self, type_: str, body: dict) -> dict:
        """Sends a request; returns the `:success` body or raises VideoRequestError with the code."""
        cid = str(self.next_cid)
        self.next_cid += 1
        self.ws.send(json.dumps({"type": type_, "cid": cid, "body": body}))
        while True:
            msg = json.loads(self.ws.recv(timeout=10))
            if msg.get("rid") == cid:
                if msg["type"].endswith(":error"):
                    raise VideoRequestError(msg["body"].get("code"), msg["body"].get("detail"))
                return msg["body"]
            self.pushes.append(msg)

    def wait_push(self, type_: str, timeout: float = 5.0, where=lambda body: True) -> dict:
        """The first push of `type_` (kept or arriving within `timeout`) that satisfies `where`."""
        deadline = time.monotonic() + timeout
        while True:
            for i, msg in enumerate(self.pushes):
                if msg["type"] == type_ and where(msg["body"]):
                    return self.pushes.pop(i)["body"]
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {type_} push; got {[m['type'] for m in self.pushes]}")
            try:
                self.pushes.append(json.loads(self.ws.recv(timeout=left)))
            except TimeoutError:
                pass

    def publish(self, name: str) -> str:
        return self.request("video:publish", {"name": name, "hasAudio": True, "hasVideo": True})["streamId"]

    def close(self):
        self.ws.close()


class VideoRequestError(Exception):
    def __init__(self, code, detail):
        super().__init__(f"{code}: {detail}")
        self.code = code


class AudioConnectorSink:
    """A WebSocket server on loopback standing in for an Audio Connector's far end (a transcription service, an
    agent): what each path received; on the paths in `talk`, it also sends a sine of that frequency back, 20 ms
    at a time at the rate the first message names, in real time, or `lead` seconds ahead of it (as an agent sending
    synthesized speech does, which the server's playout buffer holds). On the paths in `json` (the JSON audio transport), audio comes
    and goes base64-encoded in text messages: `json[path]` = (the field it arrives in, the field it is sent in);
    each such message received is kept whole in `texts`; other text messages (the server's events) go to `events`,
    and `send` writes a JSON command on a path."""

    def __init__(self, talk: dict[str, int] | None = None, json_fields: dict[str, tuple[str, str]] | None = None, lead: float = 0):
        self.talk = talk or {}
        self.lead = lead
        self.json = json_fields or {}
        self.texts: dict[str, list[dict]] = {}
        self.events: dict[str, list[dict]] = {}
        self.sockets: dict = {}
        self.first: dict[str, dict] = {}
        self.frames: dict[str, list[bytes]] = {}
        self.closed: dict[str, threading.Event] = {}
        self.loop, self.server, self.port = serve_websocket(self._handle)

    async def _handle(self, ws):
        import websockets
        path = ws.request.path
        self.frames[path] = []
        self.texts[path] = []
        self.events[path] = []
        self.sockets[path] = ws
        self.closed[path] = threading.Event()
        incoming, outgoing = self.json.get(path, (None, None))
        sender = None
        try:
            self.first[path] = json.loads(await ws.recv())
            if path in self.talk:
                rate = int(self.first[path]["content-type"].split("rate=")[1])
                sender = asyncio.ensure_future(self._say(ws, self.talk[path], rate, outgoing, self.lead))
            async for message in ws:
                if isinstance(message, bytes):
                    self.frames[path].append(message)
                elif "event" in json.loads(message):
                    self.events[path].append(json.loads(message))
                elif incoming:
                    body = json.loads(message)
                    self.texts[path].append(body)
                    self.frames[path].append(base64.b64decode(body[incoming]))
        except websockets.ConnectionClosed:
            pass
        finally:
            if sender:
                sender.cancel()
            self.closed[path].set()

    @staticmethod
    async def _say(ws, frequency, rate, field=None, lead=0.0):
        n, sent, start = rate // 50, 0, time.monotonic()
        while True:
            t = (np.arange(n) + sent) / rate
            pcm = (0.3 * 32767 * np.sin(2 * np.pi * frequency * t)).astype("<i2").tobytes()
            await ws.send(json.dumps({field: base64.b64encode(pcm).decode(), "seq": sent // n}) if field else pcm)
            sent += n
            await asyncio.sleep(max(0, start + sent / rate - lead - time.monotonic()))

    def uri(self, path):
        return f"ws://127.0.0.1:{self.port}{path}"

    def send(self, path, command: dict):
        """Writes `command` as a JSON text message on `path`'s socket."""
        asyncio.run_coroutine_threadsafe(self.sockets[path].send(json.dumps(command)), self.loop).result(10)

    def samples(self, path, seconds, rate):
        """The last `seconds` of what `path` received, as floats."""
        data = b"".join(self.frames[path][-int(seconds * 50):])
        return np.frombuffer(data, dtype="<i2").astype(np.float64), rate


def colour_track(rgb, fps=15, size=(320, 240)):
    """An aiortc video track of one solid colour."""
    import av
    from aiortc.mediastreams import MediaStreamError, VideoStreamTrack

    class ColourTrack(VideoStreamTrack):
        async def recv(self):
            if self.readyState != "live":
                raise MediaStreamError
            if hasattr(self, "_timestamp"):
                self._timestamp += int(90000 / fps)
                await asyncio.sleep(max(0, self._start + self._timestamp / 90000 - time.time()))
            else:
                self._start, self._timestamp = time.time(), 0
            image = np.zeros((size[1], size[0], 3), dtype=np.uint8)
            image[:, :] = rgb
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts, frame.time_base = self._timestamp, fractions.Fraction(1, 90000)
            return frame

    return ColourTrack()


async def publish(server, session_id, token, rgb, frequency, video=True, track=None, video_codec=None, audio=None, fields=None):
    """An aiortc peer publishing a tone (`frequency`), or the `audio` track, and, with `video`, a colour (`rgb`), or
    `track`, into the session (in `video_codec`, e.g. "video/H264", when given), with `fields` added to its
    `video:publish`; returns (pc, peer, stream id)."""
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
    from media_support import sine_track
    peer = await asyncio.to_thread(VideoPeer, server, session_id, token)
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTransceiver(audio or sine_track(frequency), direction="sendonly")
    if video:
        transceiver = pc.addTransceiver(track or colour_track(rgb), direction="sendonly")
        if video_codec:
            from aiortc import RTCRtpSender
            transceiver.setCodecPreferences([c for c in RTCRtpSender.getCapabilities("video").codecs if c.mimeType == video_codec])
    await pc.setLocalDescription(await pc.createOffer())
    reply = await asyncio.to_thread(peer.request, "video:publish", {
        "name": f"{frequency} Hz", "hasAudio": True, "hasVideo": video, "offer": pc.localDescription.sdp, **(fields or {})})
    await pc.setRemoteDescription(RTCSessionDescription(sdp=reply["answer"], type="answer"))
    return pc, peer, reply["streamId"]


async def unpublish(*publishers):
    """Closes publishers made by `publish` (their peer connections and signalling sockets)."""
    for pc, peer, _ in publishers:
        await pc.close()
        peer.close()


def decode_media(data: bytes, keep_pictures=False):
    """(video frames' mean RGB colours — or with `keep_pictures` the RGB pictures —, frame times in s, audio samples,
    audio rate, video codec) of a WebM or MP4 file, demuxed and decoded frame by frame with PyAV (FFmpeg's libraries)."""
    import io

    import av
    container = av.open(io.BytesIO(data))
    colours, times, audio, rate, codec = [], [], [], 48000, None
    if container.streams.video:
        codec = container.streams.video[0].codec_context.name
        for frame in container.decode(video=0):
            picture = frame.to_ndarray(format="rgb24")
            colours.append(picture if keep_pictures else picture.reshape(-1, 3).mean(axis=0))
            times.append(float(frame.time))
    container.close()
    container = av.open(io.BytesIO(data))
    if container.streams.audio:
        for frame in container.decode(audio=0):
            rate = frame.sample_rate
            audio.append(frame.to_ndarray()[0].astype(np.float64))
    container.close()
    samples = np.concatenate(audio) if audio else np.zeros(0)
    if samples.size and np.abs(samples).max() > 2:  # integer PCM
        samples = samples / 32768
    return colours, times, samples, rate, codec


@contextlib.contextmanager
def serve_page(html: str, path: str = "/"):
    """`html` served on a loopback HTTP server of the test's own (any path); yields the page's URL at `path`."""
    import http.server

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}{path}"
    finally:
        httpd.shutdown()
        httpd.server_close()
