"""Helpers for the audio rooms tests: the built-in rooms app server (/rooms/api), a small
realtime gateway client, and aiortc members that publish and listen over `rtc:*`."""
from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import tempfile
import time
import uuid

import jwt
import numpy as np
import requests

from rig import REPO, free_port, wait_until
from media_support import collect_audio, dominant_frequency, loopback_ice, sine_track  # noqa: F401


def auth(base: str, name: str) -> dict:
    """POST {base}/auth → {name, jwt} (the built-in app server or switchboard-dropin)."""
    r = requests.post(base + "/auth", json={"name": name}, timeout=10)
    r.raise_for_status()
    return r.json()


def create_room(base: str, display_name: str) -> str:
    r = requests.post(base + "/rooms", json={"display_name": display_name}, timeout=10)
    r.raise_for_status()
    return r.json()["id"]


def list_rooms(base: str) -> list:
    r = requests.get(base + "/rooms", timeout=10)
    r.raise_for_status()
    return r.json()


def join_rest(server_url: str, jwt: str, conversation_id: str) -> dict:
    """Joins as the token's user through the Conversation API (as the reference iOS app does)."""
    r = requests.post(f"{server_url}/v1/conversations/{conversation_id}/members",
                      headers={"Authorization": "Bearer " + jwt},
                      json={"state": "joined", "channel": {"type": "app"}}, timeout=10)
    r.raise_for_status()
    return r.json()


def leave_rest(server_url: str, jwt: str, conversation_id: str) -> dict:
    r = requests.patch(f"{server_url}/v1/conversations/{conversation_id}/members/me",
                       headers={"Authorization": "Bearer " + jwt}, json={"state": "left"}, timeout=10)
    r.raise_for_status()
    return r.json()


class RequestError(Exception):
    def __init__(self, type_, body):
        super().__init__(f"{type_}: {body}")
        self.type = type_
        self.body = body
        self.code = (body or {}).get("code")


class Realtime:
    """One WebSocket to /v1/realtime: requests by `cid`, pushes collected per type."""

    def __init__(self, ws_url: str):
        self.url = ws_url + "/v1/realtime"
        self.ids = itertools.count(1)
        self.pending: dict[str, asyncio.Future] = {}
        self.events: list[dict] = []
        self.handlers: dict[str, list] = {}
        self.ws = None
        self.reader = None

    async def connect(self):
        import websockets
        self.ws = await websockets.connect(self.url, max_size=4 * 1024 * 1024)
        self.reader = asyncio.create_task(self._read())
        return self

    async def _read(self):
        try:
            async for text in self.ws:
                msg = json.loads(text)
                rid = msg.get("rid")
                if rid is not None and rid in self.pending:
                    fut = self.pending.pop(rid)
                    if not fut.done():
                        fut.set_result(msg)
                    continue
                self.events.append(msg)
                for h in self.handlers.get(msg.get("type"), []):
                    res = h(msg)
                    if asyncio.iscoroutine(res):
                        asyncio.create_task(res)
        except Exception:
            pass

    def on(self, type_, handler):
        self.handlers.setdefault(type_, []).append(handler)

    async def request(self, type_, body=None, timeout=15):
        cid = str(next(self.ids))
        fut = asyncio.get_running_loop().create_future()
        self.pending[cid] = fut
        await self.ws.send(json.dumps({"type": type_, "cid": cid, "body": body or {}}))
        msg = await asyncio.wait_for(fut, timeout)
        if msg["type"].endswith(":error"):
            raise RequestError(msg["type"], msg.get("body"))
        return msg.get("body")

    async def login(self, jwt):
        return await self.request("session:login", {"token": jwt})

    async def close(self):
        if self.ws:
            await self.ws.close()
        if self.reader:
            self.reader.cancel()

    def seen(self, type_, **match):
        return [e for e in self.events if e.get("type") == type_
                and all((e.get("body") or {}).get(k) == v or e.get(k) == v for k, v in match.items())]


