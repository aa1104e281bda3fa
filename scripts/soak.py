"""Soak test: a mixed workload against one `switchboard serve --dev` for N minutes, sampled every 10 s.

Run through scripts/soak (which picks the binary and the venv). Workload, all at once:
- realtime churn: 200 clients, each its own user, connect, log in, join a conversation, post messages and
  read each one back over the socket, leave and disconnect, pause, over and over;
- audio rooms through the SFU: `switchboard load` runs back-to-back rounds of 20 rooms (publishers and
  subscribers with real Opus), so media objects are created and torn down all the time;
- video sessions: `switchboard client video join` pairs, one publishing a VP8 recording, one subscribing,
  in a new session each time (session and tokens from the development `/video/api` helpers);
- voice calls: `POST /v1/calls` to the development test phone (15550100 on the `dev-loopback` trunk); the
  answer URL (served here) connects a second leg to the same phone, so every call is two SIP/RTP legs
  through the server's own edge; a few seconds of talk, then `PUT /v1/calls/{uuid}` hangup;
- REST: users, conversations and event pages created, read and deleted.
Every 10 s one CSV row: RSS, descriptors, threads, the server's gauges (sockets, realtime sessions, media
peers/transports, phone lines, SIP calls and transactions), the SFU's object counts (routers, transports,
producers, consumers), per-window counts (requests, calls, video sessions, phone RTP packets), errors and
p50/p99 latencies. A PNG plots them.

Pass rule: RSS after the run is less than 5 % above RSS at the end of warm-up; every object count and
gauge is back to its idle baseline once the load stops; no request, call or session failed.
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jwt
import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "Tests" / "interop"))
from conv_support import CLIENT_ACL  # noqa: E402
from rig import free_port, free_sip_port  # noqa: E402

INTERVAL = 10.0
# How long any one step may take before it counts as an error. Generous: the machine is shared with builds
# (load averages of 10-30 on 2 cores), so a starved server is slow; slowness shows in the latency columns.
TIMEOUT = 30
TEST_PHONE = "15550100"
VIDEO_FILE = REPO / "Tests" / "Fixtures" / "media" / "vp8-320x240.ivf"
# What must come back to its idle value once the load stops (CSV column names).
BASELINE_KEYS = ("transports", "producers", "consumers", "routers", "realtime_sessions", "websockets",
                 "room_media_peers", "room_media_transports", "phone_lines", "sip_calls", "sip_transactions")


class Stats:
    """Latencies, counts and errors per sampling window, shared by every workload thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.latencies = {}  # kind -> [seconds]
        self.counts = {}  # kind -> n in this window
        self.errors = []  # (time, kind, detail)
        self.total = 0
        self.totals = {}  # kind -> n over the run

    def record(self, kind, seconds):
        with self.lock:
            self.latencies.setdefault(kind, []).append(seconds)
            self.total += 1

    def count(self, kind, n=1):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + n
            self.totals[kind] = self.totals.get(kind, 0) + n

    def error(self, kind, detail):
        with self.lock:
            self.errors.append((round(time.time(), 1), kind, str(detail)[:300]))
            print(f"  error {kind}: {str(detail)[:300]}", file=sys.stderr, flush=True)

    def take(self):
        with self.lock:
            window, self.latencies = self.latencies, {}
            counts, self.counts = self.counts, {}
            return window, counts


def pct(values, p):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


