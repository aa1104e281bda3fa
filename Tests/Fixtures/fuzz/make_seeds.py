"""Writes the fuzz seed corpora in Tests/Fixtures/fuzz/<Target>/ from real encoders and captured fixtures.

    .venv/bin/python Tests/Fixtures/fuzz/make_seeds.py

Seeds are what real peers put on the wire, so the fuzzer starts from inputs that reach deep parser states:
- SDP: the browser and aiortc descriptions in Tests/Fixtures/sdp and Tests/Fixtures/media, plus an offer
  and an answer aiortc builds now (audio, video, data channel, with host candidates).
- SDPAttribute: the distinct attribute, origin and timing lines of those descriptions, one per file.
- RTP / RTCP: packets serialized by aiortc's RTP stack (header extensions as WebRTC negotiates them,
  sender/receiver reports, SDES, BYE, NACK, PLI, FIR, REMB, compound packets).
- STUN: the RFC 5769 vectors already here, plus ICE connectivity checks serialized by aioice.
- MP3 / OggOpus: short tones encoded by sox (LAME) and opusenc at the rates and channel counts a prompt
  file may have, plus a file joined from two MP3 rates and a chained Ogg Opus file whose links differ in
  channels (the first byte also picks the fuzz harness's read size).
- HTTP: requests as curl, python-requests and Chromium send them (the first two bytes are the harness's
  split seed and knobs); WebSocketFrame: frames serialized by the `websockets` library (first two bytes
  likewise).
Existing seeds and committed crash reproducers are kept; this only adds or rewrites the files it names.
"""
from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent


def write(target: str, name: str, data: bytes | str):
    d = HERE / target
    d.mkdir(exist_ok=True)
    (d / name).write_bytes(data.encode() if isinstance(data, str) else data)


def sdp_seeds():
    for src in sorted((FIXTURES / "sdp").glob("*.sdp")) + sorted((FIXTURES / "media").glob("*.sdp")):
        shutil.copyfile(src, HERE / "SDP" / src.name)

    import aioice.ice
    from aiortc import RTCConfiguration, RTCPeerConnection

    aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"]

    async def build():
        offerer = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        answerer = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        offerer.addTransceiver("audio", direction="sendrecv")
        offerer.addTransceiver("video", direction="sendrecv")
        offerer.createDataChannel("chat")
        await offerer.setLocalDescription(await offerer.createOffer())
        await answerer.setRemoteDescription(offerer.localDescription)
        await answerer.setLocalDescription(await answerer.createAnswer())
        offer, answer = offerer.localDescription.sdp, answerer.localDescription.sdp
        await offerer.close()
        await answerer.close()
        return offer, answer

    offer, answer = asyncio.run(build())
    write("SDP", "aiortc-av-data-offer.sdp", offer)
    write("SDP", "aiortc-av-data-answer.sdp", answer)


def sdp_attribute_seeds(per_name: int = 3):
    """One line per seed: the distinct `a=`, `o=` and `t=` lines of the SDP seeds, a few per attribute name."""
    seen: dict[str, int] = {}
    lines: set[str] = set()
    for src in sorted((HERE / "SDP").iterdir()):
        for line in src.read_text(errors="replace").splitlines():
            if not line[:2] in ("a=", "o=", "t=") or line in lines:
                continue
            name = line.split(":", 1)[0]
            if seen.get(name, 0) >= per_name:
                continue
            seen[name] = seen.get(name, 0) + 1
            lines.add(line)
    for i, line in enumerate(sorted(lines)):
        write("SDPAttribute", f"line-{i:03}.txt", line)