class AudioMember:
    """A conversation member with aiortc: publishes a track (optional) and receives the others
    on one subscribe connection, answering every renegotiation offer."""

    def __init__(self, rt: Realtime, conversation_id: str):
        self.rt = rt
        self.cid = conversation_id
        self.pub = None
        self.sub = None
        self.tracks = {}  # mid -> remote track
        self.track_info = {}  # mid -> {member_id, name}
        self.offers = 0
        self.lock = asyncio.Lock()
        rt.on("rtc:offer", self._on_offer)

    async def publish(self, track):
        from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
        pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        pc.addTransceiver(track, direction="sendonly")
        await pc.setLocalDescription(await pc.createOffer())
        reply = await self.rt.request("rtc:publish", {"conversation_id": self.cid, "offer": pc.localDescription.sdp})
        await pc.setRemoteDescription(RTCSessionDescription(sdp=reply["answer"], type="answer"))
        self.pub = pc
        return reply

    async def subscribe(self):
        from aiortc import RTCConfiguration, RTCPeerConnection
        self.sub = RTCPeerConnection(RTCConfiguration(iceServers=[]))

        @self.sub.on("track")
        def on_track(track):
            for t in self.sub.getTransceivers():
                if t.receiver.track is track:
                    self.tracks[t.mid] = track

        reply = await self.rt.request("rtc:subscribe", {"conversation_id": self.cid})
        if reply.get("offer"):
            await self._apply(reply["offer"], reply.get("tracks", []))
        return reply

    async def _on_offer(self, msg):
        body = msg["body"]
        if body.get("conversation_id") == self.cid and self.sub is not None:
            await self._apply(body["offer"], body.get("tracks", []))

    async def _apply(self, offer, tracks):
        from aiortc import RTCSessionDescription
        async with self.lock:
            self.offers += 1
            self.last_offer = offer
            self.track_info = {t["mid"]: t for t in tracks}
            await self.sub.setRemoteDescription(RTCSessionDescription(sdp=offer, type="offer"))
            await self.sub.setLocalDescription(await self.sub.createAnswer())
            await self.rt.request("rtc:answer", {"conversation_id": self.cid, "answer": self.sub.localDescription.sdp})

    def ssrc_to_member(self):
        """From the latest offer: each live m-line's SSRC → the member it carries."""
        out = {}
        for section in getattr(self, "last_offer", "").split("\r\nm=")[1:]:
            mid = ssrc = None
            for line in section.split("\r\n"):
                if line.startswith("a=mid:"):
                    mid = line[6:]
                elif line.startswith("a=ssrc:") and ssrc is None:
                    ssrc = int(line[7:].split(" ")[0])
            if mid in self.track_info and ssrc is not None:
                out[ssrc] = self.track_info[mid]["member_id"]
        return out

    async def packets_by_member(self):
        """Packets received so far per sending member (aiortc getStats)."""
        owners = self.ssrc_to_member()
        out = {}
        for s in (await self.sub.getStats()).values():
            if s.type == "inbound-rtp" and s.ssrc in owners:
                out[owners[s.ssrc]] = s.packetsReceived
        return out

    def track_of(self, member_id):
        for mid, info in self.track_info.items():
            if info["member_id"] == member_id and mid in self.tracks:
                return self.tracks[mid]
        return None

    async def close(self):
        for pc in (self.pub, self.sub):
            if pc:
                await pc.close()


async def join_room(server, room: str, name: str):
    """`name` logs in through the rooms app server (`serve --dev`) and joins `room` over the realtime gateway;
    returns (realtime client, AudioMember, member id)."""
    rt = await Realtime(server.ws_url).connect()
    await rt.login(auth(server.http_url + "/rooms/api", name)["jwt"])
    joined = await rt.request("rtc:join", {"conversation_id": room})
    return rt, AudioMember(rt, room), joined["member_id"]


