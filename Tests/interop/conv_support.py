"""Fixtures for the conversation, realtime and drop-in interop tests.

Each test module starts its own `switchboard serve` (from .build/release or .build/debug, whichever is
newer; SWITCHBOARD_BIN overrides) on a free loopback port with a temporary data directory, and talks to
it over real sockets only.
"""
import asyncio
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import jwt
import pytest
import requests

from rig import free_port, wait_until  # noqa: F401 (re-exported for the tests)

ROOT = Path(__file__).resolve().parents[2]

CLIENT_ACL = {"paths": {p: {} for p in [
    "/*/users/**", "/*/conversations/**", "/*/sessions/**", "/*/devices/**", "/*/image/**", "/*/media/**",
    "/*/applications/**", "/*/push/**", "/*/knocking/**", "/*/legs/**", "/*/rtc/**"]}}


def binary(name, env=None):
    """The newest built `name` (release or debug); `env` names an overriding environment variable."""
    if env and os.environ.get(env):
        return os.environ[env]
    candidates = [ROOT / ".build" / c / name for c in ("release", "debug")]
    existing = [c for c in candidates if c.exists()]
    if not existing:
        pytest.skip(f"{name} is not built (swift build)")
    return str(max(existing, key=lambda p: p.stat().st_mtime))


