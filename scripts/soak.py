"""Soak test: a mixed workload against one `switchboard serve` for N minutes, sampled every 10 s.

Run through scripts/soak (which picks the binary and the venv). Workload, all at once:
- realtime churn: clients connect, log in, join a conversation, send messages, read their events, leave
  and disconnect, over and over;
- audio rooms through the SFU: `switchboard load` runs back-to-back rounds (rooms of publishers and
  subscribers with Opus-sized RTP), so media objects are created and torn down all the time;
- REST: users, conversations and event pages created and read.
Every 10 s one CSV row: RSS, descriptors, threads, the server's gauges (sockets, realtime sessions, media
peers/transports), the SFU's object counts (routers, transports, producers, consumers), and per-window
request counts, errors and p50/p99 latencies. A PNG plots them.

Pass rule: RSS after the run is less than 5 % above RSS at the end of warm-up; every object count and
session gauge is back to its idle baseline once the load stops; no request failed.
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
from pathlib import Path

import jwt
import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "Tests" / "interop"))
from conv_support import CLIENT_ACL  # noqa: E402
from rig import free_port  # noqa: E402

INTERVAL = 10.0


class Stats:
    """Latencies and errors per sampling window, shared by every workload thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.latencies = {}  # kind -> [seconds]
        self.errors = []  # (time, kind, detail)
        self.total = 0

    def record(self, kind, seconds):
        with self.lock:
            self.latencies.setdefault(kind, []).append(seconds)
            self.total += 1

    def error(self, kind, detail):
        with self.lock:
            self.errors.append((time.time(), kind, str(detail)[:300]))

    def take(self):
        with self.lock:
            window, self.latencies = self.latencies, {}
            return window


def pct(values, p):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


class Target:
    """The server under test plus an application to act in."""

    def __init__(self, binary, data):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join(data, "server.log"), "ab")
        self.proc = subprocess.Popen(
            [binary, "serve", "--dev", "--listen", f"127.0.0.1:{self.port}", "--data", data, "--media-port", "0",
             "--log-level", "warn"], stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
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
        r = requests.post(self.base + "/v2/applications", auth=auth, json={"name": "soak"}, timeout=10)
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
            if line.startswith("switchboard_") and " " in line and "{" not in line:
                name, value = line.rsplit(" ", 1)
                try:
                    out[name] = float(value)
                except ValueError:
                    pass
        return out

    def media_counts(self):
        workers = requests.get(self.base + "/test/media/stats", timeout=5).json()
        return {k: sum(w.get(k, 0) for w in workers) for k in ("routers", "transports", "producers", "consumers")}


def proc_gauges(pid):
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {"rss_kib": int(fields["VmRSS"].split()[0]), "threads": int(fields["Threads"]),
            "fds": len(os.listdir(f"/proc/{pid}/fd"))}


# ---------- workloads ----------

def rest_worker(t: Target, stats: Stats, stop: threading.Event, index: int):
    """Creates users and conversations, posts events and reads pages, as an application server would."""
    session = requests.Session()
    admin = {"Authorization": "Bearer " + t.token()}
    while not stop.is_set():
        name = f"rest-{index}-{uuid.uuid4().hex[:8]}"
        try:
            for kind, method, path, body, expect in (
                ("user.create", "POST", "/v1/users", {"name": name}, 201),
                ("conversation.create", "POST", "/v1/conversations", {"name": "c-" + name}, 201),
            ):
                t0 = time.monotonic()
                r = session.request(method, t.base + path, headers=admin, json=body, timeout=10)
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
                             json={"state": "joined", "channel": {"type": "app"}}, timeout=10)
            if r.status_code not in (200, 201):
                stats.error("member.join", f"{r.status_code} {r.text}")
                continue
            for i in range(5):
                t0 = time.monotonic()
                r = session.post(f"{t.base}/v1/conversations/{cid}/events", headers=user,
                                 json={"type": "text", "body": {"text": f"m{i}"}}, timeout=10)
                stats.record("event.create", time.monotonic() - t0)
                if r.status_code != 201:
                    stats.error("event.create", f"{r.status_code} {r.text}")
            t0 = time.monotonic()
            r = session.get(f"{t.base}/v1/conversations/{cid}/events", headers=user, params={"page_size": 100}, timeout=10)
            stats.record("event.list", time.monotonic() - t0)
            if r.status_code != 200:
                stats.error("event.list", f"{r.status_code} {r.text}")
            session.delete(f"{t.base}/v1/conversations/{cid}", headers=admin, timeout=10)
            session.delete(f"{t.base}/v1/users/{uid}", headers=admin, timeout=10)
        except RuntimeError:
            time.sleep(0.5)
        except requests.RequestException as e:
            stats.error("rest", e)
            time.sleep(0.5)
        time.sleep(0.05)


