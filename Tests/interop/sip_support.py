"""SIPp and baresip around a live `switchboard serve --sip-port`: scenarios, runs, the account's REST calls."""

from __future__ import annotations

import base64
import json
import re
import socket
import subprocess
import time
from pathlib import Path

import requests

from rig import REPO, free_sip_port, free_udp_port, port_taken, start_server, wait_until

SIPP_SCENARIOS = REPO / "Tests" / "Fixtures" / "sip" / "sipp"


def start_sip_server(extra_args=(), sip_host: str = "127.0.0.1", **kw):
    """A server with SIP on a free port of `sip_host`; returns (server, sip_port).

    The port can be taken between finding it free and the server binding it; the server then exits (SIP binds
    before HTTP answers) and it is started again on another port."""
    shown = f"[{sip_host}]" if ":" in sip_host else sip_host
    for attempt in range(3):
        port = free_sip_port(sip_host)
        try:
            server = start_server(["--sip-port", str(port), *extra_args], https=False, **kw)
        except RuntimeError as e:
            if attempt == 2 or port_taken(e) != port:
                raise
            continue
        wait_until(lambda: f"sip:   udp+tcp {shown}:{port}" in server.log(), timeout=10,
                   what=lambda: f"SIP listening:\n{server.log()[-2000:]}")
        return server, port
    raise AssertionError("unreachable")


def account_auth(server) -> dict:
    account = json.loads((server.data_dir / "account.json").read_text())
    raw = f"{account['api_key']}:{account['api_secret']}".encode()
    return {"Authorization": "Basic " + base64.b64encode(raw).decode()}


def api(server, method: str, path: str, **kw) -> requests.Response:
    return requests.request(method, server.http_url + path, headers=account_auth(server), timeout=10, **kw)


def expect_status_scenario(status: int, tmp: Path) -> Path:
    """A one-off SIPp UAC scenario: INVITE with SDP, then exactly `status`, ACKed."""
    path = tmp / f"uac-{status}.xml"
    path.write_text(f"""<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="expect {status}">
  <send retrans="500"><![CDATA[

    INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
    Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
    From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
    To: <sip:[service]@[remote_ip]:[remote_port]>
    Call-ID: [call_id]
    CSeq: 1 INVITE
    Contact: sip:sipp@[local_ip]:[local_port]
    Max-Forwards: 70
    Content-Type: application/sdp
    Content-Length: [len]

    v=0
    o=user1 53655765 2353687637 IN IP[local_ip_type] [local_ip]
    s=-
    c=IN IP[media_ip_type] [media_ip]
    t=0 0
    m=audio [media_port] RTP/AVP 0
    a=rtpmap:0 PCMU/8000

  ]]></send>
  <recv response="100" optional="true"/>
  <recv response="{status}"/>
  <send><![CDATA[

    ACK sip:[service]@[remote_ip]:[remote_port] SIP/2.0
    [last_Via:]
    From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
    To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
    Call-ID: [call_id]
    CSeq: 1 ACK
    Max-Forwards: 70
    Content-Length: 0

  ]]></send>
</scenario>
""")
    return path


class FreePort:
    """An argument of `sipp` that becomes a UDP port found free on `host` (for -p and -mp)."""

    def __init__(self, host: str = "127.0.0.1"):
        self.host = host