class Server:
    """One `switchboard serve` process; survives kill/restart on the same data directory and port."""

    def __init__(self, *extra, data=None):
        self.extra = list(extra)
        self.owns_data = data is None
        self.data = data or tempfile.mkdtemp(prefix="sb-conv-")
        self.port = free_port()
        self.proc = None
        self.log_path = os.path.join(self.data, "server.log")

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self):
        return f"ws://127.0.0.1:{self.port}/v1/realtime"

    def start(self):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [binary("switchboard", "SWITCHBOARD_BIN"), "serve", "--listen", f"127.0.0.1:{self.port}",
             "--data", self.data, "--media-port", "0", "--log-level", "warn", *self.extra],
            stdout=log, stderr=subprocess.STDOUT, cwd=self.data)
        log.close()

        def up():
            if self.proc.poll() is not None:
                raise AssertionError(f"switchboard exited: {self.log()}")
            try:
                return requests.get(self.base + "/health", timeout=0.5).status_code == 200
            except requests.RequestException:
                return False
        wait_until(up, timeout=20, what="switchboard /health")
        acc = json.load(open(os.path.join(self.data, "account.json")))
        self.auth = (acc["api_key"], acc["api_secret"])
        return self

    def log(self):
        try:
            return open(self.log_path, errors="replace").read()[-4000:]
        except OSError:
            return ""

    def kill(self):
        """kill -9: no shutdown, no flush beyond what is committed."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()

    def restart(self):
        self.kill()
        return self.start()

    def close(self):
        self.stop()
        if self.owns_data:
            shutil.rmtree(self.data, ignore_errors=True)

    def metrics(self):
        return requests.get(self.base + "/metrics", timeout=5).text

    def metric(self, name):
        for line in self.metrics().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
        return None


class App:
    """An application created through /v2/applications, with helpers to sign its tokens and call the API."""

    def __init__(self, server, name=None, capabilities=None):
        self.server = server
        body = {"name": name or "conv-" + uuid.uuid4().hex[:8]}
        if capabilities:
            body["capabilities"] = capabilities
        r = requests.post(server.base + "/v2/applications", auth=server.auth, json=body, timeout=10)
        assert r.status_code == 201, r.text
        self.json = r.json()
        self.id = self.json["id"]
        self.private_key = self.json["keys"]["private_key"]
        # Parsing the PEM dominates signing time; parse once.
        from cryptography.hazmat.primitives.serialization import load_pem_private_key
        self.signing_key = load_pem_private_key(self.private_key.encode(), password=None, unsafe_skip_rsa_key_validation=True)

    def update(self, body):
        r = requests.put(f"{self.server.base}/v2/applications/{self.id}", auth=self.server.auth, json=body, timeout=10)
        assert r.status_code == 200, r.text
        self.json = r.json()
        return self.json

    def token(self, sub=None, ttl=600, iat=None, acl=True):
        now = int(time.time()) if iat is None else iat
        claims = {"application_id": self.id, "iat": now, "jti": str(uuid.uuid4()), "exp": now + ttl}
        if sub:
            claims["sub"] = sub
            if acl:
                claims["acl"] = CLIENT_ACL
        return jwt.encode(claims, self.signing_key, algorithm="RS256")

    def call(self, method, path, sub=None, token=None, **kw):
        headers = {"Authorization": "Bearer " + (token or self.token(sub))}
        kw.setdefault("timeout", 10)
        return requests.request(method, self.server.base + path, headers=headers, **kw)

    def ok(self, method, path, sub=None, expect=(200, 201), **kw):
        r = self.call(method, path, sub=sub, **kw)
        assert r.status_code in (expect if isinstance(expect, tuple) else (expect,)), f"{method} {path}: {r.status_code} {r.text}"
        return r.json() if r.content else None

    def user(self, name):
        return self.ok("POST", "/v1/users", json={"name": name, "display_name": name.title()})

    def conversation(self, **body):
        body.setdefault("name", "room-" + uuid.uuid4().hex[:10])
        return self.ok("POST", "/v1/conversations", json=body)

    def join(self, cid, name):
        """Joins as the user itself (user token), as the client SDKs do."""
        return self.ok("POST", f"/v1/conversations/{cid}/members", sub=name, json={"state": "joined", "channel": {"type": "app"}})

    def leave(self, cid, name):
        return self.ok("PATCH", f"/v1/conversations/{cid}/members/me", sub=name, json={"state": "left"})

    def walk(self, path, sub=None, **query):
        """Follows `_links.next` until the end; returns every page."""
        pages = []
        r = self.ok("GET", path, sub=sub, params=query)
        pages.append(r)
        while "next" in r["_links"]:
            r = self.ok("GET", relative(r["_links"]["next"]["href"]), sub=sub)
            pages.append(r)
        return pages


def relative(href):
    """`_links` hrefs are absolute; App.call wants the path and query."""
    if href.startswith("http"):
        href = "/" + href.split("/", 3)[3]
    return href


# ---------- realtime clients ----------

class RealtimeClient:
    """A websockets-library client that records every message; events are the messages with a conversation_id."""

    def __init__(self, ws):
        self.ws = ws
        self.messages = []
        self.cond = asyncio.Condition()
        self.closed = None
        self.reader = asyncio.get_running_loop().create_task(self._read())
        self.next_tid = 0

    @classmethod
    async def connect(cls, server, token=None, **kw):
        import websockets
        ws = await websockets.connect(server.ws_url, max_size=None, **kw)
        c = cls(ws)
        if token:
            c.login = await c.request("session:login", {"token": token})
            assert c.login["type"] == "session:success", c.login
            c.session_id = c.login["body"]["session_id"]
        return c

    async def _read(self):
        try:
            async for m in self.ws:
                async with self.cond:
                    self.messages.append(json.loads(m))
                    self.cond.notify_all()
        except Exception:
            pass
        finally:
            self.closed = (self.ws.close_code, self.ws.close_reason)
            async with self.cond:
                self.cond.notify_all()

    async def send(self, type, body=None):
        self.next_tid += 1
        tid = str(self.next_tid)
        await self.ws.send(json.dumps({"type": type, "tid": tid, "body": body or {}}))
        return tid

    async def request(self, type, body=None, timeout=5):
        tid = await self.send(type, body)
        return await self.wait_for(lambda m: m.get("rid") == tid, timeout)

    async def wait_for(self, predicate, timeout=5, count=1):
        """The first message (or first `count` messages) matching `predicate`."""
        async def found():
            async with self.cond:
                while True:
                    hits = [m for m in self.messages if predicate(m)]
                    if len(hits) >= count:
                        return hits[0] if count == 1 else hits[:count]
                    if self.closed is not None:
                        raise AssertionError(f"socket closed {self.closed} before the message; got {self.messages[-5:]}")
                    await self.cond.wait()
        return await asyncio.wait_for(found(), timeout)

    async def wait_closed(self, timeout=10):
        await asyncio.wait_for(asyncio.shield(self.reader), timeout)
        return self.closed

    def events(self, cid=None):
        return [m for m in self.messages if "conversation_id" in m and (cid is None or m["conversation_id"] == cid)]

    def abort(self):
        """Drops the TCP connection without a close frame."""
        transport = self.ws.transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            # RST instead of FIN, the way a dying phone network looks to the server.
            import struct
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()
        self.reader.cancel()

    async def close(self):
        try:
            await self.ws.close()
        except Exception:
            pass


class RawWebSocket:
    """A blocking RFC 6455 client that reads frames but never answers pings (for heartbeat tests)."""

    def __init__(self, port, path="/v1/realtime"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise AssertionError("connection closed during the handshake")
            head += chunk
        assert head.startswith(b"HTTP/1.1 101"), head
        self.buffer = b""
        self.pings = 0

    def send_text(self, text):
        payload = text.encode()
        mask = os.urandom(4)
        header = bytes([0x81])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + n.to_bytes(2, "big")
        else:
            header += bytes([0x80 | 127]) + n.to_bytes(8, "big")
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def frame(self):
        """(opcode, payload) of the next frame; EOFError when TCP closes."""
        b0, b1 = self._read(2)
        n = b1 & 0x7F
        if n == 126:
            n = int.from_bytes(self._read(2), "big")
        elif n == 127:
            n = int.from_bytes(self._read(8), "big")
        return b0 & 0x0F, self._read(n)

    def messages(self, timeout):
        """Yields ('text', dict) / ('ping', b) / ('close', code) until EOF or timeout; pings go unanswered."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                op, payload = self.frame()
            except socket.timeout:
                return
            except (EOFError, ConnectionError):
                yield ("eof", None)
                return
            if op == 1:
                yield ("text", json.loads(payload))
            elif op == 9:
                self.pings += 1
                yield ("ping", payload)
            elif op == 8:
                yield ("close", int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None)

    def close(self):
        self.sock.close()


@pytest.fixture(scope="module")
def server():
    s = Server("--realtime-ping-interval", "1").start()
    yield s
    s.close()


@pytest.fixture(scope="module")
def app(server):
    return App(server)
