"""The rooms flow driven through switchboard-dropin, as the reference iOS app does: POST /auth → JWT,
GET/POST /rooms, realtime login with that JWT, join over REST, then audio over `rtc:*`; leaving over
REST renegotiates the others."""
import asyncio
import json
import os
import subprocess
import tempfile

import pytest
import requests

from rig import start_server
from rooms_support import (AudioMember, Dropin, Realtime, auth, collect_audio, create_room, dominant_frequency, join_rest, leave_rest,
                           list_rooms, loopback_ice, sine_track, wait_for)


@pytest.fixture(scope="module")
def stack():
    server = start_server(["--media-port", "0"], https=False)
    dropin = Dropin(server)
    yield server, dropin.base
    dropin.stop()
    server.stop()
    server.cleanup()


def test_dropin_flow_with_audio(stack):
    server, dropin = stack
    loopback_ice()
    tokens = {name: auth(dropin, name)["jwt"] for name in ("alice", "bob", "carol")}
    room = create_room(dropin, "Dropin tones")
    assert room in [r["id"] for r in list_rooms(dropin)]
    tones = {"alice": 440.0, "bob": 880.0}

    async def scenario():
        members = {}
        for name, token in tokens.items():
            rt = await Realtime(server.ws_url).connect()
            await rt.login(token)
            member_id = join_rest(server.http_url, token, room)["id"]
            m = AudioMember(rt, room)
            if name in tones:
                await m.publish(sine_track(tones[name]))
            await m.subscribe()
            members[name] = (rt, m, member_id)
        ids = {n: v[2] for n, v in members.items()}
        carol = members["carol"][1]
        await wait_for(lambda: carol.track_of(ids["alice"]) and carol.track_of(ids["bob"]), 15, what="carol's tracks")
        await wait_for(lambda: members["alice"][1].track_of(ids["bob"]), 15, what="alice hears bob")
        await asyncio.sleep(1.5)
        heard = {}
        for name in tones:
            samples, rate = await collect_audio(carol.track_of(ids[name]), 1.5)
            heard[name] = dominant_frequency(samples, rate)
        samples, rate = await collect_audio(members["alice"][1].track_of(ids["bob"]), 1.5)
        heard["alice<-bob"] = dominant_frequency(samples, rate)

        # bob leaves over REST (as the app would): carol and alice are renegotiated without him.
        offers_before = carol.offers
        leave_rest(server.http_url, tokens["bob"], room)
        await wait_for(lambda: carol.offers > offers_before, 5, what="carol renegotiated after bob left")
        await wait_for(lambda: carol.track_of(ids["bob"]) is None, 5, what="bob's track gone for carol")
        left = members["alice"][0].seen("member:left")
        for rt, m, _ in members.values():
            await m.close()
            await rt.close()
        return heard, left, ids

    heard, left, ids = asyncio.run(asyncio.wait_for(scenario(), 90))
    print("heard", heard)
    assert abs(heard["alice"] - 440) < 10 and abs(heard["bob"] - 880) < 10 and abs(heard["alice<-bob"] - 880) < 10, heard
    assert any(e["body"]["member_id"] == ids["bob"] for e in left), left
