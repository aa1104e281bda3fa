"""An archive outlives its session's last client by a minute, as the Video API's does: paused meanwhile, it
records again when a client comes back (a participant whose connection dropped, say), and it stops a minute after
the last one left for good (`session ended`). The file holds what was published before and after the gap.
And, as the Video API's, an archive stops when nobody publishes within its first minute."""
from __future__ import annotations

import asyncio
import io
import time

import pytest
import requests

from test_video_audio_connector import server  # noqa: F401 (the module's media server fixture)
from video_support import VideoPeer, decode_media, opentok_client, publish, unpublish

opentok = pytest.importorskip("opentok")
av = pytest.importorskip("av")


def test_an_archive_waits_a_minute_for_its_clients_to_come_back_and_stops_when_nobody_publishes_within_its_first_minute(server):
    """Both minutes at once (each in sessions of its own): the test waits one minute, not two."""
    async def both():
        await asyncio.gather(_comeback(server), _first_minute(server))
    asyncio.run(both())


async def _comeback(server):
    """A session's only client leaves and another comes back within the minute: the archive pauses and records again;
    the last one leaves for good, and the archive stops a minute later with what was published before and after."""
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id

    def archive(aid):
        return requests.get(f"{server.http_url}/v2/project/{ot.api_key}/archive/{aid}", headers=ot.get_headers(), timeout=10).json()

    async def wait_for(aid, statuses, timeout, what):
        deadline = time.monotonic() + timeout
        while (now := await asyncio.to_thread(archive, aid))["status"] not in statuses and time.monotonic() < deadline:
            await asyncio.sleep(0.25)
        assert now["status"] in statuses, (what, now)
        return now

    red = await publish(server, sid, ot.generate_token(sid, data="name=red"), (220, 30, 30), 440)
    await asyncio.sleep(1)
    started = await asyncio.to_thread(ot.start_archive, sid)
    await wait_for(started.id, ("started",), 5, "recording")
    await asyncio.sleep(2)
    await unpublish(red)  # the only client leaves: the session ends
    await wait_for(started.id, ("paused",), 10, "paused once the session ended")
    await asyncio.sleep(5)
    assert (await asyncio.to_thread(archive, started.id))["status"] == "paused", "still recording a few seconds later"

    blue = await publish(server, sid, ot.generate_token(sid, data="name=blue"), (30, 30, 220), 880)  # back within the minute
    await wait_for(started.id, ("started",), 10, "recording again")
    await asyncio.sleep(2)
    left = time.monotonic()
    await unpublish(blue)  # gone for good
    await wait_for(started.id, ("paused",), 10, "paused again")
    await asyncio.sleep(45)
    assert (await asyncio.to_thread(archive, started.id))["status"] == "paused", "45 s after the last client left: not yet"
    ended = await wait_for(started.id, ("available",), 30, "stopped a minute after the last client left")
    assert ended["reason"] == "session ended" and time.monotonic() - left >= 59, ended
    # About 4 s recorded (more where publishing takes longer), far from the 65 s and more it was paused.
    assert 3 <= ended["duration"] <= 20, ended
    r = requests.get(ended["url"], headers=ot.get_headers(), timeout=10)
    pictures, _, _, _, _ = decode_media(r.content)
    reds = [i for i, c in enumerate(pictures) if c[0] > 150 and c[2] < 80]
    blues = [i for i, c in enumerate(pictures) if c[2] > 150 and c[0] < 80]
    assert reds and blues and max(reds) < min(blues) and blues[-1] == len(pictures) - 1, "red before the gap, blue after it"


async def _first_minute(server):
    """Two sessions, each with a client that only watches, each archived: in one nobody publishes, and its archive
    stops a minute after it started (`no stream published within a minute`, nothing recorded); in the other a client
    publishes 40 s in, and its archive goes on recording past the minute until it is stopped."""
    ot = opentok_client(server)
    idle, busy = (ot.create_session(media_mode=opentok.MediaModes.routed).session_id for _ in range(2))
    watchers = [await asyncio.to_thread(VideoPeer, server, sid, ot.generate_token(sid, data="name=watcher")) for sid in (idle, busy)]
    red = None
    try:
        def archive(aid):
            return requests.get(f"{server.http_url}/v2/project/{ot.api_key}/archive/{aid}", headers=ot.get_headers(), timeout=10).json()

        started = time.monotonic()
        unwatched, watched = [await asyncio.to_thread(ot.start_archive, sid) for sid in (idle, busy)]
        for a in (unwatched, watched):
            deadline = time.monotonic() + 5
            while archive(a.id)["status"] != "paused" and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            assert archive(a.id)["status"] == "paused", "nobody publishing yet"
        await asyncio.sleep(max(0.0, started + 40 - time.monotonic()))
        red = await publish(server, busy, ot.generate_token(busy, data="name=red"), (220, 30, 30), 440)
        await asyncio.sleep(max(0.0, started + 50 - time.monotonic()))
        assert archive(unwatched.id)["status"] == "paused", "50 s in: not yet"
        deadline = started + 80
        while (now := archive(unwatched.id))["status"] == "paused" and time.monotonic() < deadline:
            await asyncio.sleep(0.25)
        assert (now["status"], now["reason"], now["duration"]) == ("available", "no stream published within a minute", 0), now
        assert time.monotonic() - started >= 59, "stopped a minute after it started, not before"
        r = requests.get(now["url"], headers=ot.get_headers(), timeout=10)
        with av.open(io.BytesIO(r.content)) as mp4:  # a well-formed file with nothing in it
            assert sorted(s.type for s in mp4.streams) == ["audio", "video"]
            assert not [f for f in mp4.decode(video=0)], "no picture recorded"
        assert archive(watched.id)["status"] == "started", "published within the minute: still recording past it"
        watchers[0].request("video:signal", {"type": "still", "data": "here"})  # its client is still connected: only the archive ended
        stopped = await asyncio.to_thread(ot.stop_archive, watched.id)
        assert stopped.status in ("stopped", "available")
        done = archive(watched.id)
        assert (done["status"], done["reason"]) == ("available", "user initiated") and 15 <= done["duration"] <= 45, done
    finally:
        if red:
            await unpublish(red)
        for w in watchers:
            w.close()
