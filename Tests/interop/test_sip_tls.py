"""SIP over TLS in the real server: baresip (libre with OpenSSL) registers over TLS by digest with the server's
development certificate, is called over its TLS connection and hung up; a TLS trunk reaches baresip listening on
TLS with a carrier certificate the server trusts through --sip-tls-ca; a handshake of garbage is closed and counted."""

from __future__ import annotations

import datetime
import re
import socket
import ssl
import time

import pytest
import requests

from accounts_support import bearer, token
from rig import free_sip_port, port_taken, wait_until
from sip_support import Baresip, api, metric, start_sip_server

APP_NUMBER = "15550177"
CARRIER_PHONE = "15550166"


def start_tls_server(tmp_path, extra_args=()):
    """A server with SIP on a free port and SIP over TLS on another; returns (server, sip_port, tls_port, ca_file)."""
    for attempt in range(3):
        tls_port = free_sip_port()
        try:
            server, sip_port = start_sip_server(["--sip-tls-port", str(tls_port), *extra_args])
        except RuntimeError as e:
            if attempt == 2 or port_taken(e) != tls_port:
                raise
            continue
        wait_until(lambda: f"tls 127.0.0.1:{tls_port}" in server.log() and "development CA: " in server.log(), timeout=10,
                   what=lambda: f"TLS listening:\n{server.log()[-2000:]}")
        line = next(l for l in server.log().splitlines() if "sip:   udp+tcp" in l)
        assert line.strip().startswith(f"sip:   udp+tcp 127.0.0.1:{sip_port}, tls 127.0.0.1:{tls_port}"), line
        ca = re.search(r"development CA: (\S+)", server.log()).group(1)
        return server, sip_port, tls_port, ca
    raise AssertionError("unreachable")


def application(server) -> tuple[str, str]:
    r = api(server, "POST", "/v2/applications", json={"name": "tls-phones"})
    assert r.status_code == 201, r.text
    return r.json()["id"], r.json()["keys"]["private_key"]


def app_request(server, app_id, key, method, path, **kw) -> requests.Response:
    return requests.request(method, server.http_url + path, headers={"Authorization": bearer(token(app_id, key))}, timeout=10, **kw)


def call_status(server, app_id, key, uuid) -> str:
    return app_request(server, app_id, key, "GET", f"/v1/calls/{uuid}").json().get("status", "")


