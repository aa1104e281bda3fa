"""The SIP edge under more calls than it is configured for, and the number lookup cache: SIPp places calls
above the concurrent-call limit and every one is either completed or refused 503 with Retry-After, none times
out, OPTIONS and /health stay answered; a number moved to another application routes the next INVITE there."""

from __future__ import annotations

import re
import socket
import threading
import time
import uuid

import requests

from sip_support import SIPP_SCENARIOS, FreePort, api, metric, sipp, sipp_call, start_sip_server
from voice_support import Hooks, application

NUMBER = "15550177"


def trunk_and_number(server, app_id: str | None = None) -> str:
    r = api(server, "POST", "/v1/sip/trunks", json={"name": "carrier", "host": "127.0.0.1", "port": 5999, "transport": "udp",
                                                     "allow": ["127.0.0.0/8"], "health_interval": 0})
    assert r.status_code == 201, r.text
    r = api(server, "POST", "/number/buy", data={"country": "US", "msisdn": NUMBER, "trunk_id": r.json()["id"]})
    assert r.status_code == 200, r.text
    if app_id:
        link(server, app_id)
    return NUMBER


def link(server, app_id: str):
    r = api(server, "POST", "/number/update", data={"country": "US", "msisdn": NUMBER, "app_id": app_id})
    assert r.status_code == 200, r.text


def options(port: int) -> int:
    """One OPTIONS over UDP from a fresh socket; the response's status code (0: none within 2 s)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        s.settimeout(2)
        local = s.getsockname()[1]
        msg = (f"OPTIONS sip:{NUMBER}@127.0.0.1:{port} SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:{local};branch=z9hG4bK-{uuid.uuid4().hex}\r\n"
               f"From: <sip:probe@127.0.0.1>;tag=p1\r\nTo: <sip:{NUMBER}@127.0.0.1>\r\nCall-ID: {uuid.uuid4().hex}@127.0.0.1\r\n"
               f"CSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n")
        s.sendto(msg.encode(), ("127.0.0.1", port))
        try:
            data = s.recv(65536).decode(errors="replace")
        except socket.timeout:
            return 0
        return int(data.split(" ", 2)[1])


def test_calls_above_the_limit_are_refused_503_with_retry_after_and_none_times_out(tmp_path):
    limit, calls = 5, 60
    server, port = start_sip_server(["--sip-max-calls", str(limit), "--rtp-ports", "36000-36999"], dev=True,
                                    env={"SWITCHBOARD_DEV_SIP_ECHO": "1"})
    try:
        trunk_and_number(server)
        probes: list[tuple[int, int]] = []
        stop = threading.Event()

        def probe():
            while not stop.is_set():
                health = requests.get(server.http_url + "/health", timeout=5).status_code
                probes.append((options(port), health))
                time.sleep(0.2)

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        # 20 calls/s, each held 1.5 s when answered: about 30 wanted at once, 6 times the limit.
        run = sipp(["-sf", str(SIPP_SCENARIOS / "uac-or-503.xml"), f"127.0.0.1:{port}", "-i", "127.0.0.1", "-p", FreePort(),
                    "-mp", FreePort(), "-s", NUMBER, "-r", "20", "-m", str(calls), "-l", str(calls), "-trace_stat", "-stf",
                    str(tmp_path / "stat.csv")], timeout=60, cwd=tmp_path)
        stop.set()
        prober.join(timeout=10)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        # SIPp ended every call through one branch or the other (exit 0: no timeout, no other status).
        assert re.search(rf"Successful call\s+\|\s+\d+\s+\|\s+{calls}\b", run.stdout), run.stdout[-3000:]
        refused = metric(server, "switchboard_sip_responses_total", direction="out", method="INVITE", code="503") or 0
        shed = metric(server, "switchboard_sip_invites_shed_total", reason="calls")
        # Shed counts calls (a retransmitted INVITE gets its transaction's 503 again, not a second shed).
        assert shed is not None and 0 < shed <= calls - limit and refused >= shed, f"{shed} shed, {refused} 503s\n{server.log()[-2000:]}"
        assert metric(server, "switchboard_sip_invites_shed_total", reason="pending") == 0
        assert metric(server, "switchboard_sip_calls") == 0
        # OPTIONS and /health were answered all along.
        assert probes and all(p == (200, 200) for p in probes), probes
        # Once the calls are gone, a new one is answered.
        p = sipp_call(port, NUMBER, 200, tmp_path)
        assert p.returncode == 0, p.stdout + p.stderr
    finally:
        server.stop()


def test_a_number_moved_to_another_application_routes_the_next_invite_there(tmp_path):
    server, port = start_sip_server()
    first, second = Hooks(), Hooks()
    try:
        conversation = lambda request: [{"action": "conversation", "name": "c-" + request.get("uuid", "x")}]
        first.ncco = second.ncco = conversation
        app_a, _ = application(server, first)
        app_b, _ = application(server, second)
        trunk_and_number(server, app_a)

        def call():
            run = sipp(["-sn", "uac", f"127.0.0.1:{port}", "-i", "127.0.0.1", "-p", FreePort(), "-mp", FreePort(), "-s", NUMBER,
                        "-m", "1", "-d", "200"], timeout=20, cwd=tmp_path)
            assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]

        call()
        call()
        assert (len(first.answers), len(second.answers)) == (2, 0)
        # Moved: the very next INVITE goes to the other application (the cached route was dropped by the write).
        link(server, app_b)
        call()
        assert (len(first.answers), len(second.answers)) == (2, 1)
        link(server, app_a)
        call()
        assert (len(first.answers), len(second.answers)) == (3, 1)
        # Deleting the application unlinks the number in the store: the next INVITE finds no application (480).
        assert api(server, "DELETE", f"/v2/applications/{app_a}").status_code == 204
        p = sipp_call(port, NUMBER, 480, tmp_path)
        assert p.returncode == 0, p.stdout + p.stderr
        assert len(first.answers) == 3
    finally:
        first.http.shutdown()
        second.http.shutdown()
        server.stop()
