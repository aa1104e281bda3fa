"""Starting a real switchboard server on loopback, running the CLI, and making tokens, for the accounts tests."""

from __future__ import annotations

import base64
import functools
import json
import os
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import jwt as pyjwt
import requests
from cryptography.hazmat.primitives import serialization

ROOT = Path(__file__).resolve().parents[2]


def binary() -> str:
    """SWITCHBOARD_BIN, else the release build, else the debug build."""
    given = os.environ.get("SWITCHBOARD_BIN")
    if given:
        return str(Path(given).resolve())
    for config in ("release", "debug"):
        path = ROOT / ".build" / config / "switchboard"
        if path.exists():
            return str(path)
    raise RuntimeError("no switchboard binary: run `swift build` first or set SWITCHBOARD_BIN")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `switchboard serve` process on a data directory; can be killed and started again on the same directory."""

    def __init__(self, data: Path):
        self.data = Path(data)
        self.proc: subprocess.Popen | None = None
        self.http_port = 0
        self.https_port = 0
        self.log = self.data.parent / (self.data.name + ".log")

    def start(self) -> "Server":
        self.http_port, self.https_port = free_port(), free_port()
        self.proc = subprocess.Popen(
            [binary(), "serve", "--listen", f"127.0.0.1:{self.http_port}", "--https", f"127.0.0.1:{self.https_port}",
             "--data", str(self.data), "--media-port", "0", "--log-level", "warn"],
            stdout=open(self.log, "ab"), stderr=subprocess.STDOUT, cwd=str(ROOT))
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            try:
                if requests.get(self.http_url + "/health", timeout=1).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError("server did not become healthy")

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.http_port}"

    @property
    def https_url(self) -> str:
        return f"https://127.0.0.1:{self.https_port}"

    @property
    def ca(self) -> str:
        return str(self.data / "tls" / "ca.pem")

    @property
    def account(self) -> dict:
        return json.loads((self.data / "account.json").read_text())

    def basic(self, key: str | None = None, secret: str | None = None) -> str:
        a = self.account
        raw = f"{key or a['api_key']}:{secret if secret is not None else a['api_secret']}".encode()
        return "Basic " + base64.b64encode(raw).decode()

    def request(self, method: str, path: str, auth: str | None = None, **kw) -> requests.Response:
        headers = kw.pop("headers", {})
        if auth:
            headers["Authorization"] = auth
        return requests.request(method, self.http_url + path, headers=headers, timeout=10, **kw)

    def create_app(self, name: str = "app") -> tuple[str, str]:
        """A new application; returns (id, private key PEM)."""
        r = self.request("POST", "/v2/applications", self.basic(), json={"name": name})
        r.raise_for_status()
        body = r.json()
        return body["id"], body["keys"]["private_key"]

    def cli(self, *args: str, cwd: Path | str | None = None, https: bool = False, check: bool = True,
            env: dict | None = None) -> subprocess.CompletedProcess:
        """Runs the CLI against this server with the data directory's credentials."""
        e = dict(os.environ)
        e.update({"SWITCHBOARD_URL": self.https_url if https else self.http_url, "SWITCHBOARD_DATA": str(self.data)})
        for k in ("SWITCHBOARD_API_KEY", "SWITCHBOARD_API_SECRET", "SWITCHBOARD_CA"):
            e.pop(k, None)
        e.update(env or {})
        p = subprocess.run([binary(), *args], cwd=str(cwd) if cwd else None, env=e, capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise AssertionError(f"switchboard {' '.join(args)} failed ({p.returncode}): {p.stderr.strip()}")
        return p


@functools.lru_cache(maxsize=64)
def _loaded_key(pem: str):
    # Loading (and validating) an RSA key costs tens of milliseconds; the matrix signs hundreds of tokens.
    return serialization.load_pem_private_key(pem.encode(), password=None)


def token(app_id: str, private_key: str, *, sub: str | None = None, acl: dict | None = None, ttl: int = 300,
          iat_offset: int = 0, extra: dict | None = None, alg: str = "RS256", key=None, headers: dict | None = None) -> str:
    """An application (or, with `sub`, user) JWT as the SDKs make them."""
    now = int(time.time()) + iat_offset
    claims = {"application_id": app_id, "iat": now, "jti": str(uuid.uuid4()), "exp": now + ttl}
    if sub is not None:
        claims["sub"] = sub
    if acl is not None:
        claims["acl"] = acl
    claims.update(extra or {})
    return pyjwt.encode(claims, key if key is not None else _loaded_key(private_key), algorithm=alg, headers=headers)


CLIENT_ACL = {"paths": {p: {} for p in [
    "/*/users/**", "/*/conversations/**", "/*/sessions/**", "/*/devices/**", "/*/image/**", "/*/media/**",
    "/*/applications/**", "/*/push/**", "/*/knocking/**", "/*/legs/**", "/*/rtc/**"]}}


def bearer(t: str) -> str:
    return "Bearer " + t
