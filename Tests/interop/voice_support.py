"""Voice applications for the interop tests: the answer/event webhook server, an application pointing at it,
its users' tokens, and `switchboard client call` (the Swift SDK) run as a user would run it."""

from __future__ import annotations

import contextlib
import json
import subprocess
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import requests

from accounts_support import bearer, token
from rig import serve_http, server_binary
from sip_support import Baresip, api, start_sip_server, trunk_and_number


class Hooks:
    """The application's webhook server: answers with `ncco(query)`, records every event (answering an event with
    `reply(path, event)` when that gives an NCCO, else 204), and serves `files` (path -> WAV bytes) for NCCO `stream`
    and `musicOnHoldUrl`."""

    def __init__(self):
        self.events = []
        self.answers = []
        self.files = {}
        self.ncco = lambda request: []
        self.reply = lambda path, event: None
        hooks = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, content_type, data):
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self):
                if self.path in hooks.files:
                    return self._reply("audio/wav", hooks.files[self.path])
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n)) if n else {}
                if self.path.startswith("/answer"):
                    hooks.answers.append(body)
                    return self._reply("application/json", json.dumps(hooks.ncco(body)).encode())
                hooks.events.append(body)
                ncco = hooks.reply(self.path, body)
                if ncco is not None:
                    return self._reply("application/json", json.dumps(ncco).encode())
                self.send_response(204)
                self.end_headers()

            do_GET = do_POST = _handle

            def log_message(self, *a):
                pass

        self.http, self.url = serve_http(Handler)

    def statuses(self, uuid):
        return [e["status"] for e in self.events if e.get("uuid") == uuid and "status" in e]

    def legs(self):
        return list(dict.fromkeys(e["uuid"] for e in self.events if "status" in e))


def application(server, hooks) -> tuple[str, str]:
    """An application whose answer and event URLs are `hooks`; returns its id and private key."""
    r = api(server, "POST", "/v2/applications", json={"name": "phone calls", "capabilities": {"voice": {"webhooks": {
        "answer_url": {"address": hooks.url + "/answer", "http_method": "POST"},
        "event_url": {"address": hooks.url + "/event", "http_method": "POST"}}}}})
    assert r.status_code == 201, r.text
    return r.json()["id"], r.json()["keys"]["private_key"]


async def user_calls(server, app_id, key, name, to, *, tone=440, amplitude=0.3, **body):
    """The app user `name` logs in over the realtime protocol, places a call to `to` (`call:create`, with `body`'s
    other fields) and publishes a `tone` into its conversation and subscribes to the mix: (the realtime connection,
    the call:create reply, the audio member)."""
    from media_support import sine_track
    from rooms_support import AudioMember, Realtime
    rt = await Realtime(server.ws_url).connect()
    await rt.login(user_jwt(server, app_id, key, name))
    created = await rt.request("call:create", {"to": to, **body})
    member = AudioMember(rt, created["conversation_id"])
    await member.publish(sine_track(tone, amplitude=amplitude))
    await member.subscribe()
    return rt, created, member


def user_jwt(server, app_id, key, name) -> str:
    """Creates the user `name` (or finds it there) and returns a token to log in as it."""
    r = requests.post(server.http_url + "/v1/users", headers={"Authorization": bearer(token(app_id, key))}, json={"name": name}, timeout=10)
    assert r.status_code in (201, 409), r.text
    return token(app_id, key, sub=name, ttl=3600)


def client_call_started(server, to: str, name: str, jwt: str, *args: str, seconds: float, timeout: float = 60):
    """`client_call` on a thread of its own, for a test that acts while the call runs: returns a function that
    waits for the call's end and returns its events."""
    import threading
    result = {}
    thread = threading.Thread(target=lambda: result.update(events=client_call(server, to, name, jwt, *args, seconds=seconds, timeout=timeout)))
    thread.start()

    def finished() -> list[dict]:
        thread.join(timeout=timeout)
        assert "events" in result, "the client call did not finish"
        return result["events"]
    return finished


def client_call(server, to: str, name: str, jwt: str, *args: str, seconds: float, timeout: float = 60) -> list[dict]:
    """Runs `switchboard client call TO --as NAME --token JWT ARGS --seconds SECONDS --json` to its end; returns the
    JSON events it printed, in order."""
    p = subprocess.run([str(server_binary()), "client", "call", to, "--as", name, "--token", jwt, "--server", server.http_url,
                        *args, "--seconds", str(seconds), "--json"], capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"client call exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


@contextlib.contextmanager
def answering_phones(tmp: Path, phones: list[tuple[str, str, Path, str]]):
    """A SIP server, an application whose webhooks are a `Hooks`, and for each (number, name, source WAV, caller id)
    an auto-answering baresip at `number` saying the WAV once per call, on a trunk of its own that owns the caller
    id calls to it are placed from. Yields (server, hooks, app_id, key)."""
    server, _ = start_sip_server()
    started = []
    try:
        hooks = Hooks()
        app_id, key = application(server, hooks)
        for number, name, source, caller in phones:
            started.append(Baresip(f"<sip:{number}@127.0.0.1>;regint=0;answermode=auto", tmp / name, source=source))
            trunk_and_number(server, started[-1], app_id, caller, name=name)
        yield server, hooks, app_id, key
    finally:
        for phone in started:
            phone.stop()
        server.stop()


def place_call(setup, to: str, from_: str, ncco: list, **options) -> str:
    """`POST /v1/calls` to the phone number `to` from `from_`, the body built with the official `vonage` SDK's
    `CreateCallRequest` (`options`: its other fields); returns the call's uuid."""
    import vonage_voice
    server, hooks, app_id, key = setup
    body = vonage_voice.CreateCallRequest(to=[{"type": "phone", "number": to}], from_={"type": "phone", "number": from_},
                                          ncco=ncco, **options).model_dump(by_alias=True, exclude_none=True)
    r = requests.post(server.http_url + "/v1/calls", json=body, headers={"Authorization": bearer(token(app_id, key))}, timeout=10)
    assert r.status_code == 201, r.text
    return r.json()["uuid"]
