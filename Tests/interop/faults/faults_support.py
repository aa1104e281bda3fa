"""Shared pieces of the fault matrix: a scriptable webhook receiver, a REST writer that records what was
acknowledged, and process gauges read from /proc."""
from __future__ import annotations

import http.server
import json
import os
import threading
import time
import uuid

import requests

from conv_support import App, Server  # noqa: F401 (re-exported)


def names(prefix, n):
    tag = uuid.uuid4().hex[:6]
    return [f"{prefix}-{tag}-{i}" for i in range(n)]


class Receiver:
    """A loopback rtc.event_url: answers `status` after `delay` seconds and records every attempt."""

    def __init__(self, status=200, delay=0.0):
        self.status, self.delay = status, delay
        self.attempts = []  # (monotonic time, event json)
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.lock:
                    receiver.attempts.append((time.monotonic(), json.loads(body)))
                    receiver.in_flight += 1
                    receiver.max_in_flight = max(receiver.max_in_flight, receiver.in_flight)
                try:
                    if receiver.delay:
                        time.sleep(receiver.delay)
                    self.send_response(receiver.status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass  # the server gave up waiting and closed
                finally:
                    with receiver.lock:
                        receiver.in_flight -= 1

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/events"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def count(self, event_id=None, conversation=None):
        with self.lock:
            return sum(1 for _, e in self.attempts
                       if (event_id is None or e["id"] == event_id) and (conversation is None or e["conversation_id"] == conversation))

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def webhook_capabilities(url):
    return {"rtc": {"webhooks": {"event_url": {"address": url, "http_method": "POST"}}, "signed_callbacks": False}}


def timed_post(app, path, sub, body):
    """(status, seconds) of one REST write."""
    t0 = time.monotonic()
    r = app.call("POST", path, sub=sub, json=body, timeout=30)
    return r, time.monotonic() - t0


class Writers:
    """Threads posting text events to one conversation as fast as the server answers. Every write the server
    acknowledged (2xx with an id) is recorded with its unique text; failures are recorded too."""

    def __init__(self, app, cid, users, threads=4):
        self.app, self.cid, self.users = app, cid, users
        self.acked = {}  # text -> event id
        self.failures = []  # (status or exception text, body)
        self.lock = threading.Lock()
        self.stop_flag = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(threads)]
        self.tokens = {u: app.token(u) for u in users}

    def _run(self, i):
        session = requests.Session()
        user = self.users[i % len(self.users)]
        headers = {"Authorization": "Bearer " + self.tokens[user]}
        n = 0
        while not self.stop_flag.is_set():
            n += 1
            text = f"w{i}-{n}-{uuid.uuid4().hex[:6]}"
            try:
                r = session.post(f"{self.app.server.base}/v1/conversations/{self.cid}/events", headers=headers,
                                 json={"type": "text", "body": {"text": text}}, timeout=10)
            except requests.RequestException as e:
                with self.lock:
                    self.failures.append((type(e).__name__, None))
                time.sleep(0.05)
                continue
            with self.lock:
                if 200 <= r.status_code < 300:
                    self.acked[text] = r.json()["id"]
                else:
                    self.failures.append((r.status_code, r.text))

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def stop(self):
        self.stop_flag.set()
        for t in self.threads:
            t.join(15)


def stored_texts(app, cid, sub):
    """Every text event stored in the conversation: {text: id}."""
    out = {}
    for page in app.walk(f"/v1/conversations/{cid}/events", sub=sub, page_size=100):
        for e in page["_embedded"]["events"]:
            if e["type"] == "text":
                out[e["body"]["text"]] = e["id"]
    return out


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def descriptor_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def thread_count(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0
