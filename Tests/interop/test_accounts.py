"""Accounts, applications, users, numbers and JWT auth against a live server, with the official SDKs and our CLI."""

from __future__ import annotations

import json
import os
import random
import re
import time
import uuid
import warnings
from pathlib import Path

import jwt as pyjwt
import pytest
from cryptography.hazmat.primitives import serialization
from jwt.warnings import InsecureKeyLengthWarning
from vonage import Auth, HttpClientOptions, Vonage
from vonage_application import ApplicationConfig
from vonage_application.common import ApplicationUrl, Capabilities, Rtc, RtcWebhooks, Voice, VoiceUrl, VoiceWebhooks
from vonage_http_client.errors import AuthenticationError, NotFoundError
from vonage_jwt import JwtClient
from vonage_users import User

from accounts_support import CLIENT_ACL, ROOT, Server, bearer, token
from video_support import VideoPeer


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("accounts") / "data").start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def app(server):
    """An application with a user 'alice': (id, private key, alice's id)."""
    app_id, key = server.create_app("matrix")
    r = server.request("POST", "/v1/users", bearer(token(app_id, key)), json={"name": "alice"})
    assert r.status_code == 201, r.text
    return app_id, key, r.json()["id"]


@pytest.fixture
def sdk(server, app, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", server.ca)
    a = server.account
    app_id, key, _ = app
    auth = Auth(api_key=a["api_key"], api_secret=a["api_secret"], application_id=app_id, private_key=key)
    return Vonage(auth, HttpClientOptions(api_host=f"127.0.0.1:{server.https_port}", max_retries=0, timeout=10))


def public_pem(private_key: str) -> bytes:
    k = serialization.load_pem_private_key(private_key.encode(), password=None)
    return k.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


# (a) the official SDK over HTTPS with the development CA

def test_sdk_manages_applications(sdk):
    voice = Voice(webhooks=VoiceWebhooks(
        answer_url=VoiceUrl(address="https://example.com/answer", http_method="GET", connect_timeout=500, socket_timeout=3000),
        event_url=VoiceUrl(address="https://example.com/event", http_method="POST")))
    rtc = Rtc(webhooks=RtcWebhooks(event_url=ApplicationUrl(address="https://example.com/rtc", http_method="POST")))
    created = sdk.application.create_application(ApplicationConfig(name="sdk app", capabilities=Capabilities(voice=voice, rtc=rtc)))
    # The SDK's model has no private_key field; the raw answer carries it, once.
    assert sdk.http_client.last_response.json()["keys"]["private_key"].startswith("-----BEGIN PRIVATE KEY-----")
    assert created.capabilities.voice.webhooks.answer_url.address == "https://example.com/answer"
    assert created.capabilities.voice.webhooks.answer_url.connect_timeout == 500

    apps, _ = sdk.application.list_applications()
    assert created.id in [a.id for a in apps]
    got = sdk.application.get_application(created.id)
    assert got.name == "sdk app" and "private_key" not in sdk.http_client.last_response.json()["keys"]
    assert got.keys.public_key.strip() == created.keys.public_key.strip()

    updated = sdk.application.update_application(created.id, ApplicationConfig(name="renamed", capabilities=Capabilities(rtc=rtc)))
    assert updated.name == "renamed" and updated.capabilities.voice is None

    sdk.application.delete_application(created.id)
    with pytest.raises(NotFoundError):
        sdk.application.get_application(created.id)


def test_sdk_manages_users(sdk):
    name = f"sdk-{uuid.uuid4().hex[:8]}"
    user = sdk.users.create_user(User(name=name, display_name="SDK User"))
    assert user.id.startswith("USR-")
    users, _ = sdk.users.list_users()
    assert name in [u.name for u in users]
    assert sdk.users.get_user(user.id).display_name == "SDK User"
    assert sdk.users.update_user(user.id, User(name=name, display_name="Changed")).display_name == "Changed"
    sdk.users.delete_user(user.id)
    with pytest.raises(NotFoundError):
        sdk.users.get_user(user.id)


def test_sdk_with_wrong_secret_is_refused(server, app, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", server.ca)
    bad = Vonage(Auth(api_key=server.account["api_key"], api_secret="not-the-secret"),
                 HttpClientOptions(api_host=f"127.0.0.1:{server.https_port}", max_retries=0))
    with pytest.raises(AuthenticationError):
        bad.application.list_applications()


def test_the_video_sdk_signs_with_the_account_secret_without_a_key_length_warning(server):
    # The OpenTok SDK signs each call's X-OPENTOK-AUTH token (HS256) with the account's secret; PyJWT warns on
    # every one when the key is shorter than the hash (RFC 7518 3.2), as a 16-character secret was.
    import opentok
    a = server.account
    client = opentok.Client(a["api_key"], a["api_secret"], api_url=server.http_url)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InsecureKeyLengthWarning)
        session = client.create_session()
        assert session.session_id and client.generate_token(session.session_id)


# (b) tokens made elsewhere are accepted; ours verify elsewhere

def test_vonage_jwt_tokens_are_accepted(server, app):
    app_id, key, alice = app
    client = JwtClient(app_id, key)
    app_token = client.generate_application_jwt().decode()
    assert server.request("GET", "/v1/users", bearer(app_token)).status_code == 200
    user_token = client.generate_application_jwt({"sub": "alice", "acl": CLIENT_ACL}).decode()
    r = server.request("GET", f"/v1/users/{alice}", bearer(user_token))
    assert r.status_code == 200 and r.json()["name"] == "alice"


def test_cli_jwt_verifies_under_pyjwt(server, app, tmp_path):
    app_id, key, _ = app
    (tmp_path / "app.key").write_text(key)
    out = server.cli("jwt", "--app-id", app_id, "--key-file", str(tmp_path / "app.key"), "--subject", "alice",
                     "--acl", "client", "--ttl", "6h").stdout.strip()
    assert pyjwt.get_unverified_header(out) == {"alg": "RS256", "typ": "JWT"}
    claims = pyjwt.decode(out, public_pem(key), algorithms=["RS256"])
    assert claims["application_id"] == app_id and claims["sub"] == "alice"
    assert claims["exp"] - claims["iat"] == 6 * 3600
    assert set(claims["acl"]["paths"]) == set(CLIENT_ACL["paths"])
    uuid.UUID(claims["jti"])
    # An application token without sub or acl, and the server accepts both.
    app_token = server.cli("jwt", "--app-id", app_id, "--key-file", str(tmp_path / "app.key")).stdout.strip()
    assert set(pyjwt.decode(app_token, public_pem(key), algorithms=["RS256"])) == {"application_id", "iat", "jti", "exp"}
    assert server.request("GET", "/v1/users/alice", bearer(out)).status_code == 200
    assert server.request("GET", "/v1/users", bearer(app_token)).status_code == 200


# (c) refused tokens

def _tampered(t: str) -> str:
    h, p, s = t.split(".")
    claims = json.loads(pyjwt.utils.base64url_decode(p))
    claims["sub"] = "mallory"
    return h + "." + pyjwt.utils.base64url_encode(json.dumps(claims).encode()).decode() + "." + s


def _alg_none(app_id: str) -> str:
    enc = lambda o: pyjwt.utils.base64url_encode(json.dumps(o).encode()).decode()  # noqa: E731
    now = int(time.time())
    return enc({"alg": "none", "typ": "JWT"}) + "." + enc({"application_id": app_id, "iat": now, "exp": now + 300}) + "."


def _hs256_with_public_key(app_id: str, key: str) -> str:
    # PyJWT refuses to use a PEM as an HMAC secret, so sign by hand: this is what an attacker would do.
    import hashlib
    import hmac
    enc = lambda o: pyjwt.utils.base64url_encode(json.dumps(o).encode()).decode()  # noqa: E731
    now = int(time.time())
    signing_input = enc({"alg": "HS256", "typ": "JWT"}) + "." + enc({"application_id": app_id, "iat": now, "exp": now + 300})
    sig = hmac.new(public_pem(key), signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + pyjwt.utils.base64url_encode(sig).decode()


BAD_TOKENS = {
    "tampered": (lambda s, a, k, o: _tampered(token(a, k, sub="alice", acl=CLIENT_ACL)), 401),
    "expired": (lambda s, a, k, o: token(a, k, iat_offset=-3600, ttl=600), 401),
    "not yet valid (nbf)": (lambda s, a, k, o: token(a, k, extra={"nbf": int(time.time()) + 600}), 401),
    "lifetime over 24h": (lambda s, a, k, o: token(a, k, ttl=25 * 3600), 401),
    "no exp": (lambda s, a, k, o: pyjwt.encode({"application_id": a, "iat": int(time.time()), "jti": "x"}, k, algorithm="RS256"), 401),
    "wrong application": (lambda s, a, k, o: token(o, k), 401),
    "unknown application": (lambda s, a, k, o: token(str(uuid.uuid4()), k), 401),
    "alg confusion HS256 with public key": (lambda s, a, k, o: _hs256_with_public_key(a, k), 401),
    "alg none": (lambda s, a, k, o: _alg_none(a), 401),
    "unknown user": (lambda s, a, k, o: token(a, k, sub="nobody", acl=CLIENT_ACL), 401),
    "ACL without users": (lambda s, a, k, o: token(a, k, sub="alice", acl={"paths": {"/*/conversations/**": {}}}), 403),
}


@pytest.mark.parametrize("case", list(BAD_TOKENS))
def test_bad_tokens_are_refused(server, app, case):
    app_id, key, alice = app
    other_id, _ = server.create_app("other")
    make, status = BAD_TOKENS[case]
    r = server.request("GET", f"/v1/users/{alice}", bearer(make(server, app_id, key, other_id)))
    assert r.status_code == status, r.text
    if status == 401:
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
        # Nothing in the answer tells which check failed (or whether the application exists).
        assert r.json()["detail"] in ("Missing or invalid credentials.", "The token has expired.")


def test_user_may_only_patch_itself(server, app):
    app_id, key, alice = app
    r = server.request("POST", "/v1/users", bearer(token(app_id, key)), json={"name": f"bob-{uuid.uuid4().hex[:6]}"})
    bob = r.json()["id"]
    alice_token = bearer(token(app_id, key, sub="alice", acl=CLIENT_ACL))
    assert server.request("PATCH", f"/v1/users/{bob}", alice_token, json={"display_name": "x"}).status_code == 403
    assert server.request("PATCH", f"/v1/users/{alice}", alice_token, json={"display_name": "Alice"}).status_code == 200


# (d) the authentication matrix documented in docs/api-compatibility.md

COLUMNS = ["none", "bad Basic", "unknown key", "account", "app JWT", "user JWT", "expired JWT", "other app JWT"]


def documented_matrix() -> dict[str, dict[str, int]]:
    text = (ROOT / "docs" / "api-compatibility.md").read_text()
    section = text.split("## Authentication matrix", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\|\s*`([A-Z]+ [^`]+)`[^|]*\|(.*)\|\s*$", line)
        if m:
            cells = [c.strip() for c in m.group(2).split("|")]
            if len(cells) == len(COLUMNS) and all(c.isdigit() for c in cells):
                rows[m.group(1)] = dict(zip(COLUMNS, map(int, cells)))
    return rows


@pytest.fixture(scope="module")
def other_app(server):
    """A second application of the same account: (id, private key)."""
    return server.create_app("matrix other")


def credentials(server: Server, app, other_app, column: str) -> str | None:
    app_id, key, _ = app
    return {
        "none": lambda: None,
        "bad Basic": lambda: server.basic(secret="wrong-secret"),
        "unknown key": lambda: server.basic(key="0badc0de", secret="whatever"),
        "account": lambda: server.basic(),
        "app JWT": lambda: bearer(token(app_id, key)),
        "user JWT": lambda: bearer(token(app_id, key, sub="alice", acl=CLIENT_ACL)),
        "expired JWT": lambda: bearer(token(app_id, key, iat_offset=-7800, ttl=600)),
        "other app JWT": lambda: bearer(token(*other_app)),
    }[column]()


def project(server: Server, app, other_app, column: str) -> str:
    """The video project the column's credentials act as: the api key for Basic, else the token's application."""
    if column in ("bad Basic", "unknown key", "account"):
        return server.account["api_key"]
    return other_app[0] if column == "other app JWT" else app[0]


def fresh_number(server: Server) -> str:
    n = "1415" + str(random.randint(1_000_000, 9_999_999))
    assert server.request("POST", "/number/buy", server.basic(), data={"country": "US", "msisdn": n}).status_code == 200
    return n


def fresh_user(server: Server, app) -> str:
    r = server.request("POST", "/v1/users", bearer(token(app[0], app[1])), json={"name": f"u-{uuid.uuid4().hex[:8]}"})
    return r.json()["id"]


class VideoTarget:
    """A video session of the matrix application with a client connected and publishing."""

    def __init__(self, server: Server, app):
        self.server, self.app = server, app
        r = server.request("POST", "/session/create", bearer(token(app[0], app[1])), data={"p2p.preference": "disabled"})
        assert r.status_code == 200, r.text
        self.session = r.json()[0]["session_id"]
        self.peer = self.join()
        self.stream = self.peer.publish("matrix cam")

    def join(self) -> VideoPeer:
        client = token(self.app[0], self.app[1], ttl=3600,
                       extra={"session_id": self.session, "role": "publisher", "scope": "session.connect", "sub": "video"})
        return VideoPeer(self.server, self.session, client)

    def path(self, project: str, tail: str) -> str:
        return f"/v2/project/{project}/session/{self.session}{tail}"


@pytest.fixture(scope="module")
def video(server, app):
    return VideoTarget(server, app)


# How to send each route: (method, path, keyword arguments) built per request, so deletes get their own target.
# Arguments: the server, the matrix application, the video target and the project the credentials act as.
ROUTES = {
    "GET /health": lambda s, a, v, p: ("GET", "/health", {}),
    "GET /metrics": lambda s, a, v, p: ("GET", "/metrics", {}),
    "GET /": lambda s, a, v, p: ("GET", "/", {}),
    "GET /v1/diagnostics/echo": lambda s, a, v, p: ("GET", "/v1/diagnostics/echo", {}),
    "POST /v2/applications": lambda s, a, v, p: ("POST", "/v2/applications", {"json": {"name": "m"}}),
    "GET /v2/applications": lambda s, a, v, p: ("GET", "/v2/applications", {}),
    "GET /v2/applications/{id}": lambda s, a, v, p: ("GET", f"/v2/applications/{a[0]}", {}),
    "PUT /v2/applications/{id}": lambda s, a, v, p: ("PUT", f"/v2/applications/{a[0]}", {"json": {"name": "matrix"}}),
    "DELETE /v2/applications/{id}": lambda s, a, v, p: ("DELETE", f"/v2/applications/{s.create_app('doomed')[0]}", {}),
    "POST /v1/users": lambda s, a, v, p: ("POST", "/v1/users", {"json": {"name": f"m-{uuid.uuid4().hex[:8]}"}}),
    "POST /v0.1/users": lambda s, a, v, p: ("POST", "/v0.1/users", {"json": {"name": f"m-{uuid.uuid4().hex[:8]}"}}),
    "GET /v1/users": lambda s, a, v, p: ("GET", "/v1/users", {}),
    "GET /v1/users/{id}": lambda s, a, v, p: ("GET", f"/v1/users/{a[2]}", {}),
    "PATCH /v1/users/{id}": lambda s, a, v, p: ("PATCH", f"/v1/users/{a[2]}", {"json": {"display_name": "Alice"}}),
    "DELETE /v1/users/{id}": lambda s, a, v, p: ("DELETE", f"/v1/users/{fresh_user(s, a)}", {}),
    "POST /number/buy": lambda s, a, v, p: ("POST", "/number/buy", {"data": {"country": "US", "msisdn": "1415" + str(random.randint(1_000_000, 9_999_999))}}),
    "POST /number/update": lambda s, a, v, p: ("POST", "/number/update", {"data": {"msisdn": fresh_number(s), "app_id": a[0]}}),
    "POST /number/cancel": lambda s, a, v, p: ("POST", "/number/cancel", {"data": {"msisdn": fresh_number(s)}}),
    "GET /account/numbers": lambda s, a, v, p: ("GET", "/account/numbers", {}),
    "POST /session/create": lambda s, a, v, p: ("POST", "/session/create", {"data": {"p2p.preference": "disabled"}}),
    "POST /v2/project/{pid}/session/{sid}/signal":
        lambda s, a, v, p: ("POST", v.path(p, "/signal"), {"json": {"type": "chat", "data": "matrix"}}),
    "POST /v2/project/{pid}/session/{sid}/connection/{cid}/signal":
        lambda s, a, v, p: ("POST", v.path(p, f"/connection/{v.peer.connection_id}/signal"), {"json": {"type": "chat", "data": "matrix"}}),
    "DELETE /v2/project/{pid}/session/{sid}/connection/{cid}":
        lambda s, a, v, p: ("DELETE", v.path(p, f"/connection/{v.join().connection_id}"), {}),
    "GET /v2/project/{pid}/session/{sid}/stream": lambda s, a, v, p: ("GET", v.path(p, "/stream"), {}),
    "GET /v2/project/{pid}/session/{sid}/stream/{stream_id}": lambda s, a, v, p: ("GET", v.path(p, f"/stream/{v.stream}"), {}),
    "POST /v2/project/{pid}/session/{sid}/stream/{stream_id}/mute":
        lambda s, a, v, p: ("POST", v.path(p, f"/stream/{v.stream}/mute"), {}),
    "POST /v2/project/{pid}/session/{sid}/mute":
        lambda s, a, v, p: ("POST", v.path(p, "/mute"), {"json": {"active": False, "excludedStreamIds": []}}),
    "POST /v1/calls": lambda s, a, v, p: ("POST", "/v1/calls", {"json": CALL}),
    "GET /v1/calls": lambda s, a, v, p: ("GET", "/v1/calls", {}),
    "GET /v1/calls/{uuid}": lambda s, a, v, p: ("GET", f"/v1/calls/{fresh_call(s, a)}", {}),
    "PUT /v1/calls/{uuid}": lambda s, a, v, p: ("PUT", f"/v1/calls/{fresh_call(s, a)}", {"json": {"action": "hangup"}}),
    "GET /v1/sip/trunks": lambda s, a, v, p: ("GET", "/v1/sip/trunks", {}),
    "POST /v1/sip/trunks": lambda s, a, v, p: ("POST", "/v1/sip/trunks", {"json": {"name": f"t-{uuid.uuid4().hex[:8]}", "host": "192.0.2.10"}}),
}

# A call to the matrix application's user alice (nobody answers: it rings until hung up).
CALL = {"to": [{"type": "app", "user": "alice"}], "from": {"type": "phone", "number": "14155550100"},
        "ncco": [{"action": "talk", "text": "matrix"}], "ringing_timer": 60}


def fresh_call(server: Server, app) -> str:
    r = server.request("POST", "/v1/calls", bearer(token(app[0], app[1])), json=CALL)
    assert r.status_code == 201, r.text
    return r.json()["uuid"]


def test_matrix_documents_every_route():
    documented = documented_matrix()
    missing = [r for r in ROUTES if r not in documented]
    assert not missing, f"routes without a row in docs/api-compatibility.md: {missing}"


@pytest.mark.parametrize("route", list(ROUTES))
def test_auth_matrix(server, app, other_app, video, route):
    expected = documented_matrix()[route]
    got = {}
    for column in COLUMNS:
        method, path, kw = ROUTES[route](server, app, video, project(server, app, other_app, column))
        r = server.request(method, path, credentials(server, app, other_app, column), **kw)
        got[column] = r.status_code
        if r.status_code == 401:
            assert "WWW-Authenticate" in r.headers
        if r.status_code == 404:
            # The documented JSON error shape.
            assert {"type", "title", "detail", "code"} <= set(r.json()), r.text
    assert got == expected


# (e) the tutorial, replayed with the CLI

def test_cli_tutorial(server, tmp_path):
    work = tmp_path / "tutorial"
    work.mkdir()
    out = server.cli("apps", "create", "Phone to App", "--voice-answer-url", "https://example.com/voice/answer",
                     "--voice-event-url", "https://example.com/voice/event", "--rtc-event-url", "https://example.com/rtc",
                     cwd=work, https=True)
    assert "Phone to App" in out.stdout
    app_file = json.loads((work / "switchboard_app.json").read_text())
    app_id = app_file["id"]
    key_file = work / "Phone to App.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert key_file.read_text() == app_file["private_key"]

    number = "1415" + str(random.randint(1_000_000, 9_999_999))
    server.cli("numbers", "buy", "--country", "US", "--number", number, https=True)
    server.cli("apps", "link", app_id, "--number", number, https=True)
    listed = json.loads(server.cli("numbers", "list", "--json").stdout)
    assert {"msisdn": number, "app_id": app_id}.items() <= next(n for n in listed if n["msisdn"] == number).items()

    alice = json.loads(server.cli("users", "create", "--name", "Alice", "--display-name", "Alice A", "--json", cwd=work).stdout)
    assert alice["id"].startswith("USR-")
    assert "Alice" in server.cli("users", "list", cwd=work).stdout

    jwt_alice = server.cli("jwt", "--subject", "Alice", "--acl", "client", "--ttl", "6h", cwd=work).stdout.strip()
    r = server.request("GET", f"/v1/users/{alice['id']}", bearer(jwt_alice))
    assert r.status_code == 200 and r.json()["display_name"] == "Alice A"
    # The client ACL covers users but not the account-level Applications API.
    assert server.request("POST", "/v2/applications", bearer(jwt_alice), json={"name": "x"}).status_code == 403
    # A token limited to conversations may not read users.
    narrow = server.cli("jwt", "--subject", "Alice", "--acl", '{"paths": {"/*/conversations/**": {}}}', cwd=work).stdout.strip()
    assert server.request("GET", f"/v1/users/{alice['id']}", bearer(narrow)).status_code == 403

    shown = json.loads(server.cli("apps", "show", app_id, "--json").stdout)
    assert shown["capabilities"]["voice"]["webhooks"]["answer_url"]["http_method"] == "GET"
    server.cli("apps", "update", app_id, "--name", "Renamed", "--voice-answer-method", "POST")
    assert json.loads(server.cli("apps", "show", app_id, "--json").stdout)["name"] == "Renamed"
    assert app_id in server.cli("apps", "list").stdout

    # A second create in the same directory keeps the first key.
    again = server.cli("apps", "create", "Phone to App", "--video", cwd=work, check=False)
    assert again.returncode != 0 and "already exists" in again.stderr
    server.cli("users", "delete", alice["id"], cwd=work)
    server.cli("numbers", "cancel", "--number", number)
    server.cli("apps", "delete", app_id)


def test_cli_errors_are_one_line(server, tmp_path):
    p = server.cli("apps", "show", str(uuid.uuid4()), check=False)
    assert p.returncode != 0 and p.stderr.count("\n") == 1 and "404" in p.stderr
    p = server.cli("apps", "list", "--api-secret", "wrong", check=False)
    assert p.returncode != 0 and "401" in p.stderr and p.stderr.count("\n") == 1
    p = server.cli("apps", "list", check=False, env={"SWITCHBOARD_URL": "http://127.0.0.1:9"})
    assert p.returncode != 0 and "cannot reach" in p.stderr
    p = server.cli("users", "list", cwd=tmp_path, check=False)
    assert p.returncode != 0 and "no application" in p.stderr


# (f) durability and secret rotation

def test_everything_survives_kill_9_and_rotation_keeps_the_old_secret(tmp_path):
    s = Server(tmp_path / "data").start()
    try:
        app_id, key = s.create_app("durable")
        user = s.request("POST", "/v1/users", bearer(token(app_id, key)), json={"name": "carol"}).json()["id"]
        number = "1415" + str(random.randint(1_000_000, 9_999_999))
        assert s.request("POST", "/number/buy", s.basic(), data={"country": "US", "msisdn": number}).status_code == 200
        assert s.request("POST", "/number/update", s.basic(), data={"msisdn": number, "app_id": app_id}).status_code == 200
        old = s.account
        s.kill9()
        s.start()
        assert s.account == old
        assert s.request("GET", f"/v2/applications/{app_id}", s.basic()).json()["name"] == "durable"
        assert s.request("GET", f"/v1/users/{user}", bearer(token(app_id, key))).json()["name"] == "carol"
        numbers = s.request("GET", "/account/numbers", s.basic()).json()["numbers"]
        assert [(n["msisdn"], n.get("app_id")) for n in numbers] == [(number, app_id)]

        rotated = json.loads(s.cli("account", "rotate-secret", "--json").stdout)
        assert rotated["api_key"] == old["api_key"] and rotated["api_secret"] != old["api_secret"]
        assert len(rotated["api_secret"]) == len(old["api_secret"]) == 44
        assert s.account["api_secret"] == rotated["api_secret"]
        for secret in (old["api_secret"], rotated["api_secret"]):
            assert s.request("GET", "/v2/applications", s.basic(secret=secret)).status_code == 200
        assert s.request("GET", "/v2/applications", s.basic(secret="neither")).status_code == 401
        shown = s.cli("account").stdout
        assert rotated["api_secret"] in shown and "previous secret valid until" in shown

        # Rotation is durable too, and the grace survives a restart.
        s.kill9()
        s.start()
        for secret in (old["api_secret"], rotated["api_secret"]):
            assert s.request("GET", "/v2/applications", s.basic(secret=secret)).status_code == 200
        # A second rotation ends the first secret's grace.
        s.cli("account", "rotate-secret")
        assert s.request("GET", "/v2/applications", s.basic(secret=old["api_secret"])).status_code == 401
        assert s.request("GET", "/v2/applications", s.basic(secret=rotated["api_secret"])).status_code == 200
    finally:
        s.stop()
