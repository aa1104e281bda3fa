"""Audio rooms with aiortc members over the realtime gateway (`rtc:*`): two speakers with
different tones and twenty listeners in one conversation; every listener hears both tones."""
import asyncio

import numpy as np
import pytest

from rig import start_server
from rooms_support import (collect_audio, create_room, dominant_frequency, join_room, loopback_ice, media_stats, sine_track,
                           wait_for)

TONES = {"speaker-a": 440.0, "speaker-b": 1000.0}
LISTENERS = 20


@pytest.fixture(scope="module")
def server():
    s = start_server(["--media-port", "0", "--threads", "2"], https=False, dev=True)
    yield s
    s.stop()
    s.cleanup()


def test_twenty_listeners_hear_both_speakers(server):
    loopback_ice()
    api = server.http_url + "/rooms/api"
    room = create_room(api, "Tones")

    async def member(name):
        return await join_room(server, room, name)

    async def scenario():
        # One listener is there first, so it is renegotiated as each speaker arrives.
        early_rt, early, _ = await member("listener-early")
        assert (await early.subscribe())["offer"] is None
        speakers = {}
        for name, tone in TONES.items():
            rt, m, member_id = await member(name)
            await m.publish(sine_track(tone))
            await m.subscribe()
            speakers[name] = (rt, m, member_id)
        others = await asyncio.gather(*(member(f"listener-{i}") for i in range(LISTENERS - 1)))
        for _, m, _ in others:
            await m.subscribe()
        listeners = [early] + [m for _, m, _ in others]
        ids = {name: s[2] for name, s in speakers.items()}
        await wait_for(lambda: all(l.track_of(ids["speaker-a"]) and l.track_of(ids["speaker-b"]) for l in listeners),
                       timeout=20, what="both tracks on every listener")
        assert early.offers >= 2, "the early listener was not renegotiated"
        # Each speaker hears the other one too.
        assert speakers["speaker-a"][1].track_of(ids["speaker-b"]) is not None
        await asyncio.sleep(1.5)  # jitter buffers fill, Opus settles

        async def hear(listener):
            out = {}
            for name in TONES:
                samples, rate = await collect_audio(listener.track_of(ids[name]), 1.5)
                out[name] = (dominant_frequency(samples, rate), float(np.abs(samples).max()))
            return out

        heard = await asyncio.gather(*(hear(l) for l in listeners))
        stats = media_stats(server.http_url)
        for m in listeners + [s[1] for s in speakers.values()]:
            await m.close()
        for rt in [early_rt] + [s[0] for s in speakers.values()] + [o[0] for o in others]:
            await rt.close()
        return heard, stats

    heard, stats = asyncio.run(asyncio.wait_for(scenario(), 150))
    print("heard", heard[:3], "stats", stats)
    assert sum(s["consumers"] for s in stats) >= LISTENERS * 2
    for i, result in enumerate(heard):
        for name, tone in TONES.items():
            frequency, peak = result[name]
            assert peak > 1000, f"listener {i} got silence from {name}: {result}"
            assert abs(frequency - tone) < 10, f"listener {i} heard {frequency} Hz from {name}, expected {tone}: {result}"