def udp_bound(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something has bound UDP `port` on `host` (a SIPp started as a server is listening)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.bind((host, port))
            return False
        except OSError:
            return True


class SippPBX:
    """SIPp running `scenario` (a UAS in Tests/Fixtures/sip/sipp) for one call on a free loopback port, listening
    before the block starts. `finish()` waits for the scenario's end and asserts it passed (exit 0); leaving the
    block kills it if it still runs."""

    def __init__(self, scenario: str):
        self.port = free_udp_port()
        self.process = subprocess.Popen(["sipp", "-sf", str(SIPP_SCENARIOS / scenario), "-i", "127.0.0.1", "-p", str(self.port),
                                         "-m", "1", "-nostdin", "-timeout", "30s", "-timeout_error"],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def __enter__(self):
        wait_until(lambda: udp_bound(self.port), timeout=10, what="SIPp listening")
        return self

    def finish(self, timeout: float = 20):
        output, _ = self.process.communicate(timeout=timeout)
        assert self.process.returncode == 0, output[-3000:]

    def __exit__(self, *exc):
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


def sipp(args: list, timeout: float = 30, cwd=None) -> subprocess.CompletedProcess:
    """Runs SIPp to completion. Its `FreePort` arguments are found free just before; when another process took
    one first SIPp exits at once ("errno = 98") and runs again on others."""
    for attempt in range(3):
        argv = [str(free_udp_port(a.host)) if isinstance(a, FreePort) else a for a in args]
        run = subprocess.run(["sipp", *argv, "-nostdin", "-timeout", f"{int(timeout)}s", "-timeout_error"],
                             capture_output=True, text=True, timeout=timeout + 10, cwd=cwd)
        if run.returncode == 0 or "errno = 98" not in run.stdout + run.stderr or attempt == 2:
            return run


def sipp_call(sip_port: int, number: str, status: int, tmp: Path, transport: str = "u1") -> subprocess.CompletedProcess:
    """One INVITE from 127.0.0.1 to `number`, expecting `status`."""
    return sipp(["-sf", str(expect_status_scenario(status, tmp)), f"127.0.0.1:{sip_port}", "-i", "127.0.0.1",
                 "-p", FreePort(), "-t", transport, "-m", "1", "-s", number], timeout=20)


def trunk_and_number(server, phone: "Baresip", app_id: str, number: str, name: str = "carrier") -> str:
    """A UDP trunk to `phone` (health checks off) and `number` bought on it and linked to `app_id`; returns the trunk id.
    A `connect` to a phone from `number` leaves over this trunk, and calls from the phone's address come in on it."""
    r = api(server, "POST", "/v1/sip/trunks", json={"name": name, "host": "127.0.0.1", "port": phone.sip_port, "transport": "udp",
                                                     "allow": ["127.0.0.0/8"], "health_interval": 0})
    assert r.status_code == 201, r.text
    trunk = r.json()["id"]
    r = api(server, "POST", "/number/buy", data={"country": "US", "msisdn": number, "trunk_id": trunk})
    assert r.status_code == 200, r.text
    r = api(server, "POST", "/number/update", data={"country": "US", "msisdn": number, "app_id": app_id})
    assert r.status_code == 200, r.text
    return trunk


def metric(server, name: str, **labels) -> float | None:
    text = requests.get(server.http_url + "/metrics", timeout=5).text
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    pattern = re.escape(name) + (r"\{" + re.escape(want) + r"\}" if labels else "") + r" ([0-9.e+-]+)$"
    for line in text.splitlines():
        m = re.match(pattern, line)
        if m:
            return float(m.group(1))
    return None


def _stop_with_parent():
    """In the child before exec: SIGTERM when the process (the thread) that started it ends (PR_SET_PDEATHSIG)."""
    import ctypes
    import signal
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)


class Baresip:
    """A headless baresip phone on loopback with a config directory of its own, driven over ctrl_tcp."""

    def __init__(self, account_line: str, tmp: Path, tone: int = 440, extra_config: str = "", source: str | None = None):
        """`source`: what the phone says, a WAV file (48 kHz stereo, played once per call) instead of a `tone`."""
        self.extra_config = extra_config
        self.source = f"aufile,{source}" if source else None
        self.dir = tmp / "baresip"
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "accounts").write_text(account_line + "\n")
        (self.dir / "contacts").write_text("")
        self.log_path = self.dir / "baresip.log"
        # Its ports are found free first; another process can take one before baresip binds it, and then
        # baresip exits at once: it is started again on other ports.
        for attempt in range(3):
            # baresip listens on the SIP port (UDP and TCP), the next one (TLS) and the control port.
            self.sip_port = free_sip_port(tls_next=True)
            self.ctrl_port = free_sip_port()
            while self.ctrl_port in (self.sip_port, self.sip_port + 1):
                self.ctrl_port = free_sip_port()
            self._write_config(tone)
            self.log_file = open(self.log_path, "wb")
            # Its stdin is a pipe from this process (baresip's console reads it, and spins on end of file): it is
            # told to stop if this process goes away without stopping it (a fixture that failed half way).
            self.process = subprocess.Popen(["baresip", "-f", str(self.dir)], stdin=subprocess.PIPE, stdout=self.log_file,
                                            stderr=subprocess.STDOUT, preexec_fn=_stop_with_parent)
            wait_until(lambda: "baresip is ready" in self.log() or self.process.poll() is not None, timeout=10,
                       what=lambda: f"baresip ready:\n{self.log()}")
            if self.process.poll() is None:
                return
            self.log_file.close()
            if attempt == 2 or "Address already in use" not in self.log():
                raise RuntimeError(f"baresip exited ({self.process.returncode}):\n{self.log()}")

    def _write_config(self, tone: int):
        (self.dir / "config").write_text(f"""poll_method epoll
sip_listen 127.0.0.1:{self.sip_port}
net_interface 127.0.0.1
audio_player aubridge,sink
snd_path {self.dir}
audio_source {self.source or f"ausine,{tone}"}
audio_alert aufile,/dev/null
ausrc_srate 48000
ausrc_channels 2
module_path /usr/lib/baresip/modules
module stdio.so
module g711.so
module ausine.so
module aufile.so
module aubridge.so
module sndfile.so
module_app account.so
module_app menu.so
module_app ctrl_tcp.so
ctrl_tcp_listen 127.0.0.1:{self.ctrl_port}
{self.extra_config}""")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def command(self, line: str):
        """Runs a menu command ("/dial sip:…", "/hangup") over ctrl_tcp (netstring-framed JSON)."""
        import socket
        name, _, params = line.lstrip("/").partition(" ")
        body = json.dumps({"command": name, "params": params, "token": name}).encode()
        deadline = time.time() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.ctrl_port), timeout=5) as conn:
                    conn.sendall(str(len(body)).encode() + b":" + body + b",")
                    return conn.recv(4096)
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)

    def played_once_ended(self):
        """`played()` once the phone's call has ended (its dump complete)."""
        wait_until(lambda: "terminated" in self.log().lower() or "closed" in self.log().lower(), timeout=10,
                   what=lambda: f"baresip call ended:\n{self.log()[-1500:]}")
        time.sleep(0.5)
        return self.played()

    def played(self, timeout: float = 5):
        """What the phone heard (the sndfile module's decoded-audio dump of its last call) as mono float samples and the rate.
        A dump baresip has opened but not yet given its header (the call just ended, or just began) is read again
        until it parses, for up to `timeout` seconds."""
        import wave
        from media_support import wav_samples
        deadline = time.time() + timeout
        while True:
            dumps = sorted(self.dir.glob("dump-*-dec.wav"), key=lambda p: p.stat().st_mtime)
            try:
                assert dumps, f"baresip wrote no recording: {sorted(p.name for p in self.dir.iterdir())}"
                return wav_samples(dumps[-1])
            except (AssertionError, wave.Error, EOFError):
                if time.time() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log_file.close()
