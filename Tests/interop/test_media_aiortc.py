"""(a) aiortc publishes a 440 Hz Opus sine through the SFU; another aiortc receives it."""

import asyncio

import pytest

from media_support import (MediaServer, collect_audio, dominant_frequency, loopback_ice, publish, sine_track,
                           subscribe, tracks_arrive)
from rig import run_async


@pytest.fixture
def server():
    s = MediaServer()
    yield s
    s.stop()


def test_subscriber_hears_the_publishers_sine(server):
    loopback_ice()

    async def scenario():
        publisher = await publish(server, "sine", [sine_track(440)])
        await asyncio.sleep(1.0)
        subscriber, tracks = await subscribe(server, "sine")
        await tracks_arrive(tracks)
        assert tracks, "no remote track"
        # Skip the first second (jitter buffer fill, Opus start-up), then analyse 2 s.
        await collect_audio(tracks[0], 1.0)
        samples, rate = await collect_audio(tracks[0], 2.0)
        stats = await server.arequest("GET", f"/test/media/transports/{publisher.transport_id}/stats")
        await subscriber.close()
        await publisher.close()
        return samples, rate, stats

    samples, rate, stats = run_async(scenario(), 60)
    assert any(p["packets"] > 50 for p in stats["producers"].values()), stats
    # aiortc offers AES-256-GCM, AES-128-GCM and AES-CM; the server's first choice is AES-128-GCM.
    assert stats["srtpProfile"] == "SRTP_AEAD_AES_128_GCM", stats
    assert abs(samples).max() > 1000, "silence received"
    frequency = dominant_frequency(samples, rate)
    print("dominant", frequency, "peak", abs(samples).max(), stats)
    assert abs(frequency - 440) < 5, frequency
