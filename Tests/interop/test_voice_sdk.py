"""The Voice API driven by the official `vonage` SDK over HTTPS (application id + private key), with a
webhook receiver on 127.0.0.1 that records what the server sends to event and answer URLs."""
import json
from http.server import BaseHTTPRequestHandler

import pytest
import requests

from rig import serve_http, wait_until
from video_support import account, start_video_server

vonage = pytest.importorskip("vonage")


class Hooks:
    """Records every request; answers 204 (events) or what `replies[path]` says."""

    def __init__(self):
        self.requests = []
        self.replies = {}
        hooks = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                hooks.requests.append({"method": self.command, "path": self.path, "body": json.loads(body) if body else None})
                status, reply = hooks.replies.get(self.path.split("?")[0], (204, None))
                self.send_response(status)
                data = json.dumps(reply).encode() if reply is not None else b""
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _record

            def log_message(self, *a):
                pass

        self.http, self.url = serve_http(Handler)

    def events(self, uuid):
        return [r["body"] for r in self.requests if r["path"] == "/event" and r["body"] and r["body"].get("uuid") == uuid]

    def statuses(self, uuid):
        return [e.get("status") for e in self.events(uuid) if "status" in e]


@pytest.fixture(scope="module")
def server():
    s = start_video_server(https=True)
    yield s
    code = s.stop()
    s.cleanup()
    assert code == 0, s.log()[-4000:]


@pytest.fixture(scope="module")
def hooks():
    h = Hooks()
    yield h
    h.http.shutdown()


@pytest.fixture(scope="module")
def voice(server, hooks):
    from vonage_application import ApplicationConfig
    mp = pytest.MonkeyPatch()
    mp.setenv("REQUESTS_CA_BUNDLE", str(server.ca_file))
    host = f"127.0.0.1:{server.https_port}"
    acc = account(server)
    admin = vonage.Vonage(vonage.Auth(api_key=acc["api_key"], api_secret=acc["api_secret"]),
                          vonage.HttpClientOptions(api_host=host, rest_host=host, video_host=host))
    app = admin.application.create_application(ApplicationConfig(name="voice sdk test"))
    client = vonage.Vonage(vonage.Auth(application_id=app.id, private_key=app.keys.private_key),
                           vonage.HttpClientOptions(api_host=host, video_host=host))
    yield client, app
    mp.undo()


def raw(server, client, method, path, **kw):
    """A request the SDK has no model for (an `app` endpoint), signed with the SDK's application JWT."""
    token = client.http_client.auth.generate_application_jwt()
    token = token.decode() if isinstance(token, bytes) else token
    return requests.request(method, f"https://127.0.0.1:{server.https_port}{path}", json=kw.get("json"),
                            headers={"Authorization": f"Bearer {token}"}, verify=str(server.ca_file), timeout=10)


def test_phone_call_with_sdk_ncco_fails_without_a_trunk_and_is_listed(server, hooks, voice):
    from vonage_voice import CreateCallRequest, ListCallsFilter
    from vonage_voice.models.ncco import Input, Notify, Talk
    client, _ = voice
    ncco = [Talk(text="Hello from the SDK", loop=2, language="en-GB"),
            Input(type=["dtmf"], dtmf={"maxDigits": 2, "timeOut": 5}, eventUrl=[hooks.url + "/input"]),
            Notify(payload={"step": 1}, eventUrl=[hooks.url + "/notify"])]
    created = client.voice.create_call(CreateCallRequest(
        to=[{"type": "phone", "number": "447700900001"}], from_={"type": "phone", "number": "14155550100"},
        ncco=ncco, event_url=[hooks.url + "/event"]))
    assert created.status == "started" and created.direction == "outbound"
    assert created.conversation_uuid.startswith("CON-")
    wait_until(lambda: "failed" in hooks.statuses(created.uuid), timeout=10, what="failed event")
    assert hooks.statuses(created.uuid) == ["started", "failed"]
    failed = hooks.events(created.uuid)[-1]
    assert "trunk" in failed["reason"] and failed["duration"] == "0" and failed["to"] == "447700900001"
    info = client.voice.get_call(created.uuid)
    assert info.status == "failed" and info.to.number == "447700900001" and info.conversation_uuid == created.conversation_uuid
    listed = client.voice.list_calls(ListCallsFilter(conversation_uuid=created.conversation_uuid))
    calls = listed[0] if isinstance(listed, tuple) else listed
    assert [c.uuid for c in calls] == [created.uuid]
    # A finished call cannot be hung up.
    from vonage_http_client.errors import HttpRequestError
    with pytest.raises(HttpRequestError):
        client.voice.hangup(created.uuid)


