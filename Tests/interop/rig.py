"""Shared pieces of the live test rig: ports, the switchboard process, headless Chromium, artifacts.

Later suites import these directly (`from rig import start_server, chromium`) or use the fixtures
in conftest.py.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--use-fake-ui-for-media-stream",
    "--use-fake-device-for-media-stream",
]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def free_udp_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def free_sip_port(host: str = "127.0.0.1", tls_next: bool = False) -> int:
    """A port free for both UDP and TCP (SIP listens on both with one number): a UDP port the kernel picks,
    kept only when TCP can bind it too — and with `tls_next` the port after it as well, where baresip listens
    for SIP over TLS (a port in TIME_WAIT from the suite's many short connections cannot be bound)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for _ in range(50):
        with socket.socket(family, socket.SOCK_DGRAM) as u:
            u.bind((host, 0))
            port = u.getsockname()[1]
            try:
                with socket.socket(family, socket.SOCK_STREAM) as t, socket.socket(family, socket.SOCK_STREAM) as tls:
                    t.bind((host, port))
                    if tls_next:
                        tls.bind((host, port + 1))
            except OSError:
                continue
            return port
    raise RuntimeError("no port free for both UDP and TCP")


def server_binary() -> Path:
    """The switchboard executable: $SWITCHBOARD_BIN, else the release build, else the debug build.

    Nothing is built here: `make test` builds release before running the interop suite.
    """
    if env := os.environ.get("SWITCHBOARD_BIN"):
        return Path(env)
    for config in ("release", "debug"):
        p = REPO / ".build" / config / "switchboard"
        if p.exists():
            return p
    raise RuntimeError("no switchboard build found: run `swift build -c release` first")


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.02, what="condition"):
    """Polls `predicate` until it is truthy. `what` names the wait; a callable is called only on timeout,
    so a message can carry the logs as they are then."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what() if callable(what) else what}")
        time.sleep(interval)


def is_refused(host: str, port: int) -> bool:
    """True when a TCP connect is refused (nothing listening)."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


@dataclass
class Server:
    """A running `switchboard serve` process and where to reach it."""

    process: subprocess.Popen
    host: str
    http_port: int
    https_port: int | None
    data_dir: Path
    log_path: Path
    owns_data_dir: bool = True
    stopped_with: int | None = field(default=None)

    @property
    def http_url(self) -> str:
        return f"http://{self.host}:{self.http_port}"

    @property
    def https_url(self) -> str | None:
        return f"https://{self.host}:{self.https_port}" if self.https_port else None

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.http_port}"

    @property
    def wss_url(self) -> str | None:
        return f"wss://{self.host}:{self.https_port}" if self.https_port else None

    @property
    def ca_file(self) -> Path:
        """The development CA the server generated for HTTPS (trust it in clients)."""
        return self.data_dir / "tls" / "ca.pem"

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        """Sends `sig` and waits for exit; returns the exit status (negative: killed by a signal)."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError(f"switchboard did not exit within {timeout}s of signal {sig}\n{self.log()[-4000:]}")
        self.stopped_with = self.process.returncode
        return self.process.returncode

    def kill(self) -> int:
        """kill -9: no chance to clean up (for durability tests)."""
        return self.stop(signal.SIGKILL)

    def cleanup(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.owns_data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def port_taken(error) -> int | None:
    """The port a server exited for not being able to bind (EADDRINUSE: taken after it was found free), if that is
    why: the listeners' words (`bind 127.0.0.1:8080: Address already in use`) or SIP's (`bind tcp 127.0.0.1:5060", 98)`)."""
    match = re.search(r'bind (?:tcp |tls |udp )?\S*?:(\d+)(?:: Address already in use|", 98\))', str(error))
    return int(match.group(1)) if match else None


def start_server(extra_args=(), *, https: bool = True, data_dir: str | Path | None = None, env: dict | None = None,
                 host: str = "127.0.0.1", timeout: float = 20.0, max_open_files: int | None = None,
                 dev: bool = False, http_port: int | None = None, run_as: int | None = None,
                 hosts: dict[str, list[str]] | None = None) -> Server:
    """Starts `switchboard serve` on free ports (HTTP, HTTPS, media) with its own data directory and waits for /health.

    `data_dir` lets a test restart a server over the same data (then the caller owns the directory), and
    `http_port` on the same port, so that clients of the first one come back to it.
    `max_open_files` runs the server as under `ulimit -n N` (soft and hard limit).
    `dev` turns on development mode (`--dev`): the demo app servers and the /test/media routes.
    `run_as` (a uid, when the tests run as root) runs the server as that user, without root's privileges.
    `hosts` (name -> addresses, in order; needs root) runs the server in a mount namespace of its own whose
    /etc/hosts holds only those names and localhost and whose nsswitch.conf resolves hosts from that file
    alone: the server resolves real names, and a name not listed fails at once without a DNS query.

    A port found free can be taken before the server binds it (another test's outgoing connection gets it as
    its local port): when the server says so (EADDRINUSE) on ports this function chose, it tries new ones.
    """
    for attempt in range(3):
        try:
            return _start_once(extra_args, https=https, data_dir=data_dir, env=env, host=host, timeout=timeout,
                               max_open_files=max_open_files, dev=dev, http_port=http_port, run_as=run_as, hosts=hosts)
        except RuntimeError as e:
            # Only a port this function chose is chosen again; one the caller gave is the caller's to change.
            taken = port_taken(e)
            if attempt == 2 or taken is None or taken == http_port or str(taken) in map(str, extra_args):
                raise
    raise AssertionError("unreachable")


def _start_once(extra_args, *, https, data_dir, env, host, timeout, max_open_files, dev, http_port, run_as, hosts) -> Server:
    owns = data_dir is None
    data = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="switchboard-interop-"))
    data.mkdir(parents=True, exist_ok=True)
    http_port = http_port or free_port(host)
    https_port = free_port(host) if https else None
    args = [str(server_binary()), "serve", "--listen", f"{host}:{http_port}", "--data", str(data),
            "--web", str(REPO / "Web")]
    if https_port:
        args += ["--https", f"{host}:{https_port}"]
    args += list(extra_args)
    if dev:
        args.append("--dev")
    # A free media port too, unless the test picks one: two servers cannot share a UDP port.
    if "--media-port" not in args:
        args += ["--media-port", "0"]
    # SIP stays off unless the test asks for it: servers started side by side would contend for 5060.
    if "--sip-port" not in args:
        args += ["--sip-port", "0"]
    log_path = data / "server.log"
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SWITCHBOARD_")}
    full_env.update(env or {})
    if run_as is not None:
        os.chmod(data, 0o777)
    if hosts is not None:
        (data / "hosts").write_text("".join(f"{a} {name}\n" for name, addresses in hosts.items() for a in addresses)
                                    + "127.0.0.1 localhost\n")
        (data / "nsswitch.conf").write_text("hosts: files\n")
    with open(log_path, "ab") as log:
        def preexec():
            if hosts is not None:
                _private_name_files(data / "hosts", data / "nsswitch.conf")
            if max_open_files:
                import resource
                resource.setrlimit(resource.RLIMIT_NOFILE, (max_open_files, max_open_files))
            if run_as is not None:
                os.setgroups([])
                os.setgid(run_as)
                os.setuid(run_as)
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=str(REPO), env=full_env,
                                   preexec_fn=preexec if max_open_files or run_as is not None or hosts is not None else None)
    server = Server(process, host, http_port, https_port, data, log_path, owns_data_dir=owns)

    def healthy():
        if process.poll() is not None:
            raise RuntimeError(f"switchboard exited with {process.returncode}:\n{server.log()[-4000:]}")
        try:
            return requests.get(server.http_url + "/health", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    try:
        wait_until(healthy, timeout=timeout, what="switchboard /health")
        if https_port:
            wait_until(lambda: server.ca_file.exists(), timeout=5, what="development CA")
    except BaseException:
        server.cleanup()
        raise
    return server


def _private_name_files(hosts: Path, nsswitch: Path):
    """In the child before exec: a private mount namespace with `hosts` over /etc/hosts and `nsswitch` over
    /etc/nsswitch.conf (bind mounts the rest of the machine never sees)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    clone_newns, ms_bind, ms_rec, ms_private = 0x20000, 0x1000, 0x4000, 1 << 18
    if libc.unshare(clone_newns) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    steps = [(None, b"/", ms_rec | ms_private), (str(hosts).encode(), b"/etc/hosts", ms_bind),
             (str(nsswitch).encode(), b"/etc/nsswitch.conf", ms_bind)]
    for source, target, flags in steps:
        if libc.mount(source, target, None, flags, None) != 0:
            raise OSError(ctypes.get_errno(), f"mount {target.decode()}")


