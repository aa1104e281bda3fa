"""The SIP edge on IPv6 (`--sip-address ::1`): SIPp places a call over [::1], and a call from a phone on ::1
gets an answer whose SDP says `c=IN IP6 ::1`, with its RTP leg echoing the phone's audio over IPv6."""

from __future__ import annotations

import math
import socket
import struct
import time
import uuid

from sip_support import FreePort, api, sipp, start_sip_server

NUMBER = "15550166"


def start_ipv6_server():
    server, port = start_sip_server(["--sip-address", "::1", "--rtp-ports", "37000-37999"], sip_host="::1", dev=True,
                                    env={"SWITCHBOARD_DEV_SIP_ECHO": "1"})
    r = api(server, "POST", "/v1/sip/trunks", json={"name": "v6", "host": "::1", "port": 5999, "transport": "udp", "allow": ["::1"],
                                                     "health_interval": 0})
    assert r.status_code == 201, r.text
    r = api(server, "POST", "/number/buy", data={"country": "US", "msisdn": NUMBER, "trunk_id": r.json()["id"]})
    assert r.status_code == 200, r.text
    return server, port


def mulaw(sample: int) -> int:
    """G.711 μ-law encoding of one 16-bit sample."""
    sign = 0x80 if sample < 0 else 0
    magnitude = min(abs(sample), 32635) + 0x84
    exponent = max(0, magnitude.bit_length() - 8)
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    return ~(sign | (exponent << 4) | mantissa) & 0xFF


def test_sipp_calls_over_ipv6(tmp_path):
    server, port = start_ipv6_server()
    try:
        run = sipp(["-sn", "uac", f"[::1]:{port}", "-i", "::1", "-p", FreePort("::1"), "-mp", FreePort("::1"), "-s", NUMBER,
                    "-m", "3", "-d", "300"], timeout=20, cwd=tmp_path)
        assert run.returncode == 0, run.stdout[-2500:] + run.stderr[-2500:] + server.log()[-1500:]
    finally:
        server.stop()


def test_a_phone_on_ipv6_is_answered_with_ip6_sdp_and_its_audio_comes_back_over_ipv6():
    server, port = start_ipv6_server()
    sip = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    rtp = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    try:
        sip.bind(("::1", 0))
        rtp.bind(("::1", 0))
        sip.settimeout(5)
        rtp.settimeout(0.2)
        sip_port, rtp_port = sip.getsockname()[1], rtp.getsockname()[1]
        call_id = f"{uuid.uuid4().hex}@[::1]"
        sdp = f"v=0\r\no=phone 1 1 IN IP6 ::1\r\ns=-\r\nc=IN IP6 ::1\r\nt=0 0\r\nm=audio {rtp_port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n"

        def request(method: str, cseq: int, to_tag: str = "", body: str = "") -> bytes:
            headers = [f"{method} sip:{NUMBER}@[::1]:{port} SIP/2.0",
                       f"Via: SIP/2.0/UDP [::1]:{sip_port};branch=z9hG4bK-{uuid.uuid4().hex}",
                       "From: <sip:15557650000@[::1]>;tag=v6phone", f"To: <sip:{NUMBER}@[::1]>{to_tag}", f"Call-ID: {call_id}",
                       f"CSeq: {cseq} {method}", f"Contact: <sip:15557650000@[::1]:{sip_port}>", "Max-Forwards: 70"]
            if body:
                headers.append("Content-Type: application/sdp")
            headers.append(f"Content-Length: {len(body.encode())}")
            return ("\r\n".join(headers) + "\r\n\r\n" + body).encode()

        sip.sendto(request("INVITE", 1, body=sdp), ("::1", port))
        final = ""
        deadline = time.time() + 10
        while time.time() < deadline:
            text = sip.recv(65536).decode(errors="replace")
            if not text.startswith("SIP/2.0 1"):
                final = text
                break
        assert final.startswith("SIP/2.0 200"), final
        head, _, answer = final.partition("\r\n\r\n")
        lines = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in head.split("\r\n")[1:] if ":" in l}
        assert "[::1]" in lines["contact"], lines["contact"]
        assert "c=IN IP6 ::1" in answer, answer
        media_port = int(next(l for l in answer.split("\r\n") if l.startswith("m=audio")).split()[1])
        to_tag = ";tag=" + lines["to"].split("tag=")[1].split(";")[0]
        sip.sendto(request("ACK", 1, to_tag), ("::1", port))

        # 1.5 s of a 1 kHz tone, 20 ms packets; the echo leg sends each frame back re-encoded.
        sent_payloads = []
        received = []
        for i in range(75):
            payload = bytes(mulaw(int(8000 * math.sin(2 * math.pi * 1000 * (i * 160 + n) / 8000))) for n in range(160))
            sent_payloads.append(payload)
            rtp.sendto(struct.pack("!BBHII", 0x80, 0, i, i * 160, 0x1234) + payload, ("::1", media_port))
            try:
                while True:
                    data, source = rtp.recvfrom(2048)
                    received.append((data, source))
            except (socket.timeout, BlockingIOError):
                pass
            time.sleep(0.02)
        end = time.time() + 1
        while time.time() < end:
            try:
                received.append(rtp.recvfrom(2048))
            except socket.timeout:
                break
        assert received, "no RTP came back over IPv6"
        assert all(source[0] == "::1" and source[1] == media_port for _, source in received)
        echoed = {data[12:] for data, _ in received if len(data) == 172}
        matches = sum(1 for p in sent_payloads if p in echoed)
        assert matches >= 60, f"{matches} of {len(sent_payloads)} frames came back unchanged ({len(received)} packets)"

        sip.sendto(request("BYE", 2, to_tag), ("::1", port))
        deadline = time.time() + 5
        while time.time() < deadline:
            text = sip.recv(65536).decode(errors="replace")
            if "CSeq: 2 BYE" in text:
                assert text.startswith("SIP/2.0 200"), text
                break
    finally:
        sip.close()
        rtp.close()
        server.stop()
