"""Helpers for live media interop tests: start a server with the test media routes, and
aiortc peers that publish and subscribe through it on loopback."""

import asyncio
import fractions
import json
import os
import subprocess
import tempfile
import time
import urllib.request

import numpy as np

from rig import free_port, server_binary


class MediaServer:
    """`switchboard serve --dev` (which has the /test/media routes and test hooks) on a free port."""

    def __init__(self, extra_env=None):
        self.port = free_port()
        self.data = tempfile.mkdtemp(prefix="sb-media-")
        env = dict(os.environ)
        env.update(extra_env or {})
        self.log = open(os.path.join(self.data, "server.log"), "w")
        self.proc = subprocess.Popen(
            [str(server_binary()), "serve", "--listen", f"127.0.0.1:{self.port}", "--data", self.data,
             "--media-port", "0", "--threads", "1", "--log-level", "warn", "--dev"],
            env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                urllib.request.urlopen(self.base + "/health", timeout=1).read()
                return
            except Exception:
                if self.proc.poll() is not None:
                    raise RuntimeError("server exited: " + open(self.log.name).read())
                time.sleep(0.1)
        raise RuntimeError("server did not start")

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            text = r.read()
            return json.loads(text) if text else None

    async def arequest(self, method, path, body=None):
        return await asyncio.get_running_loop().run_in_executor(None, self.request, method, path, body)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def loopback_ice():
    """aioice skips 127.0.0.1 when gathering; tests force it (see TEST-PEERS.md)."""
    import aioice.ice
    aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"]


def paced_track(samples_at, sample_rate=48000):
    """An aiortc audio track sending 20 ms frames in real time: `samples_at(first, n)` gives the int16 mono samples
    `first`…`first + n - 1` of what it plays."""
    from aiortc.mediastreams import AudioStreamTrack, MediaStreamError
    from av import AudioFrame

    class PacedTrack(AudioStreamTrack):
        async def recv(self):
            if self.readyState != "live":
                raise MediaStreamError
            n = sample_rate // 50
            if hasattr(self, "_timestamp"):
                self._timestamp += n
                await asyncio.sleep(self._start + self._timestamp / sample_rate - time.time())
            else:
                self._start, self._timestamp = time.time(), 0
            frame = AudioFrame(format="s16", layout="mono", samples=n)
            frame.planes[0].update(np.asarray(samples_at(self._timestamp, n), dtype=np.int16).tobytes())
            frame.pts, frame.sample_rate, frame.time_base = self._timestamp, sample_rate, fractions.Fraction(1, sample_rate)
            return frame

    return PacedTrack()


def sine_track(frequency, sample_rate=48000, amplitude=0.3):
    """An aiortc audio track producing a sine wave in 20 ms frames."""
    return paced_track(lambda first, n: np.sin(2 * np.pi * frequency * (np.arange(n) + first) / sample_rate) * amplitude * 32767,
                       sample_rate)


def pcm_track(samples, sample_rate=48000):
    """An aiortc audio track playing `samples` (int16, mono, `sample_rate`) in 20 ms frames, over and over."""
    pcm = np.asarray(samples, dtype=np.int16)
    return paced_track(lambda first, n: np.take(pcm, np.arange(first, first + n), mode="wrap"), sample_rate)


def wav_samples(source):
    """A 16-bit WAV's first channel as float samples, and its rate; `source` is a path or a binary file object."""
    import wave
    with wave.open(str(source) if isinstance(source, (str, os.PathLike)) else source) as w:
        rate, channels = w.getframerate(), w.getnchannels()
        data = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float64)
    return data.reshape(-1, channels)[:, 0], rate


def mp3_seconds(data):
    """An MP3's playing length as a gapless decoder reads it from its Xing/Info + LAME tag (frames × samples
    per frame − encoder delay − padding); None without the tag. (`soxi` estimates an MP3's length from its
    size and bitrate, which counts the tag frame, the delay and the padding.)"""
    at = next(i for i in range(len(data) - 4) if data[i] == 0xFF and data[i + 1] & 0xE0 == 0xE0)
    version = (data[at + 1] >> 3) & 3  # 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
    rate = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}[version][(data[at + 2] >> 2) & 3]
    mono = data[at + 3] >> 6 == 3
    side = (17 if mono else 32) if version == 3 else (9 if mono else 17)
    tag = at + 4 + side
    if data[tag:tag + 4] not in (b"Xing", b"Info"):
        return None
    flags = int.from_bytes(data[tag + 4:tag + 8], "big")
    if not flags & 1:
        return None
    frames = int.from_bytes(data[tag + 8:tag + 12], "big")
    lame = tag + 12 + (4 if flags & 2 else 0) + (100 if flags & 4 else 0) + (4 if flags & 8 else 0)
    delay = (data[lame + 21] << 4) | (data[lame + 22] >> 4)
    padding = ((data[lame + 22] & 0x0F) << 8) | data[lame + 23]
    return (frames * (1152 if version == 3 else 576) - delay - padding) / rate


def dominant_frequency(samples, sample_rate):
    window = samples * np.hanning(len(samples))
    spectrum = np.abs(np.fft.rfft(window))
    spectrum[:5] = 0  # ignore DC
    return np.fft.rfftfreq(len(samples), 1 / sample_rate)[int(np.argmax(spectrum))]


async def publish(server, room, tracks):
    """An aiortc peer that sends `tracks` to the room; returns the peer connection."""
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    for track in tracks:
        pc.addTransceiver(track, direction="sendonly")
    await pc.setLocalDescription(await pc.createOffer())
    reply = await server.arequest("POST", f"/test/media/rooms/{room}/publish", {"sdp": pc.localDescription.sdp})
    await pc.setRemoteDescription(RTCSessionDescription(sdp=reply["sdp"], type="answer"))
    pc.transport_id = reply["transport"]
    return pc


