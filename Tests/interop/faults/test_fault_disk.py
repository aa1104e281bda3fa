"""The data directory runs out of space: writes fail with a clear 5xx JSON error, nothing that was
acknowledged is lost, and writes succeed again once space returns.

The data directory is a 16 MiB tmpfs mounted in a private mount namespace (`unshare -m`) that only the
server sees; the test reaches into it through /proc/<pid>/root to fill and free it."""
import errno
import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest
import requests

from conv_support import binary
from faults_support import App, Server, names, stored_texts
from rig import free_port, wait_until

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root and unshare")


class NamespacedServer(Server):
    """A Server whose data directory is a tmpfs inside a mount namespace held open by a sleeper process."""

    def __init__(self, size="16m"):
        self.outer = tempfile.mkdtemp(prefix="sb-diskfull-")
        vol = os.path.join(self.outer, "vol")
        os.mkdir(vol)
        self.holder = subprocess.Popen(
            ["unshare", "-m", "--propagation", "private", "sh", "-c",
             f"mount -t tmpfs -o size={size} sb-fault-tmpfs {vol} && exec sleep 3600"])
        root = f"/proc/{self.holder.pid}/root"
        wait_until(lambda: os.path.ismount(root + vol) or self.holder.poll() is not None, timeout=5, what="tmpfs mounted")
        assert self.holder.poll() is None, "unshare/mount failed"
        super().__init__(data=vol)
        self.log_path = os.path.join(self.outer, "server.log")
        self.inside = root + vol  # the tmpfs as seen from outside the namespace

    def start(self):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            ["nsenter", "-t", str(self.holder.pid), "-m", "--", binary("switchboard", "SWITCHBOARD_BIN"), "serve",
             "--listen", f"127.0.0.1:{self.port}", "--data", self.data, "--media-port", "0", "--log-level", "warn"],
            stdout=log, stderr=subprocess.STDOUT, cwd="/")
        log.close()

        def up():
            if self.proc.poll() is not None:
                raise AssertionError(f"switchboard exited: {self.log()}")
            try:
                return requests.get(self.base + "/health", timeout=0.5).status_code == 200
            except requests.RequestException:
                return False
        wait_until(up, timeout=20, what="switchboard /health")
        acc = json.load(open(os.path.join(self.inside, "account.json")))
        self.auth = (acc["api_key"], acc["api_secret"])
        return self

    def fill(self):
        """Writes a filler file until the volume has no space left."""
        with open(os.path.join(self.inside, "filler"), "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError as e:
                assert e.errno == errno.ENOSPC, e

    def free(self):
        os.remove(os.path.join(self.inside, "filler"))

    def close(self):
        self.kill()
        self.holder.kill()
        self.holder.wait()
        shutil.rmtree(self.outer, ignore_errors=True)


def test_disk_full_fails_writes_with_507_json_keeps_acknowledged_data_and_recovers():
    """Fill the data volume: event writes answer 507 with the JSON error shape (code storage-full), reads
    and /health keep working; free the space: writes succeed again; after kill -9 and restart every write
    acknowledged before, during and after the full disk is there."""
    s = NamespacedServer()
    try:
        s.start()
        app = App(s)
        users = names("disk", 2)
        for u in users:
            app.user(u)
        cid = app.conversation()["id"]
        for u in users:
            app.join(cid, u)
        acked = {}

        def write(text):
            r = app.call("POST", f"/v1/conversations/{cid}/events", sub=users[0], json={"type": "text", "body": {"text": text}})
            if r.status_code == 201:
                acked[text] = r.json()["id"]
            return r

        for i in range(20):
            assert write(f"before-{i}").status_code == 201
        s.fill()
        # SQLite may still fit a few writes into pages it already holds; within a few hundred it must refuse.
        refused = None
        for i in range(400):
            r = write(f"full-{i}" + "x" * 2000)
            if r.status_code != 201:
                refused = r
                break
        assert refused is not None, "writes kept succeeding on a full volume"
        assert refused.status_code == 507, (refused.status_code, refused.text)
        err = refused.json()
        assert err["code"] == "storage-full" and "not saved" in err["detail"], err
        assert requests.get(s.base + "/health", timeout=2).status_code == 200
        assert app.call("GET", f"/v1/conversations/{cid}", sub=users[0]).status_code == 200
        assert s.proc.poll() is None, "the server died on a full disk"
        s.free()
        wait_until(lambda: write(f"after-{time.monotonic()}").status_code == 201, timeout=10, what="writes after space returned")
        for i in range(20):
            assert write(f"after-{i}").status_code == 201
        stored_live = stored_texts(app, cid, users[0])
        s.kill()
        s.start()
        stored = stored_texts(app, cid, users[0])
        missing = [t for t, i in acked.items() if stored.get(t) != i]
        assert not missing, f"acknowledged writes lost: {missing[:5]}"
        assert stored == stored_live
    finally:
        s.close()
