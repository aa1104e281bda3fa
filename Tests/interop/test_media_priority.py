"""The media workers' scheduling priority, as an operator sees it: thread names in /proc, their nice values,
and what the server says at start when it may not raise them."""
import os
import subprocess
from pathlib import Path

import pytest

from rig import server_binary, start_server

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="raising a thread's priority needs root or CAP_SYS_NICE")


def threads(pid: int) -> dict[str, list[int]]:
    """Thread name -> nice values of the threads with that name."""
    out: dict[str, list[int]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        name = (task / "comm").read_text().strip()
        # Field 19 of stat is the nice value; the name (field 2) may hold spaces, so count from the ')'.
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        out.setdefault(name, []).append(int(fields[16]))
    return out


@root_only
def test_media_workers_run_at_nice_minus_10_by_default_and_the_rest_at_the_processs():
    s = start_server(["--threads", "2"], https=False)
    try:
        t = threads(s.pid)
        assert t.get("media-0") == [-10] and t.get("media-1") == [-10], t
        assert t.get("http-0") == [0] and t.get("http-1") == [0], t
        assert 'msg="media workers" count=2 nice=-10' in s.log()
    finally:
        s.cleanup()


@root_only
def test_media_nice_is_configurable_and_inherit_leaves_the_workers_alone():
    s = start_server(["--media-nice", "-3"], https=False)
    try:
        assert set(threads(s.pid)["media-0"]) == {-3}
    finally:
        s.cleanup()
    s = start_server(https=False, env={"SWITCHBOARD_MEDIA_NICE": "inherit"})
    try:
        assert set(threads(s.pid)["media-0"]) == {0}
        assert "media workers" in s.log() and "keep the process's priority" not in s.log()
    finally:
        s.cleanup()


@root_only
def test_without_the_privilege_the_workers_keep_the_processs_priority_and_the_server_says_why():
    s = start_server(https=False, run_as=65534)
    try:
        assert set(threads(s.pid)["media-0"]) == {0}
        log = s.log()
        assert "media workers keep the process's priority" in log and "requested_nice=-10" in log, log[-2000:]
        assert "CAP_SYS_NICE" in log
    finally:
        s.cleanup()


def test_a_media_nice_out_of_range_is_refused_at_start():
    r = subprocess.run([str(server_binary()), "serve", "--media-nice", "-21", "--data", "/nonexistent"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert "--media-nice: expected -20..19 or inherit" in r.stdout + r.stderr
