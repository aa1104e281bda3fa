"""The video benchmark's replayed capture is real video: `switchboard load --video-capture`
replays a libvpx 720p encode through the SFU, and an aiortc subscriber in the same room
decodes 1280x720 frames from it (its PLI on joining makes the load publisher go back to the
capture's key frame). The load report shows the capture's rate, no loss and added latency
read from the RTP padding that carries each packet's send time, and that the server sent subscribers'
runs of a frame's packets as segmented (UDP GSO) sends."""

import asyncio
import json
import os
import subprocess
import sys
import time

import pytest

from media_support import MediaServer, loopback_ice, subscribe
from rig import REPO, artifact_path, run_async, server_binary


@pytest.fixture
def server():
    s = MediaServer()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def capture():
    path = artifact_path("capture-720p.ivf")
    made = subprocess.run([sys.executable, str(REPO / "scripts" / "make-video-capture"), path, "--seconds", "3",
                           "--kbps", "1500"], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    summary = json.loads(made.stdout)
    assert summary["width"] == 1280 and summary["height"] == 720 and summary["frames"] == 90, summary
    assert 1200 < summary["kbps"] < 1800, summary
    yield path, summary
    os.remove(path)


def test_replayed_capture_decodes_at_720p_through_the_sfu(server, capture):
    loopback_ice()
    path, summary = capture
    load = subprocess.Popen(
        [str(server_binary()), "load", "--dev-routes", "--server", server.base, "--room", "capture", "--rooms", "1",
         "--publishers", "1", "--subscribers", "3", "--video-capture", path, "--warmup", "1", "--duration", "5",
         "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    async def scenario():
        # The load publisher connects first; then this subscriber joins the same room.
        deadline = time.time() + 20
        while time.time() < deadline:
            stats = await server.arequest("GET", "/test/media/stats")
            if any(worker.get("producers", 0) >= 2 for worker in stats):
                break
            await asyncio.sleep(0.1)
        pc, tracks = await subscribe(server, "capture-0")
        for _ in range(100):
            if any(t.kind == "video" for t in tracks):
                break
            await asyncio.sleep(0.05)
        video = next(t for t in tracks if t.kind == "video")
        sizes = []
        started = time.time()
        while time.time() - started < 2.5:
            frame = await asyncio.wait_for(video.recv(), timeout=5)
            sizes.append((frame.width, frame.height))
        await pc.close()
        return sizes

    try:
        sizes = run_async(scenario(), 60)
        out, err = load.communicate(timeout=60)
    finally:
        load.kill()
    assert load.returncode == 0, err
    report = json.loads(out)
    print("aiortc decoded", len(sizes), "frames", set(sizes), "load report", report)
    assert len(sizes) >= 45, f"only {len(sizes)} frames in 2.5 s"
    assert set(sizes) == {(1280, 720)}
    assert report["capture_width"] == 1280 and report["capture_height"] == 720
    # 3 load subscribers each receive what the publisher sent: the capture's packets and 50 audio packets a second
    # (fewer when a loaded machine holds the publisher back; the server is judged on forwarding what it got).
    assert report["sent_packets_per_s"] > 0.5 * (report["capture_packets_per_s"] + 50), report
    assert report["received_packets_per_s"] > 0.9 * 3 * report["sent_packets_per_s"], report
    assert report["loss_percent"] < 1, report
    assert 0 < report["latency_ms_p50"] < 50, report
    # Each frame's packets come as one burst, so a subscriber's share of a receive batch left in one segmented
    # (UDP GSO) send, and the frames aiortc decoded above came that way.
    assert report["server_segmented_share"] > 0, report
