"""Mixed audio rooms with aiortc members over the realtime gateway (`rtc:*`): three speakers
with different tones and twenty listeners; every listener receives one mixed track holding all
three tones, and each speaker hears the other two but not itself (mix-minus)."""
import asyncio

import numpy as np
import pytest

from rig import start_server
from rooms_support import (collect_audio, create_room, drain, join_room, loopback_ice, media_stats, mix_track, sine_track,
                           tone_strength, wait_for)

TONES = {"speaker-a": 440.0, "speaker-b": 660.0, "speaker-c": 880.0}
LISTENERS = 20


@pytest.fixture(scope="module")
def server():
    s = start_server(["--media-port", "0", "--threads", "2"], https=False, dev=True,
                     env={"SWITCHBOARD_ROOM_MODE": "mixed"})
    yield s
    s.stop()
    s.cleanup()


def tone_strengths(samples, rate):
    return {name: tone_strength(samples, rate, tone) for name, tone in TONES.items()}


def test_mixed_room_listeners_hear_all_speakers_and_speakers_not_themselves(server):
    loopback_ice()
    api = server.http_url + "/rooms/api"
    room = create_room(api, "Mixed tones")

    async def member(name):
        return await join_room(server, room, name)

    async def scenario():
        speakers = {}
        for name, tone in TONES.items():
            rt, m, member_id = await member(name)
            await m.publish(sine_track(tone, amplitude=0.2))
            await m.subscribe()
            speakers[name] = (rt, m, member_id)
        others = await asyncio.gather(*(member(f"listener-{i}") for i in range(LISTENERS)))
        for _, m, _ in others:
            await m.subscribe()
        listeners = [m for _, m, _ in others]
        everyone = listeners + [s[1] for s in speakers.values()]
        await wait_for(lambda: all(mix_track(m) is not None for m in everyone), timeout=30, what="a mixed track on everyone")
        # One m-line each: the mix, not one per speaker.
        for m in everyone:
            assert len([t for t in m.track_info.values()]) == 1, m.track_info
        await asyncio.sleep(2.0)  # jitter buffers fill, Opus settles

        async def hear(m):
            await drain(mix_track(m))
            samples, rate = await collect_audio(mix_track(m), 2.0)
            return tone_strengths(samples, rate), float(np.abs(samples).max())

        heard = await asyncio.gather(*(hear(m) for m in everyone))
        stats = media_stats(server.http_url)
        for m in everyone:
            await m.close()
        for rt in [s[0] for s in speakers.values()] + [o[0] for o in others]:
            await rt.close()
        return heard, stats

    heard, stats = asyncio.run(asyncio.wait_for(scenario(), 180))
    print("listener 0", heard[0], "speakers", heard[LISTENERS:], "stats", stats)
    # Listeners consume the mix only: one consumer each, not one per speaker.
    assert sum(s["consumers"] for s in stats) == LISTENERS + len(TONES)
    for i, (strengths, peak) in enumerate(heard[:LISTENERS]):
        assert peak > 1000, f"listener {i} got silence: {strengths}"
        for name, strength in strengths.items():
            assert strength > 20, f"listener {i} does not hear {name}: {strengths}"
    for k, name in enumerate(TONES):
        strengths, peak = heard[LISTENERS + k]
        assert peak > 1000, f"{name} got silence: {strengths}"
        others = [strength for other, strength in strengths.items() if other != name]
        assert min(others) > 20, f"{name} does not hear the others: {strengths}"
        # Mix-minus: its own tone is at the noise floor, far below the others (Opus leaves a trace).
        assert strengths[name] < 0.05 * min(others), f"{name} hears itself: {strengths}"