async def wait_for(predicate, timeout=10.0, interval=0.05, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what() if callable(what) else what}")
        await asyncio.sleep(interval)


def media_stats(server_url: str) -> list:
    """Worker stats from the test media routes (server started with --dev)."""
    return requests.get(server_url + "/test/media/stats", timeout=5).json()


def metric(server_url: str, name: str) -> float | None:
    for line in requests.get(server_url + "/metrics", timeout=5).text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return None


def dropin_binary():
    if env := os.environ.get("SWITCHBOARD_DROPIN_BIN"):
        return env
    if env := os.environ.get("SWITCHBOARD_BIN"):
        candidate = os.path.join(os.path.dirname(env), "switchboard-dropin")
        if os.path.exists(candidate):
            return candidate
    for config in ("release", "debug"):
        p = REPO / ".build" / config / "switchboard-dropin"
        if p.exists():
            return str(p)
    raise RuntimeError("no switchboard-dropin build found")


class Dropin:
    """switchboard-dropin, the reference rooms app server, for an application it creates on `server`:
    what a production deployment (no --dev) puts in front of the rooms web app (`/rooms/?app=BASE`)."""

    def __init__(self, server, host="127.0.0.1"):
        account = json.load(open(server.data_dir / "account.json"))
        r = requests.post(server.http_url + "/v2/applications", auth=(account["api_key"], account["api_secret"]),
                          json={"name": "dropin-rooms"}, timeout=10)
        assert r.status_code == 201, r.text
        app = r.json()
        self.work = tempfile.mkdtemp(prefix="dropin-rooms-")
        key = os.path.join(self.work, "app.key")
        with open(key, "w") as f:
            f.write(app["keys"]["private_key"])
        port = free_port(host)
        self.log_path = os.path.join(self.work, "dropin.log")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([dropin_binary(), "--switchboard", f"http://127.0.0.1:{server.http_port}",
                                          "--app-id", app["id"], "--key-file", key, "--listen", f"{host}:{port}",
                                          "--data", os.path.join(self.work, "dropin.db")],
                                         stdout=log, stderr=subprocess.STDOUT, cwd=self.work)
        self.base = f"http://{host}:{port}"

        def up():
            assert self.proc.poll() is None, open(self.log_path).read()
            try:
                return requests.get(self.base + "/rooms", timeout=1).status_code == 200
            except requests.ConnectionError:
                return False
        wait_until(up, timeout=20, what="switchboard-dropin")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def app_headers(server) -> dict:
    """An application JWT for the built-in rooms app (`serve --dev` writes its key to rooms-demo.json)."""
    demo = json.loads((server.data_dir / "rooms-demo.json").read_text())
    now = int(time.time())
    token = jwt.encode({"application_id": demo["id"], "iat": now, "jti": str(uuid.uuid4()), "exp": now + 600},
                       demo["private_key"], algorithm="RS256")
    return {"Authorization": f"Bearer {token}"}


def mix_track(member):
    """A mixed room's one `Room mix` track on `member`, once it has arrived."""
    for mid, info in member.track_info.items():
        if info.get("name") == "Room mix" and mid in member.tracks:
            return member.tracks[mid]
    return None


def tone_strength(samples, rate, tone) -> float:
    """Spectral magnitude near `tone` (±8 Hz), relative to the median magnitude of the 200-2000 Hz band."""
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    freqs = np.fft.rfftfreq(len(samples), 1 / rate)
    floor = float(np.median(spectrum[(freqs > 200) & (freqs < 2000)])) + 1e-9
    return float(spectrum[(freqs > tone - 8) & (freqs < tone + 8)].max()) / floor


async def drain(track):
    """aiortc queues every decoded frame since the track began: skip to live audio."""
    loop = asyncio.get_running_loop()
    for _ in range(5000):
        start = loop.time()
        await asyncio.wait_for(track.recv(), timeout=5)
        if loop.time() - start > 0.012:
            return
