"""The SIP edge in the real server: source screening, trunks over REST and the CLI, number routing,
metrics, and the registrar with baresip registering by digest."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from rig import server_binary, wait_until
from sip_support import Baresip, api, metric, sipp_call, start_sip_server


@pytest.fixture(scope="module")
def sip_server():
    server, port = start_sip_server()
    yield server, port
    server.stop()


def cli(server, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWITCHBOARD_")}
    env.update({"SWITCHBOARD_URL": server.http_url, "SWITCHBOARD_DATA": str(server.data_dir)})
    return subprocess.run([str(server_binary()), *args], env=env, capture_output=True, text=True, timeout=30)


def test_serve_help_lists_sip_flags():
    out = subprocess.run([str(server_binary()), "help", "serve"], capture_output=True, text=True, timeout=10).stdout
    for flag in ("--sip-port", "--sip-address", "--rtp-ports", "--rtp-timeout"):
        assert flag in out


@pytest.mark.parametrize("value", ["-1", "0.5", "nope", "90000"])
def test_a_bad_rtp_timeout_is_refused_at_start(value):
    out = subprocess.run([str(server_binary()), "serve", "--rtp-timeout", value, "--listen", "127.0.0.1:0", "--sip-port", "0"],
                         capture_output=True, text=True, timeout=20)
    assert out.returncode != 0 and "--rtp-timeout: expected seconds" in out.stderr + out.stdout, out.stderr


def test_unknown_source_is_403_then_trunk_number_routing(sip_server, tmp_path):
    server, port = sip_server
    # No trunk, no device: 403.
    p = sipp_call(port, "15550100", 403, tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr

    r = api(server, "POST", "/v1/sip/trunks", json={"name": "loop", "host": "127.0.0.1", "port": 5999, "transport": "udp",
                                                     "allow": ["127.0.0.0/8"], "health_interval": 0})
    assert r.status_code == 201, r.text
    trunk = r.json()
    assert trunk["host"] == "127.0.0.1" and trunk["allow"] == ["127.0.0.0/8"] and "password" not in trunk

    # A number on the trunk, with no voice application.
    r = api(server, "POST", "/number/buy", data={"country": "US", "msisdn": "15550100", "trunk_id": trunk["id"]})
    assert r.status_code == 200, r.text
    numbers = api(server, "GET", "/account/numbers").json()["numbers"]
    assert [n.get("trunk_id") for n in numbers if n["msisdn"] == "15550100"] == [trunk["id"]]

    # Not our number: 404. Ours but nothing answers it yet: 480. Same over TCP.
    for number, status, transport in [("15550199", 404, "u1"), ("15550100", 480, "u1"), ("+15550100", 480, "t1")]:
        p = sipp_call(port, number, status, tmp_path, transport)
        assert p.returncode == 0, f"{number} over {transport}: {p.stdout}{p.stderr}"

    assert metric(server, "switchboard_sip_responses_total", direction="out", method="INVITE", code="480") >= 2
    assert metric(server, "switchboard_sip_responses_total", direction="out", method="INVITE", code="403") >= 1
    assert metric(server, "switchboard_sip_requests_total", direction="in", method="INVITE") >= 4

    # Deleting the trunk puts the source back outside: 403 again.
    assert api(server, "DELETE", f"/v1/sip/trunks/{trunk['id']}").status_code == 204
    wait_until(lambda: sipp_call(port, "15550100", 403, tmp_path).returncode == 0, timeout=10, what="403 after delete")


def test_trunk_validation_and_patch(sip_server):
    server, _ = sip_server
    bad = [{"host": "carrier.example.com"}, {"host": "127.0.0.1", "transport": "sctp"}, {"host": "127.0.0.1", "port": 70000},
           {"host": "127.0.0.1", "allow": ["10.0.0.0/40"]}, {"host": "127.0.0.1", "register": True}, {"host": "127.0.0.1", "color": "red"}]
    for body in bad:
        r = api(server, "POST", "/v1/sip/trunks", json=body)
        assert r.status_code == 400, (body, r.text)
    r = api(server, "POST", "/v1/sip/trunks", json={"name": "patchme", "host": "127.0.0.1", "health_interval": 0})
    tid = r.json()["id"]
    r = api(server, "PATCH", f"/v1/sip/trunks/{tid}", json={"port": 5070, "transport": "tcp"})
    assert r.status_code == 200 and r.json()["port"] == 5070 and r.json()["transport"] == "tcp"
    assert api(server, "GET", "/v1/sip/trunks/patchme").json()["id"] == tid
    assert api(server, "POST", "/v1/sip/trunks", json={"name": "patchme", "host": "127.0.0.2"}).status_code == 409
    assert api(server, "DELETE", f"/v1/sip/trunks/{tid}").status_code == 204
    assert api(server, "GET", f"/v1/sip/trunks/{tid}").status_code == 404
    assert server_get_unauth(server).status_code == 401


def server_get_unauth(server):
    import requests
    return requests.get(server.http_url + "/v1/sip/trunks", timeout=5)


def test_cli_trunks(sip_server):
    server, _ = sip_server
    p = cli(server, "trunks", "create", "--name", "cli", "--host", "127.0.0.9", "--port", "5090", "--transport", "tcp",
            "--username", "acct", "--password", "pw", "--allow", "10.0.0.0/8,192.0.2.1", "--health-interval", "0")
    assert p.returncode == 0, p.stderr
    p = cli(server, "trunks", "list")
    assert p.returncode == 0 and "cli" in p.stdout and "127.0.0.9" in p.stdout and "tcp" in p.stdout, p.stdout
    p = cli(server, "trunks", "list", "--json")
    import json
    [t] = [t for t in json.loads(p.stdout) if t["name"] == "cli"]
    assert t["allow"] == ["10.0.0.0/8", "192.0.2.1"] and t["username"] == "acct" and t["has_password"] is True
    p = cli(server, "trunks", "delete", "--trunk", "cli")
    assert p.returncode == 0, p.stderr
    assert "cli" not in cli(server, "trunks", "list").stdout


def test_baresip_registers_with_digest(sip_server, tmp_path):
    server, port = sip_server
    r = api(server, "POST", "/v2/applications", json={"name": "phones"})
    app_id = r.json()["id"]
    from accounts_support import bearer, token
    key = r.json()["keys"]["private_key"]
    # Users are created with the application's JWT.
    import requests
    r = requests.post(server.http_url + "/v1/users", headers={"Authorization": bearer(token(app_id, key))}, json={"name": "alice"},
                      timeout=10)
    assert r.status_code in (201, 409), r.text
    p = cli(server, "trunks", "device-password", "--app-id", app_id, "--user", "alice", "--password", "correct-horse")
    assert p.returncode == 0, p.stderr

    before = metric(server, "switchboard_sip_registrations") or 0
    wrong = Baresip(f'<sip:alice@{app_id}>;auth_pass=wrong-password;outbound="sip:127.0.0.1:{port}";regint=600', tmp_path / "wrong")
    try:
        wait_until(lambda: "401" in wrong.log() or "failed" in wrong.log().lower(), timeout=15, what="baresip refused")
        time.sleep(1)
        assert (metric(server, "switchboard_sip_registrations") or 0) == before
    finally:
        wrong.stop()

    phone = Baresip(f'<sip:alice@{app_id}>;auth_pass=correct-horse;outbound="sip:127.0.0.1:{port}";regint=600', tmp_path / "right")
    try:
        wait_until(lambda: (metric(server, "switchboard_sip_registrations") or 0) == before + 1, timeout=15,
                   what=lambda: f"baresip registered; log:\n{phone.log()}")
        wait_until(lambda: "200 OK" in phone.log() or "registered" in phone.log().lower(), timeout=5, what="baresip saw 200")
    finally:
        phone.stop()


def test_a_registration_survives_a_restart(tmp_path):
    """An accepted REGISTER is an acknowledged write: after a restart the device is still registered (and callable)
    without registering again."""
    from rig import start_server
    import requests
    data = tmp_path / "data"
    server, port = start_sip_server(data_dir=data)
    phone = None
    try:
        r = api(server, "POST", "/v2/applications", json={"name": "phones"})
        app_id = r.json()["id"]
        from accounts_support import bearer, token
        key = r.json()["keys"]["private_key"]
        requests.post(server.http_url + "/v1/users", headers={"Authorization": bearer(token(app_id, key))}, json={"name": "erin"}, timeout=10)
        assert cli(server, "trunks", "device-password", "--app-id", app_id, "--user", "erin", "--password", "correct-horse").returncode == 0
        phone = Baresip(f'<sip:erin@{app_id}>;auth_pass=correct-horse;outbound="sip:127.0.0.1:{port}";regint=3600', tmp_path / "phone")
        wait_until(lambda: (metric(server, "switchboard_sip_registrations") or 0) == 1, timeout=15, what=lambda: f"registered:\n{phone.log()}")
        registers = phone.log().count("REGISTER")
        assert server.stop() == 0
        server = start_server(["--sip-port", str(port)], https=False, data_dir=data)
        wait_until(lambda: f"sip:   udp+tcp 127.0.0.1:{port}" in server.log(), timeout=10, what="SIP listening again")
        assert metric(server, "switchboard_sip_registrations") == 1
        assert phone.log().count("REGISTER") == registers, "the phone did not need to register again"
    finally:
        if phone:
            phone.stop()
        server.stop()