async def realtime_client(t: Target, stats: Stats, stop: threading.Event, index: int):
    """Connect, log in, join, message, read the events back, leave, disconnect; repeat."""
    import websockets

    loop = asyncio.get_running_loop()
    session = requests.Session()
    admin = {"Authorization": "Bearer " + t.token()}
    while not stop.is_set():
        name = f"rt-{index}-{uuid.uuid4().hex[:8]}"
        try:
            r = await loop.run_in_executor(None, lambda: session.post(t.base + "/v1/users", headers=admin, json={"name": name}, timeout=10))
            if r.status_code != 201:
                stats.error("rt.user", f"{r.status_code} {r.text}")
                await asyncio.sleep(1)
                continue
            r = await loop.run_in_executor(None, lambda: session.post(t.base + "/v1/conversations", headers=admin,
                                                                      json={"name": "rt-" + name}, timeout=10))
            cid = r.json()["id"]
            t0 = time.monotonic()
            async with websockets.connect(f"ws://127.0.0.1:{t.port}/v1/realtime", max_size=None, open_timeout=10) as ws:
                await ws.send(json.dumps({"type": "session:login", "tid": "1", "body": {"token": t.token(name)}}))
                reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
                stats.record("rt.login", time.monotonic() - t0)
                if reply.get("type") != "session:success":
                    stats.error("rt.login", reply)
                    continue
                user = {"Authorization": "Bearer " + t.token(name)}
                await loop.run_in_executor(None, lambda: session.post(
                    f"{t.base}/v1/conversations/{cid}/members", headers=user,
                    json={"state": "joined", "channel": {"type": "app"}}, timeout=10))
                for i in range(3):
                    t0 = time.monotonic()
                    text = f"{name}-{i}"
                    await loop.run_in_executor(None, lambda: session.post(
                        f"{t.base}/v1/conversations/{cid}/events", headers=user,
                        json={"type": "text", "body": {"text": text}}, timeout=10))
                    # The event comes back over the socket: post-to-push latency.
                    while True:
                        m = json.loads(await asyncio.wait_for(ws.recv(), 10))
                        if m.get("type") == "text" and m.get("body", {}).get("text") == text:
                            break
                    stats.record("rt.event_push", time.monotonic() - t0)
                await loop.run_in_executor(None, lambda: session.patch(
                    f"{t.base}/v1/conversations/{cid}/members/me", headers=user, json={"state": "left"}, timeout=10))
            await loop.run_in_executor(None, lambda: session.delete(f"{t.base}/v1/conversations/{cid}", headers=admin, timeout=10))
        except (asyncio.TimeoutError, OSError, websockets.WebSocketException, requests.RequestException, KeyError) as e:
            stats.error("realtime", f"{type(e).__name__}: {e}")
            await asyncio.sleep(1)


def realtime_worker(t, stats, stop, clients):
    async def main():
        await asyncio.gather(*(realtime_client(t, stats, stop, i) for i in range(clients)))
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
            time.sleep(2)
            continue
        stats.record("rooms.round", time.monotonic() - t0)
        if result.get("loss_percent", 100) > 5:
            stats.error("rooms", f"audio loss {result.get('loss_percent')}%")
        if "latency_ms_p99" in result:
            stats.record("rooms.rtp_latency", result["latency_ms_p99"] / 1000)


