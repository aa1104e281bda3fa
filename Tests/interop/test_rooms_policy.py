"""Room policies with aiortc members: a large room forwards only the loudest speakers, speaking
events follow the audio levels, and a full room refuses one more member without changing anything."""
import asyncio

import pytest

from rig import start_server
import requests

from rooms_support import (AudioMember, Realtime, RequestError, auth, create_room, join_rest, leave_rest, loopback_ice,
                           sine_track, wait_for)


def start(env):
    return start_server(["--media-port", "0", "--threads", "2"], https=False, env=env, dev=True)


async def member(server, room, name, join=True):
    api = server.http_url + "/rooms/api"
    token = auth(api, name)["jwt"]
    rt = await Realtime(server.ws_url).connect()
    await rt.login(token)
    if join:
        await rt.request("rtc:join", {"conversation_id": room})
    return rt, AudioMember(rt, room), token


def test_large_room_forwards_only_the_three_loudest():
    server = start({})
    try:
        loopback_ice()
        room = create_room(server.http_url + "/rooms/api", "Town hall")
        amplitudes = {"loud-1": 0.5, "loud-2": 0.3, "loud-3": 0.15, "whisper": 0.0005}

        async def scenario():
            people = {}
            for name, amplitude in amplitudes.items():
                rt, m, _ = await member(server, room, name)
                reply = await m.publish(sine_track(300 + 100 * len(people), amplitude=amplitude))
                people[name] = (rt, m, reply["member_id"])
            listeners = []
            for i in range(6):  # 4 speakers + 6 listeners = 10 members with media
                rt, m, _ = await member(server, room, f"listener-{i}")
                await m.subscribe()
                listeners.append((rt, m))
            ids = {name: p[2] for name, p in people.items()}
            names = {v: k for k, v in ids.items()}
            await wait_for(lambda: all(len(m.track_info) == 4 for _, m in listeners), 15, what="4 tracks per listener")
            await asyncio.sleep(3)  # levels accumulate; the whisper's consumers are paused
            before = [await m.packets_by_member() for _, m in listeners]
            await asyncio.sleep(2)
            after = [await m.packets_by_member() for _, m in listeners]
            gained = [{names[k]: a[k] - b.get(k, 0) for k in a} for a, b in zip(after, before)]
            # Seen by the first speaker, in the room before anyone spoke (speaking:on is an edge: a listener that
            # joins after it fired finds it in the conversation's events, not pushed to it).
            speaking = {e["from"] for e in people["loud-1"][0].seen("audio:speaking:on")}
            for rt, m in listeners + [(p[0], p[1]) for p in people.values()]:
                await m.close()
                await rt.close()
            return gained, speaking, ids

        gained, speaking, ids = asyncio.run(asyncio.wait_for(scenario(), 120))
        print("gained", gained, "speaking", speaking)
        for g in gained:
            for name in ("loud-1", "loud-2", "loud-3"):
                assert g[name] > 20, g
            assert g.get("whisper", 0) == 0, g  # (no inbound stats at all: never a packet)
        assert {ids["loud-1"], ids["loud-2"], ids["loud-3"]} <= speaking
        assert ids["whisper"] not in speaking
    finally:
        server.stop()
        server.cleanup()


def test_full_room_refuses_one_more_and_nothing_changes():
    server = start({"SWITCHBOARD_ROOM_CAPACITY": "2"})
    try:
        loopback_ice()
        room = create_room(server.http_url + "/rooms/api", "Small room")

        async def scenario():
            alice_rt, alice, _ = await member(server, room, "alice")
            await alice.publish(sine_track(440))
            await alice.subscribe()
            bob_rt, bob, bob_token = await member(server, room, "bob")
            await bob.subscribe()
            await wait_for(lambda: bob.track_info, 10, what="bob hears alice")
            await asyncio.sleep(0.5)
            seen_before = len(alice_rt.events)
            offers_before = (alice.offers, bob.offers)

            carol_rt, carol, carol_token = await member(server, room, "carol", join=False)
            with pytest.raises(RequestError) as full:
                await carol_rt.request("rtc:join", {"conversation_id": room})
            # The REST join (as the reference iOS app joins) is refused the same way.
            rest = requests.post(f"{server.http_url}/v1/conversations/{room}/members",
                                 headers={"Authorization": "Bearer " + carol_token},
                                 json={"state": "joined", "channel": {"type": "app"}}, timeout=10)
            await asyncio.sleep(0.5)
            seen_after_refusals = len(alice_rt.events)
            offers_after_refusals = (alice.offers, bob.offers)
            # Space comes back when someone leaves: bob goes, carol's REST join is accepted and
            # her media is admitted.
            await bob.close()
            leave_rest(server.http_url, bob_token, room)
            await wait_for(lambda: any(e["type"] == "member:left" for e in alice_rt.events[seen_after_refusals:]), 5,
                           what="bob's member:left")
            join_rest(server.http_url, carol_token, room)
            await wait_for(lambda: any(e["type"] == "member:joined" for e in alice_rt.events[seen_after_refusals:]), 5,
                           what="carol's member:joined")
            await carol.publish(sine_track(880))
            result = (full.value, rest, seen_before, seen_after_refusals, offers_before, offers_after_refusals)
            for rt, m in ((alice_rt, alice), (carol_rt, carol)):
                await m.close()
                await rt.close()
            await bob_rt.close()
            return result

        join_err, rest, before, after_refusals, offers_before, offers_after = asyncio.run(asyncio.wait_for(scenario(), 60))
        print(join_err, rest.status_code, rest.text, before, after_refusals)
        assert join_err.code == "roomFull", join_err
        assert "full" in join_err.body["detail"]
        assert rest.status_code == 409, rest.text
        assert rest.json()["code"] == "room-full" and "at most 2 members" in rest.json()["detail"], rest.text
        assert after_refusals == before, "a refused join changed the room"
        assert offers_after == offers_before, "a refused join renegotiated someone's media"
    finally:
        server.stop()
        server.cleanup()