def test_bad_options_and_bad_nccos_are_refused(server, voice):
    client, _ = voice
    base = {"to": [{"type": "phone", "number": "447700900001"}], "from": {"type": "phone", "number": "14155550100"}}
    talk = [{"action": "talk", "text": "x"}]
    for bad in [{"machine_detection": "maybe"}, {"advanced_machine_detection": {"behavior": "continue", "mode": "guess"}},
                {"advanced_machine_detection": {"behavior": "continue", "beep_timeout": 10}},
                {"advanced_machine_detection": {"behavior": "drop"}}, {"advanced_machine_detection": "hangup"}]:
        r = raw(server, client, "POST", "/v1/calls", json={**base, "ncco": talk, **bad})
        assert r.status_code == 400 and r.json()["code"] == "invalid-machine-detection", (bad, r.text)
    r = raw(server, client, "POST", "/v1/calls", json={**base, "to": [{"type": "app", "user": "someone"}], "ncco": talk,
                                                        "machine_detection": "hangup"})
    assert r.status_code == 400 and "phone or sip" in r.json()["detail"], r.text
    r = raw(server, client, "POST", "/v1/calls", json={**base, "ncco": [{"action": "talk", "text": "x"}, {"action": "input", "dtmf": {"maxDigits": 99}}]})
    assert r.status_code == 400 and r.json()["code"] == "ncco-out-of-range"
    assert "action 1 (input): dtmf.maxDigits" in r.json()["detail"]


def test_app_call_rings_then_sdk_hangup_cancels_it(server, hooks, voice):
    client, _ = voice
    assert raw(server, client, "POST", "/v1/users", json={"name": "callee"}).status_code == 201
    r = raw(server, client, "POST", "/v1/calls", json={
        "to": [{"type": "app", "user": "callee"}], "from": {"type": "phone", "number": "14155550100"},
        "ncco": [{"action": "conversation", "name": "after-answer"}], "event_url": [hooks.url + "/event"], "ringing_timer": 60})
    assert r.status_code == 201, r.text
    uuid = r.json()["uuid"]
    wait_until(lambda: "ringing" in hooks.statuses(uuid), timeout=10, what="ringing")
    # Not answered yet: a transfer is refused, a hangup cancels the leg.
    assert raw(server, client, "PUT", f"/v1/calls/{uuid}", json={"action": "transfer", "destination": {
        "type": "ncco", "ncco": [{"action": "talk", "text": "x"}]}}).status_code == 409
    client.voice.hangup(uuid)
    wait_until(lambda: "cancelled" in hooks.statuses(uuid), timeout=10, what="cancelled")
    assert hooks.statuses(uuid) == ["started", "ringing", "cancelled"]
    # The SDK's call model has no `app` endpoint, so this one is read without it.
    got = raw(server, client, "GET", f"/v1/calls/{uuid}").json()
    assert got["status"] == "cancelled" and got["to"] == {"type": "app", "user": "callee"}


def test_app_call_times_out_after_the_ringing_timer(server, hooks, voice):
    client, _ = voice
    raw(server, client, "POST", "/v1/users", json={"name": "sleeper"})
    r = raw(server, client, "POST", "/v1/calls", json={
        "to": [{"type": "app", "user": "sleeper"}], "from": {"type": "phone", "number": "14155550100"},
        "ncco": [{"action": "talk", "text": "x"}], "event_url": [hooks.url + "/event"], "ringing_timer": 1})
    uuid = r.json()["uuid"]
    wait_until(lambda: "timeout" in hooks.statuses(uuid), timeout=15, what="timeout")
    assert hooks.statuses(uuid) == ["started", "ringing", "timeout"]