def test_baresip_registers_over_tls_and_is_called_over_its_connection(tmp_path):
    server, sip_port, tls_port, ca = start_tls_server(tmp_path)
    phone = None
    try:
        app_id, key = application(server)
        r = app_request(server, app_id, key, "POST", "/v1/users", json={"name": "alice"})
        assert r.status_code in (201, 409), r.text
        from test_sip_edge import cli
        p = cli(server, "trunks", "device-password", "--app-id", app_id, "--user", "alice", "--password", "correct-horse")
        assert p.returncode == 0, p.stderr

        # The server's development CA is what baresip trusts; the REGISTER goes to the TLS port only.
        phone = Baresip(f'<sip:alice@{app_id};transport=tls>;auth_pass=correct-horse;'
                        f'outbound="sip:127.0.0.1:{tls_port};transport=tls";regint=600;answermode=auto',
                        tmp_path / "phone", tone=660, extra_config=f"sip_cafile {ca}\n")
        wait_until(lambda: metric(server, "switchboard_sip_registrations") == 1, timeout=20,
                   what=lambda: f"baresip registered over TLS; log:\n{phone.log()[-2000:]}\nserver:\n{server.log()[-2000:]}")
        assert metric(server, "switchboard_sip_tls_connections") == 1
        assert metric(server, "switchboard_sip_tcp_connections") == 0
        assert metric(server, "switchboard_sip_responses_total", direction="out", method="REGISTER", code="401") >= 1
        assert metric(server, "switchboard_sip_responses_total", direction="out", method="REGISTER", code="200") >= 1

        # The API calls the registered user: the INVITE goes back over the phone's TLS connection, answered.
        r = app_request(server, app_id, key, "POST", "/v1/calls", json={
            "to": [{"type": "sip", "uri": f"sip:alice@{app_id}"}], "from": {"type": "phone", "number": "14155550100"},
            "ncco": [{"action": "conversation", "name": "tls-room"}]})
        assert r.status_code == 201, r.text
        uuid = r.json()["uuid"]
        wait_until(lambda: call_status(server, app_id, key, uuid) == "answered", timeout=20,
                   what=lambda: f"answered over TLS ({call_status(server, app_id, key, uuid)}); baresip:\n{phone.log()[-2000:]}\n"
                                f"server:\n{server.log()[-3000:]}")
        assert metric(server, "switchboard_sip_tls_connections") == 1, "the call reused the registration's connection"
        assert metric(server, "switchboard_sip_responses_total", direction="in", method="INVITE", code="200") >= 1

        # Hung up from the API: the BYE reaches the phone over TLS, which ends its call.
        r = app_request(server, app_id, key, "PUT", f"/v1/calls/{uuid}", json={"action": "hangup"})
        assert r.status_code in (200, 204), r.text
        wait_until(lambda: call_status(server, app_id, key, uuid) == "completed", timeout=15, what="call completed")
        wait_until(lambda: metric(server, "switchboard_sip_responses_total", direction="in", method="BYE", code="200"), timeout=10,
                   what=lambda: f"phone's 200 to our BYE; baresip:\n{phone.log()[-1500:]}")
        # It was offered SDES keys (it is reached over TLS), does not do SDES, and the call stayed plain RTP.
        wait_until(lambda: metric(server, "switchboard_phone_rtp_arrived_total"), timeout=5, what="the leg closed")
        assert metric(server, "switchboard_phone_srtp_legs_total") == 0

        # A second call, hung up by the phone: its BYE arrives over TLS.
        r = app_request(server, app_id, key, "POST", "/v1/calls", json={
            "to": [{"type": "sip", "uri": f"sip:alice@{app_id}"}], "from": {"type": "phone", "number": "14155550100"},
            "ncco": [{"action": "conversation", "name": "tls-room-2"}]})
        uuid = r.json()["uuid"]
        wait_until(lambda: call_status(server, app_id, key, uuid) == "answered", timeout=20, what="second call answered")
        phone.command("/hangup")
        wait_until(lambda: call_status(server, app_id, key, uuid) == "completed", timeout=15,
                   what=lambda: f"completed by the phone's BYE; baresip:\n{phone.log()[-1500:]}")
        assert metric(server, "switchboard_sip_requests_total", direction="in", method="BYE") >= 1
        assert metric(server, "switchboard_sip_tls_handshake_failures_total", reason="failed") == 0
    finally:
        if phone:
            phone.stop()
        server.stop()