def rtp_seeds():
    from aiortc.rtcrtpparameters import RTCRtpHeaderExtensionParameters, RTCRtpParameters
    from aiortc.rtp import (HeaderExtensionsMap, RtcpByePacket, RtcpPsfbPacket, RtcpReceiverInfo, RtcpRrPacket,
                            RtcpRtpfbPacket, RtcpSdesPacket, RtcpSenderInfo, RtcpSourceInfo, RtcpSrPacket, RtpPacket)

    extensions = HeaderExtensionsMap()
    extensions.configure(RTCRtpParameters(headerExtensions=[
        RTCRtpHeaderExtensionParameters(id=1, uri="urn:ietf:params:rtp-hdrext:ssrc-audio-level"),
        RTCRtpHeaderExtensionParameters(id=2, uri="http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time"),
        RTCRtpHeaderExtensionParameters(id=3, uri="http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"),
        RTCRtpHeaderExtensionParameters(id=4, uri="urn:ietf:params:rtp-hdrext:sdes:mid"),
        RTCRtpHeaderExtensionParameters(id=10, uri="urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"),
    ]))

    def rtp(name, pt, seq, ts, ssrc, payload, marker=0, csrc=(), **ext):
        packet = RtpPacket(payload_type=pt, marker=marker, sequence_number=seq, timestamp=ts, ssrc=ssrc, payload=payload)
        packet.csrc = list(csrc)
        for key, value in ext.items():
            setattr(packet.extensions, key, value)
        write("RTP", name, packet.serialize(extensions))

    opus = bytes([0xFC, 0xFF, 0xFE]) + bytes(range(40))
    rtp("aiortc-opus-level-mid", 111, 1, 960, 0x11223344, opus, audio_level=(True, 30), mid="0",
        abs_send_time=0x123456, transport_sequence_number=7)
    rtp("aiortc-opus-seq-wrap", 111, 65535, 0xFFFFFC40, 0x11223344, opus, audio_level=(False, 127))
    vp8 = bytes([0x90, 0xE0, 0x80, 0x01, 0x00]) + bytes(range(60))
    rtp("aiortc-vp8-keyframe-marker", 96, 300, 90000, 0x55667788, vp8, marker=1, mid="1", rtp_stream_id="h",
        transport_sequence_number=65535)
    rtp("aiortc-rtx-csrc", 97, 12, 3000, 0x99AABBCC, b"\x01\x2c" + vp8, csrc=(1, 2, 3))
    rtp("aiortc-no-extensions", 0, 4242, 160, 0xDEADBEEF, bytes(160))

    def rtcp(name, *packets):
        write("RTCP", name, b"".join(p.__bytes__() for p in packets))

    report = RtcpReceiverInfo(ssrc=0x11223344, fraction_lost=12, packets_lost=3, highest_sequence=70000,
                              jitter=42, lsr=0x12345678, dlsr=655)
    sender = RtcpSenderInfo(ntp_timestamp=0xE5D1A2B3C4D5E6F7, rtp_timestamp=123456, packet_count=50, octet_count=5000)
    sdes = RtcpSdesPacket(chunks=[RtcpSourceInfo(ssrc=0x55667788, items=[(1, b"aiortc-cname")])])
    rtcp("aiortc-sr-sdes", RtcpSrPacket(ssrc=0x55667788, sender_info=sender, reports=[report]), sdes)
    rtcp("aiortc-rr-sdes-bye", RtcpRrPacket(ssrc=0x1, reports=[report]), sdes, RtcpByePacket(sources=[0x55667788]))
    rtcp("aiortc-rr-empty", RtcpRrPacket(ssrc=0x2, reports=[]))
    rtcp("aiortc-nack", RtcpRrPacket(ssrc=0x1, reports=[]),
         RtcpRtpfbPacket(fmt=1, ssrc=0x1, media_ssrc=0x11223344, lost=[10, 11, 15, 26, 40, 300]))
    rtcp("aiortc-pli", RtcpPsfbPacket(fmt=1, ssrc=0x1, media_ssrc=0x55667788))
    rtcp("aiortc-fir", RtcpPsfbPacket(fmt=4, ssrc=0x1, media_ssrc=0, fci=bytes([0x55, 0x66, 0x77, 0x88, 3, 0, 0, 0])))
    # REMB (draft-alvestrand-rmcat-remb): "REMB", one SSRC, exponent 2, mantissa 250000 (1 Mbit/s).
    remb_fci = b"REMB" + bytes([1, (2 << 2) | (250000 >> 16), (250000 >> 8) & 0xFF, 250000 & 0xFF]) + (0x55667788).to_bytes(4, "big")
    rtcp("aiortc-remb", RtcpPsfbPacket(fmt=15, ssrc=0x1, media_ssrc=0, fci=remb_fci))


def stun_seeds():
    from aioice import stun

    request = stun.Message(message_method=stun.Method.BINDING, message_class=stun.Class.REQUEST,
                           transaction_id=bytes(range(12)))
    request.attributes["USERNAME"] = "remote:local"
    request.attributes["PRIORITY"] = 1853824767
    request.attributes["ICE-CONTROLLING"] = 0x0102030405060708
    request.attributes["USE-CANDIDATE"] = None
    request.add_message_integrity(b"0123456789abcdefghijklmn")
    request.add_fingerprint()
    write("STUN", "aioice-check-use-candidate", bytes(request))

    response = stun.Message(message_method=stun.Method.BINDING, message_class=stun.Class.RESPONSE,
                            transaction_id=bytes(range(12)))
    response.attributes["XOR-MAPPED-ADDRESS"] = ("127.0.0.1", 50000)
    response.add_message_integrity(b"0123456789abcdefghijklmn")
    response.add_fingerprint()
    write("STUN", "aioice-success-xor-mapped", bytes(response))

    error = stun.Message(message_method=stun.Method.BINDING, message_class=stun.Class.ERROR,
                         transaction_id=bytes(range(12)))
    error.attributes["ERROR-CODE"] = (487, "Role Conflict")
    error.add_fingerprint()
    write("STUN", "aioice-error-487", bytes(error))

    indication = stun.Message(message_method=stun.Method.BINDING, message_class=stun.Class.INDICATION,
                              transaction_id=bytes(range(12)))
    indication.add_fingerprint()
    write("STUN", "aioice-indication", bytes(indication))