async def subscribe(server, room):
    """An aiortc peer receiving everything in the room; returns (pc, received tracks future list)."""
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    tracks = []

    @pc.on("track")
    def on_track(track):
        tracks.append(track)

    offer = await server.arequest("POST", f"/test/media/rooms/{room}/subscribe")
    await pc.setRemoteDescription(RTCSessionDescription(sdp=offer["sdp"], type="offer"))
    await pc.setLocalDescription(await pc.createAnswer())
    await server.arequest("POST", f"/test/media/transports/{offer['transport']}/answer", {"sdp": pc.localDescription.sdp})
    pc.transport_id = offer["transport"]
    return pc, tracks


async def tracks_arrive(tracks, seconds=5.0):
    """Waits (up to `seconds`) for `subscribe`'s list of received tracks to fill; the list."""
    for _ in range(int(seconds / 0.05)):
        if tracks:
            break
        await asyncio.sleep(0.05)
    return tracks


async def collect_audio(track, seconds):
    """Decoded samples (mono float) and the sample rate from an aiortc remote audio track."""
    chunks = []
    rate = 48000
    deadline = time.time() + seconds
    while time.time() < deadline:
        frame = await asyncio.wait_for(track.recv(), timeout=5)
        rate = frame.sample_rate
        data = frame.to_ndarray()
        channels = len(frame.layout.channels)
        mono = data.reshape(-1, channels)[:, 0] if data.ndim == 2 and data.shape[0] == 1 else data[0]
        chunks.append(mono.astype(np.float64))
    return np.concatenate(chunks), rate


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--use-fake-ui-for-media-stream",
    "--use-fake-device-for-media-stream",
    "--allow-loopback-in-peer-connection",
    "--autoplay-policy=no-user-gesture-required",
]

# Page-side helpers, evaluated in each page (same origin as the server, so fetch works).
PAGE_JS = """
window.sb = {
  async post(path, body) {
    const r = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'},
                                 body: body === undefined ? undefined : JSON.stringify(body)});
    if (!r.ok) throw new Error(path + ' ' + r.status + ' ' + await r.text());
    return r.status === 204 ? null : r.json();
  },
  async publish(room, size) {
    const stream = await navigator.mediaDevices.getUserMedia({audio: true, video: size || {width: 640, height: 360}});
    const pc = new RTCPeerConnection();
    for (const t of stream.getTracks()) pc.addTransceiver(t, {direction: 'sendonly', streams: [stream]});
    await pc.setLocalDescription(await pc.createOffer());
    const reply = await sb.post('/test/media/rooms/' + room + '/publish', {sdp: pc.localDescription.sdp});
    await pc.setRemoteDescription({type: 'answer', sdp: reply.sdp});
    window.pc = pc;
    return reply.transport;
  },
  async subscribe(room) {
    const pc = new RTCPeerConnection();
    window.received = [];
    pc.ontrack = (e) => {
      window.received.push(e.track.kind);
      const el = document.createElement(e.track.kind);
      el.srcObject = new MediaStream([e.track]);
      el.muted = true;
      el.autoplay = true;
      document.body.appendChild(el);
    };
    const offer = await sb.post('/test/media/rooms/' + room + '/subscribe');
    await pc.setRemoteDescription({type: 'offer', sdp: offer.sdp});
    await pc.setLocalDescription(await pc.createAnswer());
    await sb.post('/test/media/transports/' + offer.transport + '/answer', {sdp: pc.localDescription.sdp});
    window.pc = pc;
    window.subscribedAt = performance.now();
    return offer.transport;
  },
  async sending() {
    const out = {};
    const report = await window.pc.getStats();
    report.forEach((s) => {
      // The transport's selected pair carries the estimate (another nominated pair may carry none).
      if (s.type === 'transport' && s.selectedCandidatePairId) {
        out.availableOutgoingBitrate = report.get(s.selectedCandidatePairId)?.availableOutgoingBitrate;
      }
      if (s.type === 'candidate-pair') out.pairs = (out.pairs || []).concat(
        [`${s.id}:${s.state}:${s.nominated}:${s.availableOutgoingBitrate}`]);
      if (s.type === 'outbound-rtp' && s.kind === 'video') Object.assign(out, {
        targetBitrate: s.targetBitrate, frameWidth: s.frameWidth, bytesSent: s.bytesSent,
        qualityLimitationReason: s.qualityLimitationReason});
    });
    return out;
  },
  async inbound() {
    const out = {audio: null, video: null, state: window.pc.connectionState};
    (await window.pc.getStats()).forEach((s) => {
      if (s.type === 'inbound-rtp') out[s.kind] = {
        packetsReceived: s.packetsReceived, packetsLost: s.packetsLost, nackCount: s.nackCount,
        framesDecoded: s.framesDecoded, keyFramesDecoded: s.keyFramesDecoded,
        totalSamplesReceived: s.totalSamplesReceived, pliCount: s.pliCount, firCount: s.firCount,
        framesReceived: s.framesReceived, retransmittedPacketsReceived: s.retransmittedPacketsReceived};
      if (s.type === 'transport') out.srtpCipher = s.srtpCipher;
    });
    return out;
  },
};
"""


async def open_page(browser, server):
    page = await browser.new_page()
    await page.goto(server.base + "/health")
    await page.evaluate(PAGE_JS)
    return page
