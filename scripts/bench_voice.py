"""Shared pieces of the telephony benchmarks (scripts/bench-calls, scripts/bench-bridged): a switchboard
server with SIP on free ports, an application whose number is on a loopback trunk, a fast webhook
server in its own process, SIPp runs, CPU time from /proc and the server's /metrics.

Standard library only; run by the benchmark scripts, not imported by the server or the tests."""

from __future__ import annotations

import asyncio
import base64
import json
import math
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")
NUMBER = "15550142"
# BENCH_SERVER_CPUS=0 BENCH_CLIENT_CPUS=1: the server on CPUs of its own, SIPp and the webhook server on the
# others (taskset lists), so neither preempts the other; unset, the kernel places them.
SERVER_CPUS = os.environ.get("BENCH_SERVER_CPUS")
CLIENT_CPUS = os.environ.get("BENCH_CLIENT_CPUS")


def pinned(args: list[str], cpus: str | None) -> list[str]:
    """`args` run on `cpus` (taskset execs the command, so the pid stays the command's)."""
    return ["taskset", "-c", cpus, *args] if cpus else args


def free_port(kind=socket.SOCK_DGRAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_sip_port() -> int:
    """A port free for both UDP and TCP (the SIP edge binds both)."""
    while True:
        port = free_port()
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, all its threads (/proc/PID/stat fields 14 and 15)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), "unknown CPU")
    sipp = re.search(r"v[0-9.]+", subprocess.run(["sipp", "-v"], capture_output=True, text=True).stdout or "")
    return (f"{model}, {os.cpu_count()} CPUs, Linux {os.uname().release}; SIPp {sipp.group(0) if sipp else '?'}; "
            f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def binary() -> Path:
    path = Path(os.environ.get("SWITCHBOARD_BIN", REPO / ".build/release/switchboard"))
    if not os.access(path, os.X_OK):
        sys.exit(f"no {path}: run 'swift build -c release --product switchboard' (or set SWITCHBOARD_BIN)")
    if not shutil.which("sipp"):
        sys.exit("sipp missing: apt-get install sip-tester")
    return path


# MARK: The server

class Server:
    """`switchboard serve` in production mode (no --dev unless asked, for a benchmark's diagnostics) with SIP
    and an RTP port range, on free ports."""

    def __init__(self, rtp_ports: str = "20000-39999", threads: int | None = None, dev: bool = False):
        self.data = Path(tempfile.mkdtemp(prefix="switchboard-bench-"))
        self.http = free_port(socket.SOCK_STREAM)
        self.sip = free_sip_port()
        args = [str(binary()), "serve", "--listen", f"127.0.0.1:{self.http}", "--data", str(self.data), "--media-port", "0",
                "--sip-port", str(self.sip), "--rtp-ports", rtp_ports, "--log-level", "error"]
        if threads:
            args += ["--threads", str(threads)]
        if dev:
            args += ["--dev"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("SWITCHBOARD_")}
        self.log = open(self.data / "server.log", "wb")
        self.process = subprocess.Popen(pinned(args, SERVER_CPUS), stdout=self.log, stderr=subprocess.STDOUT, env=env,
                                        cwd=str(self.data))
        self.pid = self.process.pid
        deadline = time.time() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.http}/health", timeout=1).read()
                time.sleep(0.3)
                if self.process.poll() is None:  # the answer was ours, not another process's on a reused port
                    break
                raise OSError("exited")
            except OSError:
                if self.process.poll() is not None or time.time() > deadline:
                    raise SystemExit(f"switchboard did not start:\n{(self.data / 'server.log').read_text()[-3000:]}")
                time.sleep(0.1)
        account = json.loads((self.data / "account.json").read_text())
        self.auth = "Basic " + base64.b64encode(f"{account['api_key']}:{account['api_secret']}".encode()).decode()

    def api(self, method: str, path: str, body: dict | None = None, form: dict | None = None) -> dict:
        headers = {"Authorization": self.auth}
        data = None
        if body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        elif form is not None:
            data = "&".join(f"{k}={v}" for k, v in form.items()).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        request = urllib.request.Request(f"http://127.0.0.1:{self.http}{path}", data=data, method=method, headers=headers)
        with urllib.request.urlopen(request, timeout=10) as r:
            text = r.read()
        return json.loads(text) if text else {}

    def application(self, hooks_url: str, trunk_port: int) -> str:
        """An application answering at `hooks_url`, the number NUMBER linked to it on a trunk from 127.0.0.1."""
        app = self.api("POST", "/v2/applications", {"name": "bench", "capabilities": {"voice": {"webhooks": {
            "answer_url": {"address": hooks_url + "/answer", "http_method": "POST"},
            "event_url": {"address": hooks_url + "/event", "http_method": "POST"}}}}})
        trunk = self.api("POST", "/v1/sip/trunks", {"name": "loopback", "host": "127.0.0.1", "port": trunk_port, "transport": "udp",
                                                   "allow": ["127.0.0.0/8"], "health_interval": 0})
        self.api("POST", "/number/buy", form={"country": "US", "msisdn": NUMBER, "trunk_id": trunk["id"]})
        self.api("POST", "/number/update", form={"country": "US", "msisdn": NUMBER, "app_id": app["id"]})
        return app["id"]

    def metrics(self) -> dict[str, float]:
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.http}/metrics", timeout=10).read().decode()
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                try:
                    out[name] = float(value)
                except ValueError:
                    pass
        return out

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.data, ignore_errors=True)


