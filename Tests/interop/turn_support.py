"""coturn for the tests of clients that go through TURN (`turn`, `turn_server` fixtures on loopback: import them into
the test module; `coturn` on another address), and what it granted."""
import contextlib
import shutil
import subprocess
import tempfile
import time

import pytest

from rig import free_port, free_udp_port, wait_until
from video_support import video_server


@pytest.fixture(scope="module")
def turn():
    """coturn on loopback, checking TURN REST API credentials made with `secret`, relaying between loopback ports."""
    with coturn("127.0.0.1") as server:
        yield server


@contextlib.contextmanager
def coturn(address):
    """coturn listening and relaying on `address` (of this, the root, namespace), to loopback peers too."""
    if not shutil.which("turnserver"):
        pytest.skip("coturn is not installed (scripts/setup --test installs it)")
    secret, port, relay = "relay-secret-" + str(time.monotonic_ns()), free_udp_port(), free_port()
    work = tempfile.mkdtemp(prefix="turn-")
    log = open(f"{work}/turn.log", "w")
    proc = subprocess.Popen(
        ["turnserver", "-n", "--no-cli", "--no-tls", "--no-dtls", f"--listening-ip={address}", f"--relay-ip={address}",
         f"--listening-port={port}", f"--min-port={relay}", f"--max-port={relay + 50}", "--allow-loopback-peers",
         "--use-auth-secret", f"--static-auth-secret={secret}", "--realm=switchboard.test", "--fingerprint",
         f"--db={work}/turndb", f"--pidfile={work}/turn.pid", "--log-file=stdout", "--simple-log", "--verbose"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: "listener opened on" in open(f"{work}/turn.log").read() or proc.poll() is not None, timeout=10,
                   what="coturn listening")
        assert proc.poll() is None, open(f"{work}/turn.log").read()[-2000:]
        yield {"secret": secret, "url": f"turn:{address}:{port}?transport=udp", "log": f"{work}/turn.log"}
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def turn_server(turn):
    """A server that gives its clients a STUN server and the TURN server, with credentials made with its secret."""
    with video_server(settings=["--ice-servers", f"stun:127.0.0.1:3478,{turn['url']}", "--turn-secret", turn["secret"]]) as server:
        yield server


def allocations(turn, name_part):
    """The TURN allocations coturn granted to usernames containing `name_part`."""
    return [line for line in open(turn["log"]) if "ALLOCATE processed, success" in line and name_part in line]


def releases(turn, name_part):
    """The allocations of usernames containing `name_part` their clients deleted (a Refresh with LIFETIME 0)."""
    return [line for line in open(turn["log"]) if "refreshed," in line and "lifetime=0" in line and name_part in line]