def carrier_certificate(tmp_path, dns_name: str | None = None):
    """A carrier's own CA and a certificate for 127.0.0.1 (or for `dns_name` alone) it signs (baresip's sip_certificate:
    chain and key in one file)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test Carrier CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "carrier")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(dns_name) if dns_name else x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    ca_file = tmp_path / "carrier-ca.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    bundle = tmp_path / "carrier.pem"
    bundle.write_bytes(cert.public_bytes(serialization.Encoding.PEM)
                       + key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                           serialization.NoEncryption()))
    return ca_file, bundle


def test_outbound_call_through_a_tls_trunk_to_baresip(tmp_path):
    ca_file, bundle = carrier_certificate(tmp_path)
    server, sip_port, tls_port, _ = start_tls_server(tmp_path, ["--sip-tls-ca", str(ca_file)])
    carrier = None
    try:
        # baresip listens for SIP over TLS on its SIP port + 1 with the carrier's certificate.
        carrier = Baresip(f"<sip:{CARRIER_PHONE}@127.0.0.1>;regint=0;answermode=auto", tmp_path / "carrier", tone=660,
                          extra_config=f"sip_certificate {bundle}\n")
        carrier_tls = carrier.sip_port + 1
        wait_until(lambda: _listening(carrier_tls), timeout=10, what=lambda: f"baresip TLS listener:\n{carrier.log()}")
        r = api(server, "POST", "/v1/sip/trunks", json={"name": "tls-carrier", "host": "127.0.0.1", "port": carrier_tls,
                                                         "transport": "tls", "allow": ["127.0.0.0/8"], "health_interval": 0})
        assert r.status_code == 201, r.text
        trunk = r.json()
        assert trunk["transport"] == "tls" and trunk["port"] == carrier_tls
        assert api(server, "GET", f"/v1/sip/trunks/{trunk['id']}").json()["transport"] == "tls"
        app_id, key = application(server)
        assert api(server, "POST", "/number/buy", data={"country": "US", "msisdn": APP_NUMBER, "trunk_id": trunk["id"]}).status_code == 200

        r = app_request(server, app_id, key, "POST", "/v1/calls", json={
            "to": [{"type": "phone", "number": CARRIER_PHONE}], "from": {"type": "phone", "number": APP_NUMBER},
            "ncco": [{"action": "conversation", "name": "carrier-room"}]})
        assert r.status_code == 201, r.text
        uuid = r.json()["uuid"]
        wait_until(lambda: call_status(server, app_id, key, uuid) == "answered", timeout=20,
                   what=lambda: f"carrier answered over TLS ({call_status(server, app_id, key, uuid)}); baresip:\n"
                                f"{carrier.log()[-2000:]}\nserver:\n{server.log()[-3000:]}")
        assert metric(server, "switchboard_sip_tls_connections") == 1
        assert metric(server, "switchboard_sip_tls_handshake_failures_total", reason="failed") == 0
        r = app_request(server, app_id, key, "PUT", f"/v1/calls/{uuid}", json={"action": "hangup"})
        assert r.status_code in (200, 204), r.text
        wait_until(lambda: call_status(server, app_id, key, uuid) == "completed", timeout=15, what="completed")
        wait_until(lambda: metric(server, "switchboard_sip_responses_total", direction="in", method="BYE", code="200"), timeout=10,
                   what=lambda: f"the carrier's 200 to our BYE; baresip:\n{carrier.log()[-1500:]}")
    finally:
        if carrier:
            carrier.stop()
        server.stop()


def test_untrusted_tls_trunk_fails_the_call(tmp_path):
    """The same carrier without --sip-tls-ca: its certificate is not trusted, the call fails and nothing is answered."""
    _, bundle = carrier_certificate(tmp_path)
    server, sip_port, tls_port, _ = start_tls_server(tmp_path)
    carrier = None
    try:
        carrier = Baresip(f"<sip:{CARRIER_PHONE}@127.0.0.1>;regint=0;answermode=auto", tmp_path / "carrier",
                          extra_config=f"sip_certificate {bundle}\n")
        wait_until(lambda: _listening(carrier.sip_port + 1), timeout=10, what="baresip TLS listener")
        r = api(server, "POST", "/v1/sip/trunks", json={"name": "tls-carrier", "host": "127.0.0.1", "port": carrier.sip_port + 1,
                                                         "transport": "tls", "health_interval": 0})
        trunk = r.json()
        app_id, key = application(server)
        assert api(server, "POST", "/number/buy", data={"country": "US", "msisdn": APP_NUMBER, "trunk_id": trunk["id"]}).status_code == 200
        r = app_request(server, app_id, key, "POST", "/v1/calls", json={
            "to": [{"type": "phone", "number": CARRIER_PHONE}], "from": {"type": "phone", "number": APP_NUMBER},
            "ncco": [{"action": "conversation", "name": "never"}]})
        uuid = r.json()["uuid"]
        wait_until(lambda: call_status(server, app_id, key, uuid) in ("failed", "rejected", "unanswered", "completed"), timeout=20,
                   what=lambda: f"call failed ({call_status(server, app_id, key, uuid)})")
        assert call_status(server, app_id, key, uuid) != "completed"
        assert metric(server, "switchboard_sip_tls_handshake_failures_total", reason="failed") == 1
        assert "Incoming call" not in carrier.log() and "incoming call" not in carrier.log()
    finally:
        if carrier:
            carrier.stop()
        server.stop()


def test_garbage_and_silence_on_the_tls_port_are_closed_and_counted(tmp_path):
    server, sip_port, tls_port, ca = start_tls_server(tmp_path)
    try:
        before = metric(server, "switchboard_sip_tls_handshake_failures_total", reason="failed")
        with socket.create_connection(("127.0.0.1", tls_port), timeout=5) as plain:
            plain.sendall(b"OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nContent-Length: 0\r\n\r\n")
            try:
                assert plain.recv(4096) in (b"",) or True
            except ConnectionResetError:
                pass
        wait_until(lambda: metric(server, "switchboard_sip_tls_handshake_failures_total", reason="failed") == before + 1, timeout=10,
                   what="the failed handshake counted")
        # A real TLS client verifying the development CA and 127.0.0.1 is answered meanwhile.
        context = ssl.create_default_context(cafile=ca)
        with socket.create_connection(("127.0.0.1", tls_port), timeout=5) as raw, \
                context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            local = tls.getsockname()[1]
            tls.sendall((f"OPTIONS sip:probe@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TLS 127.0.0.1:{local};branch=z9hG4bK-tls1;rport\r\n"
                         f"From: <sip:probe@127.0.0.1>;tag=1\r\nTo: <sip:probe@127.0.0.1>\r\nCall-ID: tls-probe\r\n"
                         f"CSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n").encode())
            reply = tls.recv(65536).decode()
            assert reply.startswith("SIP/2.0 "), reply
            assert "Via: SIP/2.0/TLS" in reply
            # Oversized garbage after the handshake: the stream is dropped as on TCP.
            tls.sendall(b"X" * 70000)
            tls.settimeout(10)
            try:
                assert tls.recv(4096) == b""
            except (ConnectionResetError, ssl.SSLError):
                pass
        # The gauge drops when the server's loop has torn the connection down, which can come a moment after
        # the client saw it closed.
        wait_until(lambda: metric(server, "switchboard_sip_tls_connections") == 0, timeout=5,
                   what="the dropped TLS connection no longer counted")
        assert server.process.poll() is None

        # The CLI makes a TLS trunk (port 5061 unless given) and lists it as such.
        from test_sip_edge import cli
        p = cli(server, "trunks", "create", "--host", "127.0.0.1", "--name", "cli-tls", "--transport", "tls")
        assert p.returncode == 0, p.stderr
        row = next(l for l in cli(server, "trunks", "list").stdout.splitlines() if "cli-tls" in l)
        assert "tls" in row.split() and "5061" in row.split(), row
        p = cli(server, "trunks", "create", "--host", "127.0.0.1", "--name", "cli-sctp", "--transport", "sctp")
        assert p.returncode != 0 and "transport must be udp, tcp or tls" in p.stderr, p.stderr
    finally:
        server.stop()


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.parametrize("args, message", [
    (["--sip-tls-port", "nope"], "--sip-tls-port: expected 0-65535"),
    (["--sip-port", "47000", "--sip-tls-port", "47000"], "TLS needs a port of its own"),
    (["--sip-tls-ca", "/nonexistent/ca.pem"], "--sip-tls-ca: cannot read"),
])
def test_bad_tls_settings_are_refused_at_start(tmp_path, args, message):
    import subprocess
    from rig import server_binary
    p = subprocess.run([str(server_binary()), "serve", "--listen", "127.0.0.1:0", "--data", str(tmp_path), *args],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and message in p.stdout + p.stderr, p.stdout + p.stderr


def test_serve_help_lists_the_tls_flags():
    import subprocess
    from rig import server_binary
    out = subprocess.run([str(server_binary()), "help", "serve"], capture_output=True, text=True, timeout=10).stdout
    assert "--sip-tls-port" in out and "SWITCHBOARD_SIP_TLS_PORT" in out and "--sip-tls-ca" in out