class VoiceHooks:
    """The soak's answer and event URLs: the answer NCCO connects the call to the test phone; events are
    kept per conversation until the call that made them has read them."""

    def __init__(self):
        self.lock = threading.Condition()
        self.events = {}  # conversation_uuid -> (first seen, [event])
        self.pruned = time.monotonic()
        self.answers = 0
        hooks = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _reply(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                reply = b""
                if self.path.startswith("/answer"):
                    reply = json.dumps([{"action": "connect", "endpoint": [{"type": "phone", "number": TEST_PHONE}]}]).encode()
                    with hooks.lock:
                        hooks.answers += 1
                elif body:
                    event = json.loads(body)
                    with hooks.lock:
                        # A call's first events can arrive before POST /v1/calls has answered: keep them all,
                        # dropping conversations nobody read for 5 minutes.
                        now = time.monotonic()
                        if now - hooks.pruned > 60:
                            hooks.pruned = now
                            for c in [c for c, (at, _) in hooks.events.items() if now - at > 300]:
                                del hooks.events[c]
                        conv = event.get("conversation_uuid")
                        if conv:
                            hooks.events.setdefault(conv, (now, []))[1].append(event)
                            hooks.lock.notify_all()
                self.send_response(200 if reply else 204)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            do_GET = do_POST = _reply

            def log_message(self, *a):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"

    def forget(self, conversation):
        with self.lock:
            self.events.pop(conversation, None)

    def wait(self, conversation, predicate, timeout):
        """Waits until predicate(legs) holds; legs: {uuid: [status, ...]}. Returns the legs (or None on timeout)."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                legs = {}
                for e in self.events.get(conversation, (0, []))[1]:
                    if "status" in e and "uuid" in e:
                        legs.setdefault(e["uuid"], []).append(e["status"])
                if predicate(legs):
                    return legs
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.lock.wait(left)


class Target:
    """The server under test plus an application to act in."""

    def __init__(self, binary, data, hooks: VoiceHooks):
        self.port = free_port()
        self.sip_port = free_sip_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join(data, "server.log"), "ab")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SWITCHBOARD_")}
        self.proc = subprocess.Popen(
            [binary, "serve", "--dev", "--listen", f"127.0.0.1:{self.port}", "--data", data, "--media-port", "0",
             "--sip-port", str(self.sip_port), "--web", str(REPO / "Web"), "--log-level", "warn"],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(self.base + "/health", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"server did not start; see {data}/server.log")
            time.sleep(0.1)
        account = json.load(open(os.path.join(data, "account.json")))
        auth = (account["api_key"], account["api_secret"])
        webhooks = {"answer_url": {"address": hooks.url + "/answer", "http_method": "POST"},
                    "event_url": {"address": hooks.url + "/event", "http_method": "POST"}}
        r = requests.post(self.base + "/v2/applications", auth=auth, timeout=TIMEOUT,
                          json={"name": "soak", "capabilities": {"voice": {"webhooks": webhooks}}})
        r.raise_for_status()
        self.app_id = r.json()["id"]
        from cryptography.hazmat.primitives.serialization import load_pem_private_key
        self.key = load_pem_private_key(r.json()["keys"]["private_key"].encode(), password=None)

    def token(self, sub=None):
        now = int(time.time())
        claims = {"application_id": self.app_id, "iat": now, "jti": str(uuid.uuid4()), "exp": now + 3600}
        if sub:
            claims["sub"], claims["acl"] = sub, CLIENT_ACL
        return jwt.encode(claims, self.key, algorithm="RS256")

    def metrics(self):
        out = {}
        for line in requests.get(self.base + "/metrics", timeout=5).text.splitlines():
            if line.startswith("switchboard_") and " " in line:
                name, value = line.rsplit(" ", 1)
                try:
                    out[name] = float(value)
                except ValueError:
                    pass
        return out

    def media_counts(self):
        workers = requests.get(self.base + "/test/media/stats", timeout=5).json()
        return {k: sum(w.get(k, 0) for w in workers) for k in ("routers", "transports", "producers", "consumers")}


def proc_gauges(pid, last):
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    # CPU the server used over the window (cores), beside the machine's load: loaded, not saturated.
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu_s = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
    now = time.monotonic()
    cores = (cpu_s - last["cpu_s"]) / (now - last["cpu_at"]) if "cpu_s" in last else 0.0
    last["cpu_s"], last["cpu_at"] = cpu_s, now
    return {"rss_kib": int(fields["VmRSS"].split()[0]), "threads": int(fields["Threads"]),
            "fds": len(os.listdir(f"/proc/{pid}/fd")), "server_cpu_cores": round(cores, 3),
            "loadavg_1m": os.getloadavg()[0]}


# ---------- workloads ----------

def rest_worker(t: Target, stats: Stats, stop: threading.Event, index: int, pause: float):
    """Creates users and conversations, posts events and reads pages, as an application server would."""
    session = requests.Session()
    while not stop.is_set():
        admin = {"Authorization": "Bearer " + t.token()}  # tokens live an hour: one per round outlives no run
        name = f"rest-{index}-{uuid.uuid4().hex[:8]}"
        try:
            for kind, method, path, body, expect in (
                ("user.create", "POST", "/v1/users", {"name": name}, 201),
                ("conversation.create", "POST", "/v1/conversations", {"name": "c-" + name}, 201),
            ):
                t0 = time.monotonic()
                r = session.request(method, t.base + path, headers=admin, json=body, timeout=TIMEOUT)
                stats.record(kind, time.monotonic() - t0)
                if r.status_code != expect:
                    stats.error(kind, f"{r.status_code} {r.text}")
                    raise RuntimeError
                if kind == "user.create":
                    uid = r.json()["id"]
                if kind == "conversation.create":
                    cid = r.json()["id"]
            user = {"Authorization": "Bearer " + t.token(name)}
            r = session.post(f"{t.base}/v1/conversations/{cid}/members", headers=user,
                             json={"state": "joined", "channel": {"type": "app"}}, timeout=TIMEOUT)
            if r.status_code not in (200, 201):
                stats.error("member.join", f"{r.status_code} {r.text}")
                continue
            for i in range(5):
                t0 = time.monotonic()
                r = session.post(f"{t.base}/v1/conversations/{cid}/events", headers=user,
                                 json={"type": "text", "body": {"text": f"m{i}"}}, timeout=TIMEOUT)
                stats.record("event.create", time.monotonic() - t0)
                if r.status_code != 201:
                    stats.error("event.create", f"{r.status_code} {r.text}")
            t0 = time.monotonic()
            r = session.get(f"{t.base}/v1/conversations/{cid}/events", headers=user, params={"page_size": 100}, timeout=TIMEOUT)
            stats.record("event.list", time.monotonic() - t0)
            texts = [e for e in r.json().get("_embedded", {}).get("events", []) if e.get("type") == "text"] if r.status_code == 200 else []
            if len(texts) != 5:
                stats.error("event.list", f"{r.status_code} {r.text[:200]}")
            for path, kind in ((f"/v1/conversations/{cid}", "conversation.delete"), (f"/v1/users/{uid}", "user.delete")):
                t0 = time.monotonic()
                r = session.delete(t.base + path, headers=admin, timeout=TIMEOUT)
                stats.record(kind, time.monotonic() - t0)
                if r.status_code not in (200, 204):
                    stats.error(kind, f"{r.status_code} {r.text}")
        except RuntimeError:
            time.sleep(0.5)
        except requests.RequestException as e:
            stats.error("rest", e)
            time.sleep(0.5)
        stop.wait(pause)


async def realtime_client(t: Target, stats: Stats, stop: threading.Event, index: int, pool, hold: float):
    """One user, over and over: new conversation, connect, log in, join, post messages and read each back over
    the socket, leave, disconnect, delete the conversation, pause."""
    import websockets

    loop = asyncio.get_running_loop()
    session = requests.Session()
    admin = {"Authorization": "Bearer " + t.token()}
    name = f"rt-{index}-{uuid.uuid4().hex[:6]}"

    async def rest(kind, method, path, headers, expect, body=None):
        t0 = time.monotonic()
        r = await loop.run_in_executor(pool, lambda: session.request(method, t.base + path, headers=headers, json=body, timeout=TIMEOUT))
        stats.record(kind, time.monotonic() - t0)
        if r.status_code not in expect:
            stats.error(kind, f"{r.status_code} {r.text[:200]}")
            raise RuntimeError(kind)
        return r

    # Clients start spread over the first few seconds, not all in one burst.
    await asyncio.sleep(random.uniform(0, hold))
    try:
        await rest("user.create", "POST", "/v1/users", admin, (201,), {"name": name})
    except (RuntimeError, requests.RequestException) as e:
        stats.error("rt.user", e)
        return
    while not stop.is_set():
        # Tokens live an hour: new ones each cycle, so a run of any length keeps working.
        admin = {"Authorization": "Bearer " + t.token()}
        token = t.token(name)
        user = {"Authorization": "Bearer " + token}
        cid = None
        try:
            r = await rest("conversation.create", "POST", "/v1/conversations", admin, (201,), {"name": f"rt-{name}-{uuid.uuid4().hex[:6]}"})
            cid = r.json()["id"]
            t0 = time.monotonic()
            async with websockets.connect(f"ws://127.0.0.1:{t.port}/v1/realtime", max_size=None, open_timeout=TIMEOUT) as ws:
                await ws.send(json.dumps({"type": "session:login", "tid": "1", "body": {"token": token}}))
                reply = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
                stats.record("rt.login", time.monotonic() - t0)
                if reply.get("type") != "session:success":
                    stats.error("rt.login", reply)
                    raise RuntimeError("login")
                await rest("member.join", "POST", f"/v1/conversations/{cid}/members", user, (200, 201),
                           {"state": "joined", "channel": {"type": "app"}})
                for i in range(3):
                    await asyncio.sleep(random.uniform(0.5, 1.5) * hold / 4)
                    t0 = time.monotonic()
                    text = f"{name}-{i}-{uuid.uuid4().hex[:4]}"
                    await rest("event.create", "POST", f"/v1/conversations/{cid}/events", user, (201,),
                               {"type": "text", "body": {"text": text}})
                    # The event comes back over the socket: post-to-push latency.
                    while True:
                        m = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
                        if m.get("type") == "text" and m.get("body", {}).get("text") == text:
                            break
                    stats.record("rt.event_push", time.monotonic() - t0)
                await rest("member.leave", "PATCH", f"/v1/conversations/{cid}/members/me", user, (200,), {"state": "left"})
            stats.count("rt.cycles")
        except RuntimeError:
            pass
        except (asyncio.TimeoutError, OSError, websockets.WebSocketException, requests.RequestException, KeyError) as e:
            stats.error("realtime", f"{type(e).__name__}: {e}")
        if cid:
            try:
                await rest("conversation.delete", "DELETE", f"/v1/conversations/{cid}", admin, (200, 204))
            except (RuntimeError, requests.RequestException) as e:
                stats.error("conversation.delete", e)
        await asyncio.sleep(random.uniform(0.5, 1.5) * hold / 4)


def realtime_worker(t, stats, stop, clients, hold):
    async def main():
        # Enough threads that REST calls of 200 clients do not queue behind each other in the client.
        with ThreadPoolExecutor(max_workers=48) as pool:
            await asyncio.gather(*(realtime_client(t, stats, stop, i, pool, hold) for i in range(clients)))
    asyncio.run(main())


def rooms_worker(t: Target, binary: str, stats: Stats, stop: threading.Event, rooms: int, subscribers: int):
    """Back-to-back `switchboard load` rounds: every round builds its rooms, sends audio and tears down."""
    while not stop.is_set():
        t0 = time.monotonic()
        out = subprocess.run([binary, "load", "--dev-routes", "--server", t.base, "--rooms", str(rooms), "--publishers", "2",
                              "--subscribers", str(subscribers), "--duration", "20", "--warmup", "2", "--json"],
                             capture_output=True, text=True, stdin=subprocess.DEVNULL)
        try:
            result = json.loads(out.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            stats.error("rooms", f"load exited {out.returncode}: {out.stderr[-300:]}")
            stop.wait(2)
            continue
        stats.record("rooms.round", time.monotonic() - t0)
        stats.count("rooms.rounds")
        if result.get("loss_percent", 100) > 5:
            stats.error("rooms", f"audio loss {result.get('loss_percent')}%")
        if "latency_ms_p99" in result:
            stats.record("rooms.rtp_latency", result["latency_ms_p99"] / 1000)


def video_worker(t: Target, binary: str, stats: Stats, stop: threading.Event, index: int, seconds: int):
    """A new video session each time: a viewer joins, a publisher joins and sends a VP8 recording, both leave.
    The viewer must see the stream created and receive its frames."""
    session = requests.Session()
    tmp = Path(tempfile.mkdtemp(prefix=f"soak-video-{index}-"))
    time.sleep(index * 2.0)
    while not stop.is_set():
        try:
            t0 = time.monotonic()
            r = session.post(t.base + "/video/api/session", json={}, timeout=TIMEOUT)
            if r.status_code != 200:
                stats.error("video.session", f"{r.status_code} {r.text[:200]}")
                stop.wait(2)
                continue
            sid = r.json()["sessionId"]
            tokens = []
            for who in ("viewer", "publisher"):
                r = session.post(t.base + "/video/api/token", json={"sessionId": sid, "role": "publisher", "data": f"name={who}"}, timeout=TIMEOUT)
                if r.status_code != 200:
                    stats.error("video.token", f"{r.status_code} {r.text[:200]}")
                    raise RuntimeError
                tokens.append(r.json()["token"])
            stats.record("video.setup", time.monotonic() - t0)
        except RuntimeError:
            stop.wait(2)
            continue
        except requests.RequestException as e:
            stats.error("video", e)
            stop.wait(2)
            continue
        base = [binary, "client", "video", "join", sid, "--server", t.base, "--json"]
        files = {}
        procs = {}
        for who, tok, extra, secs in (("viewer", tokens[0], [], seconds + 3),
                                      ("publisher", tokens[1], ["--publish", str(VIDEO_FILE)], seconds)):
            files[who] = (open(tmp / f"{who}.out", "w+"), open(tmp / f"{who}.err", "w+"))
            procs[who] = subprocess.Popen(base + ["--token", tok, "--seconds", str(secs), *extra],
                                          stdout=files[who][0], stderr=files[who][1], stdin=subprocess.DEVNULL)
            if who == "viewer":
                time.sleep(1.0)
        lines = {}
        for who, p in procs.items():
            try:
                code = p.wait(seconds + 60)
            except subprocess.TimeoutExpired:
                p.kill()
                code = "timeout"
            out, err = files[who]
            out.seek(0)
            err.seek(0)
            lines[who] = [json.loads(l) for l in out.read().splitlines() if l.startswith("{")]
            if code != 0:
                stats.error(f"video.{who}", f"exit {code}: {err.read()[-300:]}")
            out.close()
            err.close()
        published = next((l["published"] for l in lines.get("publisher", []) if "published" in l), None)
        received = next((l for l in lines.get("viewer", []) if published and l.get("received") == published), None)
        if not published or not received or received.get("frames", 0) < 10 * seconds:
            stats.error("video", f"published {published}, viewer got {received}")
        else:
            stats.count("video.sessions")
            stats.count("video.frames", received["frames"])
        stop.wait(random.uniform(1, 3))
    shutil.rmtree(tmp, ignore_errors=True)


def call_worker(t: Target, hooks: VoiceHooks, stats: Stats, stop: threading.Event, index: int, talk: float):
    """A call to the test phone; its answer NCCO connects a second leg to the phone. Both legs must be
    answered, stay up `talk` seconds, and both complete once the first is hung up."""
    session = requests.Session()
    time.sleep(index * 1.5)
    two_answered = lambda legs: len(legs) == 2 and all("answered" in s for s in legs.values())
    all_done = lambda legs: legs and all(any(x in s for x in ("completed", "failed", "cancelled", "busy", "rejected",
                                                                "timeout", "unanswered")) for s in legs.values())
    while not stop.is_set():
        conv = None
        try:
            admin = {"Authorization": "Bearer " + t.token()}
            t0 = time.monotonic()
            r = session.post(t.base + "/v1/calls", headers=admin, timeout=TIMEOUT,
                             json={"to": [{"type": "phone", "number": TEST_PHONE}], "from": {"type": "phone", "number": TEST_PHONE}})
            stats.record("call.create", time.monotonic() - t0)
            if r.status_code != 201:
                stats.error("call.create", f"{r.status_code} {r.text[:200]}")
                stop.wait(3)
                continue
            call, conv = r.json()["uuid"], r.json()["conversation_uuid"]
            legs = hooks.wait(conv, two_answered, TIMEOUT * 2)
            if legs is None:
                stats.error("call.answer", f"both legs not answered in {TIMEOUT * 2} s: {hooks.wait(conv, lambda l: True, 0)}")
            else:
                stats.record("call.answer", time.monotonic() - t0)
                time.sleep(talk)
            t0 = time.monotonic()
            r = session.put(f"{t.base}/v1/calls/{call}", headers=admin, json={"action": "hangup"}, timeout=TIMEOUT)
            stats.record("call.hangup", time.monotonic() - t0)
            if r.status_code != 204 and legs is not None:
                stats.error("call.hangup", f"{r.status_code} {r.text[:200]}")
            done = hooks.wait(conv, all_done, TIMEOUT)
            if done is None:
                stats.error("call.end", f"legs not ended {TIMEOUT} s after hangup: {hooks.wait(conv, lambda l: True, 0)}")
            elif legs is not None:
                if not all("completed" in s for s in done.values()):
                    stats.error("call.end", f"a leg did not complete: {done}")
                else:
                    stats.count("calls")
        except requests.RequestException as e:
            stats.error("call", e)
        finally:
            if conv:
                hooks.forget(conv)
        stop.wait(random.uniform(1, 3))


# ---------- sampling, report ----------

def sample(t, stats, start, phase, last):
    row = {"t_s": round(time.time() - start, 1), "phase": phase, **proc_gauges(t.proc.pid, last)}
    m = t.metrics()
    for key in ("open_connections", "websockets", "realtime_sessions", "room_media_peers", "room_media_transports",
                "phone_lines", "sip_calls", "sip_transactions"):
        row[key] = m.get("switchboard_" + key, 0)
    row.update(t.media_counts())
    rtp = m.get('switchboard_phone_rtp_packets_total{direction="received"}', 0)
    row["phone_rtp_in"] = rtp - last.get("phone_rtp_total", rtp)
    last["phone_rtp_total"] = rtp
    window, counts = stats.take()
    # Requests only: a load round's duration, the RTP latency, video set-up and calls have their own scale.
    requests_lat = [v for kind, vs in window.items() if not kind.startswith(("rooms.", "call.answer")) for v in vs]
    row["requests"] = len(requests_lat)
    row["rt_cycles"] = counts.get("rt.cycles", 0)
    row["calls"] = counts.get("calls", 0)
    row["video_sessions"] = counts.get("video.sessions", 0)
    row["room_rounds"] = counts.get("rooms.rounds", 0)
    with stats.lock:
        row["errors_total"] = len(stats.errors)
    for kind in ("event.create", "event.list", "rt.login", "rt.event_push", "call.create", "call.answer", "video.setup"):
        row[f"{kind}_p99_ms"] = round(pct(window.get(kind, []), 0.99) * 1000, 1)
    row["all_p50_ms"] = round(pct(requests_lat, 0.5) * 1000, 1)
    row["all_p99_ms"] = round(pct(requests_lat, 0.99) * 1000, 1)
    row["rtp_p99_ms"] = round(max(window.get("rooms.rtp_latency", [0])) * 1000, 1)
    return row


def plot(rows, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [r["t_s"] / 60 for r in rows]
    fig, axes = plt.subplots(6, 1, figsize=(10, 15), sharex=True)
    axes[0].plot(t, [r["rss_kib"] / 1024 for r in rows], label="RSS MiB")
    axes[0].set_ylabel("MiB")
    axes[0].set_ylim(bottom=0)
    axes[1].plot(t, [r["fds"] for r in rows], label="descriptors")
    axes[1].plot(t, [r["threads"] for r in rows], label="threads")
    axes[1].plot(t, [r["websockets"] for r in rows], label="websockets")
    axes[1].plot(t, [r["realtime_sessions"] for r in rows], label="realtime sessions")
    axes[2].plot(t, [r["transports"] for r in rows], label="SFU transports")
    axes[2].plot(t, [r["producers"] for r in rows], label="SFU producers")
    axes[2].plot(t, [r["consumers"] for r in rows], label="SFU consumers")
    axes[2].plot(t, [r["routers"] for r in rows], label="SFU routers")
    axes[3].plot(t, [r["phone_lines"] for r in rows], label="phone lines")
    axes[3].plot(t, [r["sip_calls"] for r in rows], label="SIP calls")
    axes[3].plot(t, [r["sip_transactions"] for r in rows], label="SIP transactions")
    axes[3].plot(t, [r["calls"] for r in rows], label="calls completed /10 s")
    axes[3].plot(t, [r["video_sessions"] for r in rows], label="video sessions done /10 s")
    axes[3].plot(t, [r["rt_cycles"] / 10 for r in rows], label="realtime cycles /100 s")
    axes[4].plot(t, [r["all_p99_ms"] for r in rows], label="all requests p99 ms")
    axes[4].plot(t, [r["rt.event_push_p99_ms"] for r in rows], label="event push p99 ms")
    axes[4].plot(t, [r["rt.login_p99_ms"] for r in rows], label="login p99 ms")
    axes[4].plot(t, [r["call.answer_p99_ms"] for r in rows], label="call answered (2 legs) p99 ms")
    axes[4].plot(t, [r["rtp_p99_ms"] for r in rows], label="room RTP p99 ms")
    axes[5].plot(t, [r["server_cpu_cores"] for r in rows], label="server CPU (cores)")
    axes[5].plot(t, [r["loadavg_1m"] for r in rows], label="machine load, 1 min (2 cores, shared)")
    axes[5].set_xlabel("minutes")
    for ax in axes:
        ax.legend(loc="upper left", fontsize=7, ncol=2)
        ax.grid(alpha=0.3)
        for r0, r1 in zip(rows, rows[1:]):
            if r0["phase"] != r1["phase"]:
                ax.axvline(r1["t_s"] / 60, color="grey", linestyle=":")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", default=str(REPO / "docs" / "soak"))
    ap.add_argument("--warmup", type=float, default=None, help="minutes of warm-up (default: a third of the run, at least 2.5)")
    ap.add_argument("--realtime-clients", type=int, default=200)
    ap.add_argument("--realtime-hold", type=float, default=20.0, help="mean seconds a realtime client spends per cycle, pauses included")
    ap.add_argument("--rest-workers", type=int, default=2)
    ap.add_argument("--rest-pause", type=float, default=0.5, help="seconds a REST worker waits between rounds")
    ap.add_argument("--rooms", type=int, default=20)
    ap.add_argument("--room-subscribers", type=int, default=2)
    ap.add_argument("--video-sessions", type=int, default=2, help="video sessions at once (a publisher and a viewer each)")
    ap.add_argument("--video-seconds", type=int, default=8)
    ap.add_argument("--calls", type=int, default=3, help="calls to the test phone at once (two legs each)")
    ap.add_argument("--call-seconds", type=float, default=4.0)
    args = ap.parse_args()
    # RSS climbs to its working set for the first ~10 minutes of the full workload: logged-out realtime
    # sessions are kept 120 s for session:resume, two load rounds' SFU transports overlap while consent
    # expires, the allocator's per-thread arenas and the store's page cache fill. A 20 % warm-up (6 of
    # 30 minutes) ended before that; see docs/reliability.md, Soak.
    warmup = args.warmup if args.warmup is not None else max(2.5, args.minutes / 3)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = tempfile.mkdtemp(prefix="switchboard-soak-")
    hooks = VoiceHooks()
    t = Target(args.binary, data, hooks)
    stats = Stats()
    stop = threading.Event()
    start = time.time()
    rows = []
    last = {}
    time.sleep(1)
    rows.append(sample(t, stats, start, "idle", last))
    baseline = rows[0]
    workers = [threading.Thread(target=rest_worker, args=(t, stats, stop, i, args.rest_pause), daemon=True) for i in range(args.rest_workers)]
    workers.append(threading.Thread(target=realtime_worker, args=(t, stats, stop, args.realtime_clients, args.realtime_hold), daemon=True))
    if args.rooms:
        workers.append(threading.Thread(target=rooms_worker, args=(t, args.binary, stats, stop, args.rooms, args.room_subscribers), daemon=True))
    workers += [threading.Thread(target=video_worker, args=(t, args.binary, stats, stop, i, args.video_seconds), daemon=True)
                for i in range(args.video_sessions)]
    workers += [threading.Thread(target=call_worker, args=(t, hooks, stats, stop, i, args.call_seconds), daemon=True)
                for i in range(args.calls)]
    for w in workers:
        w.start()
    print(f"soak: {args.minutes} min against {args.binary} (pid {t.proc.pid}), warm-up {warmup} min; data {data}", flush=True)
    end = start + args.minutes * 60
    warm_rss = None
    try:
        while time.time() < end:
            time.sleep(max(0.0, INTERVAL - ((time.time() - start) % INTERVAL)))
            phase = "warmup" if time.time() - start < warmup * 60 else "load"
            row = sample(t, stats, start, phase, last)
            rows.append(row)
            if phase == "load" and warm_rss is None:
                warm_rss = row["rss_kib"]
            print(f"  t={row['t_s']:>6}s rss={row['rss_kib'] / 1024:.1f}MiB fds={row['fds']} threads={row['threads']} "
                  f"ws={row['websockets']:.0f} rt={row['realtime_sessions']:.0f} sfu={row['transports']}/{row['consumers']} "
                  f"lines={row['phone_lines']:.0f} reqs={row['requests']} cycles={row['rt_cycles']} calls={row['calls']} "
                  f"video={row['video_sessions']} p99={row['all_p99_ms']}ms cpu={row['server_cpu_cores']:.2f} "
                  f"load={row['loadavg_1m']:.1f} errors={row['errors_total']}", flush=True)
            if t.proc.poll() is not None:
                stats.error("server", f"exited with {t.proc.returncode}")
                break
    finally:
        stop.set()
        for w in workers:
            w.join(90)
    load_end = time.time()
    # The load is off: sessions, sockets, calls and media objects must drain back to the idle baseline.
    # SIP transactions linger for their Timer J/K (32 s over UDP), SFU transports until consent expires.
    settle_deadline = time.time() + 120
    while True:
        time.sleep(INTERVAL / 2)
        row = sample(t, stats, start, "drain", last)
        rows.append(row)
        leftover = {k: (baseline[k], row[k]) for k in BASELINE_KEYS if row[k] != baseline[k]}
        if not leftover or time.time() > settle_deadline:
            break
    drain_seconds = round(time.time() - load_end, 1)
    load_rows = [r for r in rows if r["phase"] == "load"]
    end_rss = statistics.median(r["rss_kib"] for r in load_rows if r["t_s"] >= load_rows[-1]["t_s"] - INTERVAL * 5) if load_rows else None
    t.proc.send_signal(signal.SIGTERM)
    try:
        code = t.proc.wait(20)
    except subprocess.TimeoutExpired:
        t.proc.kill()
        code = "timeout"

    stamp = time.strftime("%Y%m%d-%H%M%S")
    csv_path, png_path = out / f"soak-{stamp}.csv", out / f"soak-{stamp}.png"
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)

    growth = (end_rss / warm_rss - 1) * 100 if warm_rss and end_rss else None
    failures = []
    if growth is None:
        failures.append("the run was too short to have a warm-up and a load phase")
    elif growth >= 5:
        failures.append(f"RSS grew {growth:.1f}% after warm-up ({warm_rss} → {end_rss} KiB)")
    if leftover:
        failures.append(f"not back to baseline after the load stopped (baseline, now): {leftover}")
    if stats.errors:
        failures.append(f"{len(stats.errors)} errors, first: {stats.errors[:5]}")
    for kind, label in (("rt.cycles", "realtime cycle"), ("calls", "call"), ("video.sessions", "video session"),
                        ("rooms.rounds", "room round")):
        if not stats.totals.get(kind) and (kind != "rooms.rounds" or args.rooms):
            failures.append(f"no {label} completed")
    if args.calls and not sum(r["phone_rtp_in"] for r in rows):
        failures.append("no RTP arrived on phone lines")
    if code != 0:
        failures.append(f"server exit status on SIGTERM: {code}")
    summary = {"minutes": args.minutes, "warmup_minutes": warmup, "command": " ".join(["scripts/soak", *sys.argv[1:]]),
               "workload": {k: getattr(args, k) for k in ("realtime_clients", "realtime_hold", "rest_workers", "rest_pause", "rooms",
                                                          "room_subscribers", "video_sessions", "video_seconds", "calls", "call_seconds")},
               "requests": stats.total, "errors": len(stats.errors), "completed": dict(sorted(stats.totals.items())),
               "phone_rtp_packets_in": sum(r["phone_rtp_in"] for r in rows),
               "rss_idle_kib": baseline["rss_kib"], "rss_warm_kib": warm_rss, "rss_end_kib": end_rss,
               "rss_growth_percent": round(growth, 2) if growth is not None else None,
               "peak": {k: max(r[k] for r in rows) for k in ("rss_kib", "fds", "threads", "websockets", "realtime_sessions", "transports",
                                                              "consumers", "phone_lines", "sip_calls", "sip_transactions")},
               "baseline": {k: baseline[k] for k in BASELINE_KEYS + ("fds", "threads")},
               "after_drain": {k: rows[-1][k] for k in BASELINE_KEYS + ("fds", "threads")}, "drain_seconds": drain_seconds,
               "p99_ms_median_window": {k: statistics.median(r[k] for r in load_rows) if load_rows else None
                                        for k in ("all_p99_ms", "event.create_p99_ms", "rt.login_p99_ms", "rt.event_push_p99_ms",
                                                  "call.answer_p99_ms", "video.setup_p99_ms")},
               "server_cpu_cores_median": statistics.median(r["server_cpu_cores"] for r in load_rows) if load_rows else None,
               "loadavg_1m_median": statistics.median(r["loadavg_1m"] for r in load_rows) if load_rows else None,
               "p99_ms_max_window": max(r["all_p99_ms"] for r in rows), "csv": str(csv_path.relative_to(REPO) if csv_path.is_relative_to(REPO) else csv_path),
               "png": str(png_path.relative_to(REPO) if png_path.is_relative_to(REPO) else png_path),
               "pass": not failures, "failures": failures}
    (out / f"soak-{stamp}.json").write_text(json.dumps(summary, indent=2) + "\n")
    plot(rows, png_path, f"switchboard soak {stamp}: {args.minutes:g} min, {'PASS' if not failures else 'FAIL'} "
                         f"(RSS {'n/a' if growth is None else f'{growth:+.1f}%'} after warm-up, {len(stats.errors)} errors)")
    print(json.dumps(summary, indent=2))
    if not failures:
        shutil.rmtree(data, ignore_errors=True)
    else:
        print(f"soak: FAILED; server data and log kept in {data}", file=sys.stderr)
    sys.exit(0 if not failures else 1)


if __name__ == "__main__":
    main()