# MARK: The application's webhook server

WEBHOOKS_MAIN = r'''
import asyncio, json, sys
mode = sys.argv[1]
counts = {"answers": 0, "events": 0, "requests": 0, "status": {}}

def ncco(body, n):
    if mode == "talk":
        return [{"action": "talk", "text": "hi"}, {"action": "conversation", "name": "call-" + str(body.get("uuid"))}]
    if mode == "pairs":
        # Every two calls answered one after the other share a conversation: the mixer bridges them.
        return [{"action": "conversation", "name": "pair-" + str(n // 2)}]
    return [{"action": "conversation", "name": "call-" + str(body.get("uuid"))}]

class Hook(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport, self.buffer = transport, b""

    def data_received(self, data):
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            body, self.buffer = self.buffer[end + 4:end + 4 + length], self.buffer[end + 4 + length:]
            self.respond(head.split(" ", 2)[1], body)

    def respond(self, path, body):
        counts["requests"] += 1
        doc = json.loads(body) if body else {}
        if path.startswith("/answer"):
            reply = json.dumps(ncco(doc, counts["answers"])).encode()
            counts["answers"] += 1
            self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(reply), reply))
        elif path.startswith("/stats"):
            reply = json.dumps(counts).encode()
            self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(reply), reply))
        else:
            counts["events"] += 1
            status = doc.get("status")
            if status:
                counts["status"][status] = counts["status"].get(status, 0) + 1
            self.transport.write(b"HTTP/1.1 204 No Content\r\n\r\n")

async def main():
    server = await asyncio.get_running_loop().create_server(Hook, "127.0.0.1", 0, backlog=4096)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()

asyncio.run(main())
'''


class Webhooks:
    """The application's answer and event URLs: one asyncio process (HTTP/1.1 keep-alive), answering
    every call with an NCCO of `mode` (`conversation`: its own named conversation; `talk`: "hi", then
    its conversation; `pairs`: every two calls in one conversation) and counting events by status."""

    def __init__(self, mode: str):
        self.process = subprocess.Popen(pinned([sys.executable, "-c", WEBHOOKS_MAIN, mode], CLIENT_CPUS),
                                        stdout=subprocess.PIPE, text=True)
        self.pid = self.process.pid
        self.url = f"http://127.0.0.1:{int(self.process.stdout.readline())}"

    def stats(self) -> dict:
        return json.loads(urllib.request.urlopen(self.url + "/stats", timeout=10).read())

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def stop(self):
        self.process.terminate()
        self.process.wait()


# MARK: SIPp

def sipp_counts(output: str) -> tuple[int, int]:
    """(successful, failed) calls from SIPp's final statistics screen."""
    ok = re.findall(r"Successful call\s*\|\s*\d+\s*\|\s*(\d+)", output)
    failed = re.findall(r"Failed call\s*\|\s*\d+\s*\|\s*(\d+)", output)
    return (int(ok[-1]) if ok else 0, int(failed[-1]) if failed else -1)


def sipp(args: list[str], log: Path) -> subprocess.Popen:
    """Starts SIPp with its screen to `log` (a file, never a pipe: a full pipe would stall it)."""
    out = open(log, "w")
    return subprocess.Popen(pinned(["sipp", *args, "-nostdin", "-i", "127.0.0.1", "-p", str(free_port())], CLIENT_CPUS),
                            stdout=out, stderr=subprocess.STDOUT)


# MARK: A phone's voice as a pcap (for SIPp's play_pcap_audio)

def ulaw(sample: int) -> int:
    """G.711 mu-law encoding of a 16-bit linear sample."""
    sign = 0x80 if sample < 0 else 0
    magnitude = min(abs(sample), 32635) + 0x84
    exponent = max(0, magnitude.bit_length() - 8)
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    return ~(sign | (exponent << 4) | mantissa) & 0xFF


def tone_ulaw(path: Path, packets: int, frequency: float = 440.0):
    """The same tone as raw µ-law at 8 kHz, `packets` × 160 bytes: what SIPp's `rtp_stream` plays."""
    path.write_bytes(bytes(ulaw(int(8000 * math.sin(2 * math.pi * frequency * i / 8000))) for i in range(160 * packets)))


def tone_pcap(path: Path, seconds: float, frequency: float = 440.0):
    """PCMU (payload type 0) RTP, 20 ms packets, a sine tone: Ethernet/IPv4/UDP records that SIPp re-addresses."""
    packets = int(seconds * 50)
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for n in range(packets):
        payload = bytes(ulaw(int(8000 * math.sin(2 * math.pi * frequency * (n * 160 + i) / 8000))) for i in range(160))
        rtp = struct.pack("!BBHII", 0x80, 0x80 if n == 0 else 0, n & 0xFFFF, n * 160, 0x5EED) + payload
        udp = struct.pack("!HHHH", 6000, 6000, 8 + len(rtp), 0) + rtp
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), n & 0xFFFF, 0, 64, 17, 0, bytes([127, 0, 0, 1]), bytes([127, 0, 0, 1])) + udp
        frame = b"\x00" * 12 + b"\x08\x00" + ip
        t = n * 0.02
        out += struct.pack("<IIII", int(t), int(round((t - int(t)) * 1e6)), len(frame), len(frame)) + frame
    path.write_bytes(bytes(out))
    return packets