@pytest.mark.parametrize("how", ["rest", "socket"])
def test_a_member_who_leaves_while_speaking_ends_with_speaking_off(how):
    """The others' speaking indicator must not stay lit for someone who is gone: leaving over REST or by
    closing the socket posts audio:speaking:off for the leaver."""
    server = start({})
    try:
        loopback_ice()
        room = create_room(server.http_url + "/rooms/api", "Leaving loudly")

        async def scenario():
            rt_a, alice, token_a = await member(server, room, "alice")
            reply = await alice.publish(sine_track(440, amplitude=0.5))
            rt_b, bob, _ = await member(server, room, "bob")
            await bob.subscribe()
            alice_id = reply["member_id"]
            await wait_for(lambda: rt_b.seen("audio:speaking:on", **{"from": alice_id}), 15, what="alice speaking")
            if how == "rest":
                leave_rest(server.http_url, token_a, room)
            else:
                await alice.close()
                await rt_a.close()
            await wait_for(lambda: rt_b.seen("audio:speaking:off", **{"from": alice_id}), 10, what="alice speaking off")
            types = [e["type"] for e in rt_b.events if e.get("from") == alice_id and e["type"].startswith("audio:speaking")]
            await bob.close()
            await rt_b.close()
            if how == "rest":
                await alice.close()
                await rt_a.close()
            return types

        types = asyncio.run(asyncio.wait_for(scenario(), 60))
        assert types[-1] == "audio:speaking:off", types
    finally:
        server.stop()
        server.cleanup()


@pytest.mark.parametrize("mode", ["sfu", "mixed"])
def test_the_app_server_mutes_a_member_and_the_room_stops_hearing_it(mode):
    """A moderator's app server mutes a member through the Conversation API (`PATCH .../members/{id}` with
    `audio_settings.muted`): the others stop hearing it and its own client sees `member:media` muted; unmuted, it
    is heard again. Forwarding and mixing alike."""
    import time

    import numpy as np

    from rooms_support import app_headers
    server = start({"SWITCHBOARD_ROOM_MODE": mode})
    try:
        loopback_ice()
        room = create_room(server.http_url + "/rooms/api", "Moderated")

        def patch(member_id, muted):
            r = requests.patch(f"{server.http_url}/v1/conversations/{room}/members/{member_id}", headers=app_headers(server),
                               json={"media": {"audio_settings": {"muted": muted}}}, timeout=10)
            assert r.status_code == 200, r.text
            return time.monotonic()

        async def scenario():
            rt_a, alice, _ = await member(server, room, "alice")
            alice_id = (await alice.publish(sine_track(550, amplitude=0.5)))["member_id"]
            rt_b, bob, _ = await member(server, room, "bob")
            await bob.subscribe()
            await wait_for(lambda: bob.tracks, 15, what="a track at bob")
            heard = []

            async def listen(track):
                while True:
                    frame = await track.recv()
                    data = frame.to_ndarray().astype(np.float64)
                    heard.append((time.monotonic(), float(np.sqrt(np.mean(data ** 2)))))
            listeners = [asyncio.ensure_future(listen(t)) for t in bob.tracks.values()]
            await asyncio.sleep(2.5)
            muted_at = patch(alice_id, True)
            await wait_for(lambda: [e for e in rt_a.seen("member:media", **{"from": alice_id})
                                    if e["body"]["media"]["audio_settings"]["muted"]], 10, what="alice sees herself muted")
            await asyncio.sleep(2)
            unmuted_at = patch(alice_id, False)
            await asyncio.sleep(2.5)
            for t in listeners:
                t.cancel()
            for m, rt in ((alice, rt_a), (bob, rt_b)):
                await m.close()
                await rt.close()

            def loudness(start, end):
                values = [rms for t, rms in heard if start <= t < end]
                return max(values) if values else 0.0
            return loudness(muted_at - 1.5, muted_at), loudness(muted_at + 1.0, unmuted_at), loudness(unmuted_at + 1.0, unmuted_at + 2.5)

        before, during, after = asyncio.run(asyncio.wait_for(scenario(), 60))
        print(f"{mode}: bob heard alice at RMS {before:.0f}, muted {during:.0f}, unmuted {after:.0f}")
        assert before > 1000 and after > 1000, (before, during, after)
        assert during < 30, f"the muted member was still heard: {during}"
    finally:
        server.stop()
        server.cleanup()
