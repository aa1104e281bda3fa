"""The Foundation against real clients: curl, requests, websockets, headless Chromium, and process signals."""
import json
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from rig import artifact_path, is_refused, new_page, screenshot, start_server, wait_until

ECHO = "/v1/diagnostics/echo"


def test_curl_health(server):
    out = subprocess.run(["curl", "-sS", "-i", server.http_url + "/health"], capture_output=True, timeout=10)
    assert out.returncode == 0, out.stderr
    head, body = out.stdout.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200")
    assert b"content-type: application/json" in head.lower()
    doc = json.loads(body)
    assert doc["status"] == "ok" and doc["version"]


def test_curl_https_with_the_development_ca(server):
    out = subprocess.run(["curl", "-sS", "--cacert", str(server.ca_file), server.https_url + "/health"],
                         capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["status"] == "ok"


def test_requests_session_keeps_one_connection(server):
    with requests.Session() as s:
        ports = set()
        for _ in range(20):
            r = s.get(server.http_url + "/health", stream=True, timeout=5)
            ports.add(r.raw._connection.sock.getsockname()[1])
            assert r.json()["status"] == "ok"
            r.close()
        assert len(ports) == 1


def test_requests_https_verifies_against_the_ca_bundle(server):
    r = requests.get(server.https_url + "/health", verify=str(server.ca_file), timeout=5)
    assert r.status_code == 200
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(server.https_url + "/health", timeout=5)  # system CAs do not know ours


def test_errors_use_one_json_shape(server):
    r = requests.get(server.http_url + "/no/such/route", timeout=5)
    assert r.status_code == 404
    body = r.json()
    assert {"type", "title", "detail"} <= body.keys()
    r = requests.post(server.http_url + "/health", data=b"x", timeout=5)
    assert r.status_code == 405
    assert "GET" in r.headers["Allow"]
    assert r.json()["title"] == "Method Not Allowed"


def test_metrics_are_prometheus_text(server):
    requests.get(server.http_url + "/health", timeout=5)
    r = requests.get(server.http_url + "/metrics", timeout=5)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/plain")
    assert 'switchboard_http_requests_total{method="GET",route="/health",status="200"}' in r.text
    assert "switchboard_http_request_duration_seconds_bucket" in r.text
    assert "switchboard_open_connections" in r.text
    assert "switchboard_websockets" in r.text


def test_raw_pipelining(server):
    with socket.create_connection((server.host, server.http_port), timeout=5) as s:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n" * 3)
        data = b""
        deadline = time.monotonic() + 5
        while data.count(b"HTTP/1.1 200") < 3 and time.monotonic() < deadline:
            data += s.recv(65536)
        assert data.count(b"HTTP/1.1 200") == 3


def test_websockets_echo_text_and_binary(server):
    with connect(server.ws_url + ECHO, max_size=None) as ws:
        ws.send("hello ✓")
        assert ws.recv(timeout=5) == "hello ✓"
        ws.send(bytes(range(256)))
        assert ws.recv(timeout=5) == bytes(range(256))
        exactly_limit = b"\x01" * (1 << 20)
        ws.send(exactly_limit)
        assert ws.recv(timeout=10) == exactly_limit
        ws.ping(b"p").wait(timeout=5)


def test_websockets_over_tls(server):
    with connect(server.wss_url + ECHO, ssl=server.ssl_context()) as ws:
        ws.send("secure")
        assert ws.recv(timeout=5) == "secure"


def test_websocket_message_over_1_mib_is_closed_with_1009(server):
    with connect(server.ws_url + ECHO, max_size=None) as ws:
        ws.send(b"\x00" * ((1 << 20) + 1))
        with pytest.raises(ConnectionClosed) as err:
            ws.recv(timeout=10)
        assert err.value.rcvd is not None and err.value.rcvd.code == 1009


def test_websocket_close_handshake(server):
    with connect(server.ws_url + ECHO) as ws:
        ws.close(code=4000, reason="done")
        assert ws.close_code == 4000
        assert ws.close_reason == ""  # the server echoes the code (RFC 6455 section 5.5.1)


def test_chromium_opens_a_websocket(server, browser):
    page = new_page(browser)
    page.goto(server.http_url + "/")
    result = page.evaluate("""(url) => new Promise((resolve, reject) => {
        const ws = new WebSocket(url);
        ws.binaryType = 'arraybuffer';
        const got = [];
        ws.onopen = () => { ws.send('from chromium'); ws.send(new Uint8Array([1, 2, 3])); };
        ws.onmessage = (e) => {
            got.push(typeof e.data === 'string' ? e.data : Array.from(new Uint8Array(e.data)));
            if (got.length === 2) ws.close(1000, 'bye');
        };
        ws.onclose = (e) => resolve({got, code: e.code, clean: e.wasClean});
        ws.onerror = () => reject(new Error('websocket error'));
        setTimeout(() => reject(new Error('timeout')), 10000);
    })""", server.ws_url + ECHO)
    page.evaluate("(r) => document.body.insertAdjacentHTML('beforeend', '<pre>' + JSON.stringify(r) + '</pre>')", result)
    screenshot(page, "foundation-chromium-websocket")
    assert result["got"] == ["from chromium", [1, 2, 3]]
    assert result["code"] == 1000 and result["clean"]


def test_chromium_wss_with_the_development_ca(server, browser):
    page = new_page(browser)
    page.goto(server.https_url + "/")
    echoed = page.evaluate("""(url) => new Promise((resolve, reject) => {
        const ws = new WebSocket(url);
        ws.onopen = () => ws.send('tls');
        ws.onmessage = (e) => { resolve(e.data); ws.close(); };
        ws.onerror = () => reject(new Error('websocket error'));
    })""", server.wss_url + ECHO)
    assert echoed == "tls"


def read_response(sock, timeout=10.0) -> bytes:
    """Reads one Content-Length response."""
    sock.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def test_graceful_shutdown_finishes_the_request_in_flight():
    s = start_server(https=False)
    try:
        ws = connect(s.ws_url + ECHO).__enter__()
        sock = socket.create_connection((s.host, s.http_port), timeout=5)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345")
        time.sleep(0.1)
        s.process.send_signal(signal.SIGTERM)
        wait_until(lambda: is_refused(s.host, s.http_port), timeout=5, what="listener closed")
        with pytest.raises(ConnectionClosed) as err:
            ws.recv(timeout=5)
        assert err.value.rcvd is not None and err.value.rcvd.code == 1001
        sock.sendall(b"67890")
        response = read_response(sock)
        assert response.startswith(b"HTTP/1.1 200"), response
        assert b"connection: close" in response.lower()
        assert json.loads(response.split(b"\r\n\r\n", 1)[1])["status"] == "ok"
        assert sock.recv(1) == b""  # closed after the response
        sock.close()
        assert s.process.wait(timeout=10) == 0
    finally:
        log = s.log()
        s.cleanup()
    assert "stopped" in log


def threads(pid: int):
    """(name, /proc status text) of each of the process's threads still there when read."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            yield (task / "comm").read_text().strip(), (task / "status").read_text()
        except FileNotFoundError:
            continue  # a thread that ended meanwhile


def event_loop_threads(pid: int) -> int:
    """The process's event-loop threads (HTTP, media workers, SIP): one per core or so, each waking once a second."""
    return sum(name.startswith(("http-", "media-", "sip")) for name, _ in threads(pid))


def context_switches(pid: int) -> int:
    """Every time one of the process's threads went to sleep or was preempted, so far."""
    return sum(int(line.split()[1]) for _, status in threads(pid) for line in status.splitlines()
               if "ctxt_switches:" in line)


def test_an_idle_server_sleeps():
    """With no room, call or connection the server's threads wait instead of polling: no media tick without a
    room, no timer looking for SIGTERM, no realtime expiry check without a socket (a laptop's battery and a
    cloud VM's CPU credits notice)."""
    s = start_server(https=False)
    try:
        time.sleep(1.0)  # start-up work done
        before = context_switches(s.pid)
        time.sleep(5.0)
        rate = (context_switches(s.pid) - before) / 5.0
        # What is left (about 11 a second on 2 cores): the conversation sweeper (1 Hz, a few thread switches on the
        # Swift executor) and each event loop's 1 s longest wait. A 50 Hz media tick per worker, a 20 Hz signal
        # poll or the realtime gateway's 4 Hz expiry check with no socket to watch would each be over.
        allowed = 15 + 1.2 * event_loop_threads(s.pid)
        assert rate < allowed, f"{rate:.0f} context switches a second while idle (allowed {allowed:.0f})"
        assert s.alive()
        # The signal still ends it at once, cleanly.
        s.process.send_signal(signal.SIGTERM)
        assert s.process.wait(timeout=10) == 0
    finally:
        log = s.log()
        s.cleanup()
    assert "stopped" in log


def test_a_busy_media_port_is_a_clear_error_at_start():
    """Two servers never split one media port: the second one says so and exits."""
    busy = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    busy.bind(("127.0.0.1", 0))
    port = busy.getsockname()[1]
    try:
        with pytest.raises(RuntimeError) as exited:
            start_server(["--media-port", str(port)], https=False)
    finally:
        busy.close()
    message = str(exited.value)
    assert "exited with 1" in message, message
    assert f"media port {port}" in message and "is in use" in message, message