# ---------- sampling, report ----------

def sample(t, stats, start, phase):
    row = {"t_s": round(time.time() - start, 1), "phase": phase, **proc_gauges(t.proc.pid)}
    m = t.metrics()
    for key in ("switchboard_open_connections", "switchboard_websockets", "switchboard_realtime_sessions",
                "switchboard_room_media_peers", "switchboard_room_media_transports"):
        row[key.replace("switchboard_", "")] = m.get(key, 0)
    row.update(t.media_counts())
    window = stats.take()
    # Requests only: a load round's duration and the RTP latency have their own scale.
    all_lat = [v for kind, vs in window.items() if not kind.startswith("rooms.") for v in vs]
    row["requests"] = len(all_lat)
    with stats.lock:
        row["errors_total"] = len(stats.errors)
    for kind in ("event.create", "event.list", "rt.login", "rt.event_push"):
        row[f"{kind}_p99_ms"] = round(pct(window.get(kind, []), 0.99) * 1000, 1)
    row["all_p50_ms"] = round(pct(all_lat, 0.5) * 1000, 1)
    row["all_p99_ms"] = round(pct(all_lat, 0.99) * 1000, 1)
    row["rtp_p99_ms"] = round(max(window.get("rooms.rtp_latency", [0])) * 1000, 1)
    return row


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [r["t_s"] / 60 for r in rows]
    fig, axes = plt.subplots(4, 1, figsize=(10, 11), sharex=True)
    axes[0].plot(t, [r["rss_kib"] / 1024 for r in rows], label="RSS MiB")
    axes[0].set_ylabel("MiB")
    axes[1].plot(t, [r["fds"] for r in rows], label="descriptors")
    axes[1].plot(t, [r["threads"] for r in rows], label="threads")
    axes[1].plot(t, [r["websockets"] for r in rows], label="websockets")
    axes[2].plot(t, [r["transports"] for r in rows], label="SFU transports")
    axes[2].plot(t, [r["consumers"] for r in rows], label="SFU consumers")
    axes[2].plot(t, [r["producers"] for r in rows], label="SFU producers")
    axes[2].plot(t, [r["realtime_sessions"] for r in rows], label="realtime sessions")
    axes[3].plot(t, [r["all_p99_ms"] for r in rows], label="all requests p99 ms")
    axes[3].plot(t, [r["rt.event_push_p99_ms"] for r in rows], label="event push p99 ms")
    axes[3].plot(t, [r["event.create_p99_ms"] for r in rows], label="event create p99 ms")
    axes[3].set_xlabel("minutes")
    for ax in axes:
        ax.legend(loc="upper left", fontsize=8)
        ax.grid(alpha=0.3)
        for r0, r1 in zip(rows, rows[1:]):
            if r0["phase"] != r1["phase"]:
                ax.axvline(r1["t_s"] / 60, color="grey", linestyle=":")
    fig.suptitle("switchboard soak")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", default=str(REPO / "docs" / "soak"))
    ap.add_argument("--warmup", type=float, default=None, help="minutes of warm-up (default: 20 %% of the run, at least 2.5)")
    ap.add_argument("--realtime-clients", type=int, default=20)
    ap.add_argument("--rest-workers", type=int, default=2)
    ap.add_argument("--rooms", type=int, default=2)
    ap.add_argument("--room-subscribers", type=int, default=10)
    args = ap.parse_args()
    # The store's caches and the allocator's arenas fill for the first two minutes or so.
    warmup = args.warmup if args.warmup is not None else max(2.5, args.minutes * 0.2)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = tempfile.mkdtemp(prefix="switchboard-soak-")
    t = Target(args.binary, data)
    stats = Stats()
    stop = threading.Event()
    start = time.time()
    rows = []
    time.sleep(1)
    rows.append(sample(t, stats, start, "idle"))
    baseline = rows[0]
    workers = [threading.Thread(target=rest_worker, args=(t, stats, stop, i), daemon=True) for i in range(args.rest_workers)]
    workers.append(threading.Thread(target=realtime_worker, args=(t, stats, stop, args.realtime_clients), daemon=True))
    workers.append(threading.Thread(target=rooms_worker, args=(t, args.binary, stats, stop, args.rooms, args.room_subscribers), daemon=True))
    for w in workers:
        w.start()
    print(f"soak: {args.minutes} min against {args.binary} (pid {t.proc.pid}), warm-up {warmup} min; data {data}", flush=True)
    end = start + args.minutes * 60
    warm_rss = None
    try:
        while time.time() < end:
            time.sleep(max(0.0, INTERVAL - ((time.time() - start) % INTERVAL)))
            phase = "warmup" if time.time() - start < warmup * 60 else "load"
            row = sample(t, stats, start, phase)
            rows.append(row)
            if phase == "load" and warm_rss is None:
                warm_rss = row["rss_kib"]
            print(f"  t={row['t_s']:>6}s rss={row['rss_kib'] / 1024:.1f}MiB fds={row['fds']} threads={row['threads']} "
                  f"ws={row['websockets']:.0f} transports={row['transports']} consumers={row['consumers']} "
                  f"reqs={row['requests']} p99={row['all_p99_ms']}ms errors={row['errors_total']}", flush=True)
            if t.proc.poll() is not None:
                stats.error("server", f"exited with {t.proc.returncode}")
                break
    finally:
        stop.set()
        for w in workers:
            w.join(60)
    # The load is off: sessions, sockets and media objects must drain back to the idle baseline.
    settle_deadline = time.time() + 60
    while True:
        time.sleep(INTERVAL / 2)
        row = sample(t, stats, start, "drain")
        rows.append(row)
        keys = ("transports", "producers", "consumers", "routers", "realtime_sessions", "websockets", "room_media_peers")
        leftover = {k: (baseline[k], row[k]) for k in keys if row[k] != baseline[k]}
        if not leftover or time.time() > settle_deadline:
            break
    end_rss = statistics.median(r["rss_kib"] for r in rows if r["phase"] == "load"
                                and r["t_s"] >= rows[-1]["t_s"] - 60 - INTERVAL * 3) if any(r["phase"] == "load" for r in rows) else None
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
    plot(rows, png_path)

    growth = (end_rss / warm_rss - 1) * 100 if warm_rss and end_rss else None
    failures = []
    if growth is None:
        failures.append("the run was too short to have a warm-up and a load phase")
    elif growth >= 5:
        failures.append(f"RSS grew {growth:.1f}% after warm-up ({warm_rss} → {end_rss} KiB)")
    if leftover:
        failures.append(f"not back to baseline after the load stopped (baseline, now): {leftover}")
    if stats.errors:
        failures.append(f"{len(stats.errors)} errors, first: {stats.errors[:3]}")
    if code != 0:
        failures.append(f"server exit status on SIGTERM: {code}")
    summary = {"minutes": args.minutes, "warmup_minutes": warmup, "requests": stats.total, "errors": len(stats.errors),
               "rss_warm_kib": warm_rss, "rss_end_kib": end_rss, "rss_growth_percent": round(growth, 2) if growth is not None else None,
               "peak_fds": max(r["fds"] for r in rows), "peak_threads": max(r["threads"] for r in rows),
               "peak_transports": max(r["transports"] for r in rows), "peak_consumers": max(r["consumers"] for r in rows),
               "p99_ms_max_window": max(r["all_p99_ms"] for r in rows), "csv": str(csv_path), "png": str(png_path),
               "pass": not failures, "failures": failures}
    (out / f"soak-{stamp}.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    if not failures:
        shutil.rmtree(data, ignore_errors=True)
    else:
        print(f"soak: FAILED; server data and log kept in {data}", file=sys.stderr)
    sys.exit(0 if not failures else 1)


if __name__ == "__main__":
    main()
