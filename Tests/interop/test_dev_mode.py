"""Production is the default: the demo app servers, the playground's token helper and the media test
routes exist only with `serve --dev`, which refuses to listen beyond loopback."""
import subprocess
import tempfile

import pytest
import requests

from rig import free_port, server_binary, start_server

DEVELOPMENT_ROUTES = [
    ("POST", "/rooms/api/auth", {"name": "mallory"}),
    ("GET", "/rooms/api/rooms", None),
    ("POST", "/rooms/api/rooms", {"display_name": "x"}),
    ("POST", "/phone/api/auth", {"name": "mallory"}),
    ("GET", "/phone/api/answer?to=15550100", None),
    ("POST", "/phone/api/answer", {"to": "bob"}),
    ("POST", "/phone/api/event", {"status": "started"}),
    ("GET", "/phone/api/config", None),
    ("POST", "/video/api/session", {}),
    ("POST", "/video/api/token", {"sessionId": "1_x"}),
    ("POST", "/test/media/rooms/r/publish", {"sdp": "v=0"}),
    ("POST", "/test/media/rooms/r/subscribe", {}),
    ("POST", "/test/media/transports/t/answer", {"sdp": "v=0"}),
    ("GET", "/test/media/transports/t/stats", None),
    ("GET", "/test/media/stats", None),
    ("DELETE", "/test/media/transports/t", None),
]


@pytest.fixture(scope="module")
def production():
    s = start_server(https=False)
    yield s
    s.cleanup()


@pytest.mark.parametrize("method,path,body", DEVELOPMENT_ROUTES, ids=[f"{m} {p}" for m, p, _ in DEVELOPMENT_ROUTES])
def test_without_dev_every_development_route_is_not_found(production, method, path, body):
    r = requests.request(method, production.http_url + path, json=body, timeout=5)
    assert r.status_code == 404, (method, path, r.status_code, r.text[:200])
    assert r.json()["title"] == "Not Found"


def test_without_dev_the_loopback_caller_gets_no_playground_token(production):
    # The account's own API still works with credentials; only the no-credentials loopback helper is gone.
    r = requests.post(production.http_url + "/video/api/session", timeout=5)
    assert r.status_code == 404


def test_with_dev_the_development_routes_answer_and_the_start_banner_says_so():
    s = start_server(https=False, env={"SWITCHBOARD_DEV": "true"})
    try:
        r = requests.post(s.http_url + "/rooms/api/auth", json={"name": "devuser"}, timeout=10)
        assert r.status_code == 200 and r.json()["jwt"]
        assert requests.get(s.http_url + "/test/media/stats", timeout=5).status_code == 200
        assert requests.get(s.http_url + "/phone/api/config", timeout=5).json() == {"test_number": None}
        assert "DEVELOPMENT MODE" in s.log()
    finally:
        s.cleanup()


@pytest.mark.parametrize("listen", ["0.0.0.0", "::"])
def test_dev_on_a_non_loopback_address_refuses_to_start(listen):
    data = tempfile.mkdtemp(prefix="sb-dev-")
    host = f"[{listen}]" if ":" in listen else listen
    run = subprocess.run([str(server_binary()), "serve", "--dev", "--listen", f"{host}:{free_port()}", "--data", data,
                          "--media-port", "0"], capture_output=True, text=True, timeout=20)
    assert run.returncode != 0
    assert "loopback only" in run.stderr + run.stdout, run.stderr


def test_dev_is_refused_for_a_non_loopback_https_listener_too():
    data = tempfile.mkdtemp(prefix="sb-dev-")
    run = subprocess.run([str(server_binary()), "serve", "--dev", "--listen", f"127.0.0.1:{free_port()}",
                          "--https", f"0.0.0.0:{free_port()}", "--data", data, "--media-port", "0"],
                         capture_output=True, text=True, timeout=20)
    assert run.returncode != 0 and "--https" in run.stderr + run.stdout