def client(server, *args, seconds=6):
    """`switchboard client ARGS --json` against `server`, leaving after `seconds`; read it with `client_lines`."""
    return subprocess.Popen([str(server_binary()), "client", *args, "--server", server.http_url, "--seconds", str(seconds), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def client_lines(proc, timeout: float = 60) -> list[dict]:
    """The JSON lines a `client` printed, once it has exited successfully."""
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def artifact_path(name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / name


@contextlib.contextmanager
def chromium(headless: bool = True, extra_args=()):
    """Headless Debian Chromium driven by Playwright, with a fake camera and microphone.

    Yields a Browser; pages opened from `new_page(browser)` ignore certificate errors so the development
    CA need not be installed.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=headless,
                                    args=CHROMIUM_ARGS + list(extra_args))
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser, **context_options):
    context_options.setdefault("ignore_https_errors", True)
    context = browser.new_context(**context_options)
    page = context.new_page()
    page.set_default_timeout(15_000)
    return page


def screenshot(page, name: str) -> Path:
    """Saves a PNG under Tests/interop/artifacts/ and returns its path."""
    path = artifact_path(name if name.endswith(".png") else name + ".png")
    page.screenshot(path=str(path), full_page=True)
    return path


def run_async(coro, timeout: float):
    """Runs a coroutine to completion on a fresh event loop in its own thread.

    The session's Playwright browser keeps an asyncio loop on the main thread, where asyncio.run()
    refuses to start; a worker thread has no loop, so aiortc and websockets scenarios run there.
    """
    import asyncio
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, asyncio.wait_for(coro, timeout)).result()


def serve_websocket(handler):
    """A WebSocket server (the `websockets` package) for `handler(ws)` on a free loopback port, its event loop in a
    daemon thread: (the loop, the server, its port). Close it with `loop.call_soon_threadsafe(server.close)`."""
    import asyncio
    import websockets
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    made = {}

    def run():
        asyncio.set_event_loop(loop)

        async def main():
            made["server"] = await websockets.serve(handler, "127.0.0.1", 0)
            ready.set()
            await asyncio.Future()

        loop.run_until_complete(main())

    threading.Thread(target=run, daemon=True).start()
    assert ready.wait(10), "the WebSocket server did not start"
    return loop, made["server"], made["server"].sockets[0].getsockname()[1]


def serve_http(handler) -> tuple[ThreadingHTTPServer, str]:
    """An HTTP server for `handler` (a BaseHTTPRequestHandler class) on a free loopback port, serving from a
    daemon thread: the server and its base URL."""
    http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    return http, f"http://127.0.0.1:{http.server_address[1]}"