def http_seeds():
    # Two leading bytes: split seed, knobs (bit 0 small limits, bit 1 response parser).
    req, small, resp = b"\x00\x00", b"\x05\x01", b"\x00\x02"
    write("HTTPRequest", "curl-get", req + b"GET /v1/users?page_size=10 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\n"
          b"User-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n")
    write("HTTPRequest", "requests-post-json-keepalive", req
          + b"POST /v1/conversations HTTP/1.1\r\nHost: 127.0.0.1:3000\r\nUser-Agent: python-requests/2.34.2\r\n"
          b"Accept-Encoding: gzip, deflate\r\nAccept: */*\r\nConnection: keep-alive\r\nAuthorization: Bearer eyJhbGciOi.x.y\r\n"
          b"Content-Length: 16\r\nContent-Type: application/json\r\n\r\n{\"name\": \"room\"}"
          b"GET /health HTTP/1.1\r\nHost: 127.0.0.1:3000\r\n\r\n")
    write("HTTPRequest", "chromium-websocket-upgrade", b"\x83\x00"
          + b"GET /v1/realtime HTTP/1.1\r\nHost: 127.0.0.1:3000\r\nConnection: Upgrade\r\nPragma: no-cache\r\n"
          b"Cache-Control: no-cache\r\nUpgrade: websocket\r\nOrigin: http://127.0.0.1:3000\r\nSec-WebSocket-Version: 13\r\n"
          b"Accept-Encoding: gzip, deflate, br\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
          b"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n")
    write("HTTPRequest", "chunked-trailers-small", small
          + b"PUT /v2/applications/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n0\r\nX-T: 1\r\n\r\n")
    write("HTTPRequest", "response-json-keepalive", resp
          + b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 11\r\nConnection: keep-alive\r\n\r\n{\"id\":\"x\"}\n"
          b"HTTP/1.1 204 No Content\r\n\r\n")
    write("HTTPRequest", "response-101-switching", resp
          + b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")


def websocket_seeds():
    from websockets.frames import Close, Frame, Opcode

    def frames(name, knobs, *items, mask):
        # knobs bit 0: 0 = server parser (client frames are masked); high nibble: log2 of the frame limit.
        write("WebSocketFrame", name, bytes([0x11, knobs]) + b"".join(f.serialize(mask=mask, extensions=[]) for f in items))

    login = b'{"type":"session:login","body":{"token":"eyJ.x.y"}}'
    frames("websockets-client-login-ping-close", 0xF0,
           Frame(Opcode.TEXT, login), Frame(Opcode.PING, b"hb"), Frame(Opcode.CLOSE, Close(1000, "bye").serialize()), mask=True)
    frames("websockets-client-fragmented-binary", 0xF0,
           Frame(Opcode.BINARY, bytes(range(200)), fin=False), Frame(Opcode.PONG, b""),
           Frame(Opcode.CONT, bytes(70000), fin=True), mask=True)
    frames("websockets-server-text-64bit-length", 0xF1,
           Frame(Opcode.TEXT, b"x" * 66000), Frame(Opcode.CLOSE, Close(1009, "too big").serialize()), mask=False)
    frames("websockets-client-utf8-split", 0xA0,
           Frame(Opcode.TEXT, "héllo wörld €".encode()[:8], fin=False), Frame(Opcode.CONT, "héllo wörld €".encode()[8:]), mask=True)


def audio_file_seeds():
    tmp = Path(tempfile.mkdtemp())

    def tone(name, rate, channels, seconds=0.2, frequency=440):
        wav = tmp / f"{name}.wav"
        subprocess.run(["sox", "-n", "-r", str(rate), "-c", str(channels), "-b", "16", str(wav),
                        "synth", str(seconds), "sine", str(frequency), "vol", "0.5"], check=True)
        return wav

    def mp3(name, rate, channels):
        out = tmp / f"{name}.mp3"
        subprocess.run(["sox", str(tone(name, rate, channels)), "-C", "32", str(out)], check=True)
        return out.read_bytes()

    def opus(name, rate, channels):
        out = tmp / f"{name}.opus"
        subprocess.run(["opusenc", "--quiet", "--bitrate", "24", str(tone(name, rate, channels)), str(out)], check=True)
        return out.read_bytes()

    for rate, channels in ((8000, 1), (22050, 1), (44100, 2)):
        write("MP3", f"sox-{rate}-{channels}ch.mp3", mp3(f"m{rate}{channels}", rate, channels))
    write("MP3", "sox-joined-44100-22050.mp3", mp3("j1", 44100, 1) + mp3("j2", 22050, 1))
    for rate, channels in ((48000, 1), (16000, 2), (48000, 6)):
        write("OggOpus", f"opusenc-{rate}-{channels}ch.opus", opus(f"o{rate}{channels}", rate, channels))
    write("OggOpus", "opusenc-chained-2ch-1ch.opus", opus("c1", 48000, 2) + opus("c2", 48000, 1))
    shutil.rmtree(tmp)


if __name__ == "__main__":
    for step in (sdp_seeds, sdp_attribute_seeds, rtp_seeds, stun_seeds, http_seeds, websocket_seeds, audio_file_seeds):
        step()
    for d in sorted(p for p in HERE.iterdir() if p.is_dir()):
        print(f"{d.name}: {sum(1 for _ in d.iterdir())} seeds")
