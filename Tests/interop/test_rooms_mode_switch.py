"""A conversation's own `properties.room_mode` switches a live room between forwarding and mixing:
aiortc members (two tone speakers, four listeners) stay on the subscribe connection they opened and
keep hearing both tones, per speaker track while forwarding and in the one `Room mix` track while
mixing; nobody rejoins. A bad `room_mode` is refused with the JSON error shape."""
import asyncio
import uuid

import numpy as np
import pytest
import requests

from rig import start_server
from rooms_support import (app_headers, auth, collect_audio, create_room, drain, join_room, loopback_ice, sine_track,
                           tone_strength, wait_for)

TONES = {"speaker-a": 440.0, "speaker-b": 660.0}
LISTENERS = 4


@pytest.fixture(scope="module")
def server():
    # The server's default (auto above 50 members): a small room forwards until its own setting says otherwise.
    s = start_server(["--media-port", "0", "--threads", "2"], https=False, dev=True)
    yield s
    s.stop()
    s.cleanup()


def set_mode(server, room, mode):
    url = server.http_url + f"/v1/conversations/{room}"
    current = requests.get(url, headers=app_headers(server), timeout=10).json()
    properties = dict(current.get("properties") or {})
    properties["room_mode"] = mode
    r = requests.put(url, headers=app_headers(server), json={"properties": properties}, timeout=10)
    assert r.status_code == 200, r.text
    assert r.json()["properties"]["room_mode"] == mode
    return r


async def hear(track, seconds=1.5, skip=True):
    if skip:
        await drain(track)
    samples, rate = await collect_audio(track, seconds)
    return {name: tone_strength(samples, rate, tone) for name, tone in TONES.items()}, float(np.abs(samples).max())


def live_tracks(member):
    return {info["name"]: member.tracks[mid] for mid, info in member.track_info.items() if mid in member.tracks}


def test_bad_room_mode_is_refused(server):
    auth(server.http_url + "/rooms/api", "maker")  # the demo application (and its key file) exist from the first login
    headers = app_headers(server)
    r = requests.post(server.http_url + "/v1/conversations", headers=headers,
                      json={"name": "bad-" + uuid.uuid4().hex[:8], "properties": {"room_mode": "loud"}}, timeout=10)
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["code"] == "validation-failed" and "room_mode" in body["detail"], body
    ok = requests.post(server.http_url + "/v1/conversations", headers=headers,
                       json={"name": "ok-" + uuid.uuid4().hex[:8], "properties": {"room_mode": "mixed", "room_mix_above": 3}},
                       timeout=10)
    assert ok.status_code == 201, ok.text
    assert ok.json()["properties"] == {"room_mode": "mixed", "room_mix_above": 3}
    r = requests.put(server.http_url + f"/v1/conversations/{ok.json()['id']}", headers=headers,
                     json={"properties": {"room_mix_above": -2}}, timeout=10)
    assert r.status_code == 400 and r.json()["code"] == "validation-failed", r.text


def test_live_room_switches_mode_and_listeners_keep_hearing(server):
    loopback_ice()
    api = server.http_url + "/rooms/api"
    room = create_room(api, "Switching")

    async def member(name):
        return (await join_room(server, room, name))[:2]

    async def scenario():
        speakers = []
        for name, tone in TONES.items():
            rt, m = await member(name)
            await m.publish(sine_track(tone, amplitude=0.2))
            speakers.append((rt, m))
        others = await asyncio.gather(*(member(f"listener-{i}") for i in range(LISTENERS)))
        listeners = [m for _, m in others]
        for m in listeners:
            await m.subscribe()
        connections = [m.sub for m in listeners]
        phases = {}

        # 1. Forwarding (the server's auto, 6 members): one track per speaker.
        await wait_for(lambda: all(set(live_tracks(m)) == set(TONES) for m in listeners), timeout=30,
                       what="a track per speaker on every listener")
        await asyncio.sleep(1.0)
        phases["sfu"] = await asyncio.gather(*(hear(live_tracks(m)[name], skip=False) for m in listeners for name in TONES))

        # 2. The conversation says mixed: one more offer each, whose live m-line is the room mix.
        offers = [m.offers for m in listeners]
        set_mode(server, room, "mixed")
        await wait_for(lambda: all(list(live_tracks(m)) == ["Room mix"] for m in listeners), timeout=30,
                       what="the room mix on every listener")
        assert all(m.offers > n for m, n in zip(listeners, offers))
        await asyncio.sleep(1.5)  # jitter buffers fill, Opus settles
        phases["mixed"] = await asyncio.gather(*(hear(live_tracks(m)["Room mix"], 2.0) for m in listeners))

        # 3. Back to forwarding.
        set_mode(server, room, "sfu")
        await wait_for(lambda: all(set(live_tracks(m)) == set(TONES) for m in listeners), timeout=30,
                       what="a track per speaker again")
        await asyncio.sleep(1.0)
        phases["sfu again"] = await asyncio.gather(*(hear(live_tracks(m)[name], skip=False) for m in listeners for name in TONES))

        same_connections = all(m.sub is c and m.sub.connectionState == "connected" for m, c in zip(listeners, connections))
        for m in listeners + [s[1] for s in speakers]:
            await m.close()
        for rt in [s[0] for s in speakers] + [o[0] for o in others]:
            await rt.close()
        return phases, same_connections

    phases, same_connections = asyncio.run(asyncio.wait_for(scenario(), 240))
    print({k: [(round(s["speaker-a"], 1), round(s["speaker-b"], 1), round(p)) for s, p in v] for k, v in phases.items()})
    assert same_connections, "a listener's subscribe connection was replaced or dropped"
    for phase in ("sfu", "sfu again"):
        for k, (strengths, peak) in enumerate(phases[phase]):
            name = list(TONES)[k % len(TONES)]
            assert peak > 1000, f"{phase}: listener {k // 2} got silence on {name}'s track: {strengths}"
            assert strengths[name] > 20, f"{phase}: listener {k // 2} does not hear {name}: {strengths}"
    for i, (strengths, peak) in enumerate(phases["mixed"]):
        assert peak > 1000, f"mixed: listener {i} got silence: {strengths}"
        for name, s in strengths.items():
            assert s > 20, f"mixed: listener {i} does not hear {name} in the mix: {strengths}"
