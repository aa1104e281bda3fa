"""The mixer benchmark's load is real audio through a real mix: `switchboard load --mode mixed` makes a
mixed `/test/media` room whose publishers send Opus (a 400 Hz tone, loud for 100 ms each second), an
aiortc subscriber joining the same room receives one track, the mix, and decodes the tone from it; the
load report shows its listeners receiving the mix without loss, a per-burst latency and the worker's
tick lateness. `--legs` runs legs that speak and hear their own mix-minus. A bad mode is the JSON error."""

import asyncio
import json
import subprocess
import time
import urllib.error

import numpy as np
import pytest

from media_support import MediaServer, collect_audio, dominant_frequency, loopback_ice, subscribe, tracks_arrive
from rig import run_async, server_binary


@pytest.fixture
def server():
    s = MediaServer()
    yield s
    s.stop()


def load(server, *args, duration=4):
    return subprocess.Popen([str(server_binary()), "load", "--server", server.base, "--warmup", "1", "--duration",
                             str(duration), "--json", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process):
    try:
        out, err = process.communicate(timeout=90)
    finally:
        process.kill()
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_mixed_load_is_a_real_mix_an_aiortc_listener_decodes(server):
    loopback_ice()
    # The speakers must still be speaking when the aiortc listener, connected after the load's own peers, has
    # listened for its 3 s: a mixer with no audio coming in sends nothing (DTX), and a load that ended first
    # leaves the listener waiting for a frame that never comes (a slow machine's aiortc takes seconds to connect).
    run = load(server, "--mode", "mixed", "--room", "mixload", "--publishers", "3", "--subscribers", "5", duration=15)

    async def scenario():
        deadline = time.time() + 30
        while time.time() < deadline:
            stats = await server.arequest("GET", "/test/media/stats")
            if any(worker.get("consumers", 0) >= 5 for worker in stats):
                break
            await asyncio.sleep(0.1)
        pc, tracks = await subscribe(server, "mixload-0")
        await tracks_arrive(tracks)
        assert len(tracks) == 1, tracks  # the mix, not the three speakers
        await asyncio.sleep(1.0)
        samples, rate = await collect_audio(tracks[0], 2.0)
        await pc.close()
        return samples, rate

    samples, rate = run_async(scenario(), 60)
    report = finish(run)
    print("peak", float(np.abs(samples).max()), "dominant", dominant_frequency(samples, rate), "report", report)
    assert abs(dominant_frequency(samples, rate) - 400) < 10
    assert float(np.abs(samples).max()) > 3000  # the loud bursts are in it
    assert report["mode"] == "mixed" and report["consumers"] == 5, report
    # One mixed packet per listener per 20 ms, nothing missing.
    assert report["received_packets_per_s"] > 0.9 * 5 * 50, report
    assert report["loss_percent"] < 1, report
    assert 0 < report["latency_ms_p50"] < 200, report
    assert report["server_ticks"] > 150 and report["server_tick_lateness_us_p99"] < 200_000, report
    # The tick follows the loudest speaker: most ticks run as soon as its packet is in, not at a deadline.
    assert report["server_early_ticks"] > 0.5 * report["server_ticks"], report
    # Few ran at their deadline without that speaker's packet, which then came after (heard a tick late).
    assert 0 <= report["server_missed_ticks"] < 0.25 * report["server_ticks"], report
    # What a late tick waited behind: the ticks' own work and the receive passes, measured (not zero) and
    # ordered (p99 within the longest).
    for what in ("server_tick_work_us", "server_receive_pass_us"):
        assert 0 < report[f"{what}_p99"] <= report[f"{what}_max"] < 1_000_000, report


def test_mixed_legs_each_hear_a_mix(server):
    report = finish(load(server, "--mode", "mixed", "--legs", "--publishers", "8"))
    assert report["legs"] and report["consumers"] == 8, report
    assert report["received_packets_per_s"] > 0.9 * 8 * 50, report
    assert report["loss_percent"] < 1, report


def test_a_bad_mode_or_capacity_is_the_json_error(server):
    for query in ("mode=auto", "mode=loud", "mode=mixed&capacity=0", "mode=mixed&capacity=x"):
        with pytest.raises(urllib.error.HTTPError) as failure:
            server.request("POST", f"/test/media/rooms/bad/subscribe?{query}")
        assert failure.value.code == 400
        body = json.loads(failure.value.read())
        assert body["type"].endswith("bad-request") and ("mode" in body["detail"] or "capacity" in body["detail"]), body
    run = subprocess.run([str(server_binary()), "load", "--server", server.base, "--mode", "loud"],
                         capture_output=True, text=True, timeout=30)
    assert run.returncode != 0 and "--mode: expected sfu or mixed" in run.stderr, run.stderr
