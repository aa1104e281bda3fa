"""`switchboard load --janus` and `--joins` against a real Janus in the bench rig's namespace
(scripts/janus-rig): the generator's peers publish and subscribe through Janus's VideoRoom and
receive what Janus forwards, speak and listen through its AudioBridge and receive the mix, join times come back for both servers, and the rig leaves no
namespace behind when it is stopped."""

import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from rig import REPO, server_binary

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("janus"),
    reason="needs root (network namespaces) and Janus (scripts/setup --test)")


@pytest.fixture
def janus():
    """The rig run standalone: Janus in a namespace of its own; yields (namespace, API URL)."""
    rig = subprocess.Popen([str(REPO / "scripts" / "janus-rig")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True, env={**os.environ, "RIG_CPUS": "0"})
    line = rig.stdout.readline()
    match = re.search(r"in namespace (\S+): (\S+)", line)
    assert match, f"janus-rig did not start: {line}{rig.stdout.read() if rig.poll() is not None else ''}"
    namespace, url = match.groups()
    try:
        yield namespace, url
    finally:
        rig.send_signal(signal.SIGTERM)
        rig.wait(timeout=20)
    deadline = time.monotonic() + 10
    while namespace in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout:
        assert time.monotonic() < deadline, f"namespace {namespace} left behind"
        time.sleep(0.1)


def load(namespace, *args, timeout=90):
    run = subprocess.run(["ip", "netns", "exec", namespace, str(server_binary()), "load", "--json", *args],
                         capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_janus_forwards_every_publisher_to_every_subscriber(janus):
    namespace, url = janus
    for srtp in ("gcm", "cm"):
        r = load(namespace, "--janus", url, "--publishers", "2", "--subscribers", "3", "--video", "--duration", "2",
                 "--warmup", "1", "--srtp", srtp)
        assert r["server"] == "janus"
        # 2 publishers x (50 audio + 100 video packets/s) to 3 subscribers.
        assert r["received_packets_per_s"] > 0.9 * 2 * 150 * 3, r
        assert r["loss_percent"] < 1, r
        assert 0 < r["latency_ms_p50"] < 50, r


def test_janus_audiobridge_mixes_speakers_to_listeners_and_legs(janus):
    """The mixed-room load through AudioBridge: every listener (and, with --legs, every speaking leg) receives
    one mixed stream at 50 packets/s, and the speaker's bursts come back in the mix (latency measured)."""
    namespace, url = janus
    r = load(namespace, "--janus", url, "--mode", "mixed", "--publishers", "3", "--subscribers", "4", "--duration", "3",
             "--warmup", "1")
    assert (r["server"], r["mode"], r["legs"], r["consumers"]) == ("janus", "mixed", False, 4), r
    # At least 4 listeners x one 20 ms mix each (AudioBridge also sends the speakers their mix).
    assert r["received_packets_per_s"] > 0.9 * 4 * 50, r
    assert r["loss_percent"] < 1, r
    assert 0 < r["latency_ms_p50"] < 500, r
    r = load(namespace, "--janus", url, "--mode", "mixed", "--legs", "--publishers", "4", "--duration", "3", "--warmup", "1")
    assert (r["legs"], r["consumers"]) == (True, 4), r
    assert r["sent_packets_per_s"] > 0.9 * 4 * 50, r
    assert r["received_packets_per_s"] > 0.9 * 4 * 50, r
    assert r["loss_percent"] < 1, r


def test_join_time_is_measured_for_janus_and_switchboard(janus, tmp_path):
    namespace, url = janus
    r = load(namespace, "--janus", url, "--joins", "3")
    assert r["joins"] == 3
    assert 0 < r["join_ms"]["p50"] < 2000, r
    assert r["publisher_connected_ms"]["p50"] <= r["join_ms"]["p50"]

    server = subprocess.Popen(
        ["ip", "netns", "exec", namespace, str(server_binary()), "serve", "--dev", "--listen", "127.0.0.1:8080", "--data", str(tmp_path),
         "--media-port", "0", "--sip-port", "0", "--threads", "1", "--log-level", "warn"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while subprocess.run(["ip", "netns", "exec", namespace, "curl", "-sf", "http://127.0.0.1:8080/health"],
                             capture_output=True).returncode != 0:
            assert time.monotonic() < deadline, "switchboard did not start"
            time.sleep(0.1)
        r = load(namespace, "--server", "http://127.0.0.1:8080", "--joins", "3")
        assert r["server"] == "switchboard"
        assert 0 < r["join_ms"]["p50"] < 2000, r
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_a_janus_that_is_not_there_is_a_clear_error():
    run = subprocess.run([str(server_binary()), "load", "--janus", "http://127.0.0.1:9/janus", "--timeout", "20"],
                         capture_output=True, text=True, timeout=40)
    assert run.returncode == 1
    assert "switchboard load:" in run.stderr
