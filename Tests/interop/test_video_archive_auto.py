"""Automatically archived sessions through the official `opentok` SDK: a session created with
`archive_mode=always` (and an archive name and resolution) is recorded as soon as a client publishes, without
`start_archive`; at the server's `--archive-max-duration` the archive stops (`maximum duration exceeded`) and the next
one starts while clients remain; the last client leaving pauses it (it stops a minute later:
test_video_archive_lifetime.py). The files are decoded: the
publisher's colour at the session's resolution, its tone."""
from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest
import requests

from media_support import dominant_frequency
from test_video_audio_connector import loopback_ice
from video_support import VideoPeer, decode_media, opentok_client, publish, unpublish, video_server

opentok = pytest.importorskip("opentok")
av = pytest.importorskip("av")


@pytest.fixture(scope="module")
def server():
    loopback_ice()
    with video_server(settings=("--archive-max-duration", "4")) as s:
        yield s


def test_an_always_archived_session_records_from_its_first_stream_archive_after_archive(server):
    asyncio.run(_automatic(server))


async def _automatic(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed, archive_mode=opentok.ArchiveModes.always,
                            archive_name="standup", archive_resolution="1280x720").session_id
    assert (await asyncio.to_thread(ot.list_archives, session_id=sid)).count == 0, "nobody connected yet: nothing recorded"
    # A client that only watches: nothing to record, and so no archive (which would stop a minute later, unpublished).
    watcher = await asyncio.to_thread(VideoPeer, server, sid, ot.generate_token(sid, data="name=watcher"))
    await asyncio.sleep(2)
    assert (await asyncio.to_thread(ot.list_archives, session_id=sid)).count == 0, "connected, not publishing: nothing recorded"
    watcher.close()
    red = await publish(server, sid, ot.generate_token(sid, data="name=red"), (220, 30, 30), 440)
    try:
        def archives():  # as JSON: the SDK's Archive has no `reason`
            r = requests.get(f"{server.http_url}/v2/project/{ot.api_key}/archive", params={"sessionId": sid}, headers=ot.get_headers(), timeout=10)
            return sorted(r.json()["items"], key=lambda a: a["createdAt"])

        # Started as the stream was published (paused, if at all, only until its media flows).
        deadline = time.monotonic() + 5
        while (first := await asyncio.to_thread(archives))[0]["status"] == "paused" and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert [(a["status"], a["name"], a["resolution"], a["hasVideo"]) for a in first] == [("started", "standup", "1280x720", True)]
        # A second archive of the session while it records is refused, as for any archive.
        with pytest.raises(Exception):
            await asyncio.to_thread(ot.start_archive, sid)
        deadline = time.monotonic() + 10
        while len(listed := await asyncio.to_thread(archives)) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.25)
        assert [(a["status"], a["reason"]) for a in listed] == [("available", "maximum duration exceeded"), ("started", "")], listed
        await asyncio.sleep(1.5)
        red[1].close()  # the last client leaves: paused, for a minute (test_video_archive_lifetime.py)
        deadline = time.monotonic() + 10
        while (listed := await asyncio.to_thread(archives))[-1]["status"] == "started" and time.monotonic() < deadline:
            await asyncio.sleep(0.25)
        assert len(listed) == 2 and listed[1]["status"] == "paused", listed
        r = requests.get(listed[0]["url"], headers=ot.get_headers(), timeout=10)
        pictures, _, samples, rate, codec = decode_media(r.content, keep_pictures=True)
        last = pictures[-1].astype(int)
        assert codec == "h264" and last.shape == (720, 1280, 3) and 3 <= listed[0]["duration"] <= 5
        assert np.abs(last[200:520, 300:980].reshape(-1, 3).mean(axis=0) - (220, 30, 30)).max() < 40
        assert abs(dominant_frequency(samples[-rate:], rate) - 440) < 15
    finally:
        await unpublish(red)


def test_session_create_options_are_checked(server):
    """The archive options, and end-to-end encryption (the clients' own, which this server's clients do not do):
    refused rather than ignored. The `opentok` SDK's `e2ee=True` is refused the same way."""
    ot = opentok_client(server)
    with pytest.raises(opentok.exceptions.OpenTokException):
        ot.create_session(media_mode=opentok.MediaModes.routed, e2ee=True)
    assert ot.create_session(media_mode=opentok.MediaModes.routed, e2ee=False).session_id
    url = f"{server.http_url}/session/create"
    for form, why in (({"archiveMode": "always", "p2p.preference": "enabled"}, "routed"),
                      ({"archiveMode": "always", "archiveResolution": "1024x768"}, "archiveResolution"),
                      ({"archiveMode": "always", "archiveName": "x" * 81}, "archiveName"),
                      ({"archiveMode": "manual", "archiveName": "weekly"}, "archiveName"), ({"e2ee": "true"}, "e2ee")):
        r = requests.post(url, headers=ot.get_headers(), data=form, timeout=10)
        assert r.status_code == 400 and why in r.json()["detail"], (form, r.text)


def test_an_archive_s_pauses_do_not_count_towards_its_maximum_duration(server):
    asyncio.run(_pauses_not_counted(server))


async def _pauses_not_counted(server):
    """With the server's maximum of 4 s: 2 s recorded, a 4-s pause (nobody publishing), then the archive goes on
    until it has recorded 4 s in all, 8 s or more after it started, as the Video API counts an archive's length."""
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    # A client that only watches keeps the session from ending while nobody publishes.
    watcher = await asyncio.to_thread(VideoPeer, server, sid, ot.generate_token(sid, data="name=watcher"))
    red = await publish(server, sid, ot.generate_token(sid, data="name=red"), (220, 30, 30), 880)
    try:
        await asyncio.sleep(1)
        started = time.monotonic()
        archive = await asyncio.to_thread(ot.start_archive, sid)

        def status():
            return requests.get(f"{server.http_url}/v2/project/{ot.api_key}/archive/{archive.id}", headers=ot.get_headers(), timeout=10).json()

        await asyncio.sleep(2)
        await unpublish(red)  # nobody publishes: paused, the watcher still connected
        deadline = time.monotonic() + 5
        while status()["status"] != "paused" and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert status()["status"] == "paused", status()
        await asyncio.sleep(4)
        assert status()["status"] == "paused", "6 s after it started, 2 s of it recorded: not at its maximum"
        blue = await publish(server, sid, ot.generate_token(sid, data="name=blue"), (30, 30, 220), 440)
        try:
            deadline = time.monotonic() + 15
            while (now := status())["status"] in ("started", "paused") and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            ended = time.monotonic() - started
            assert (now["status"], now["reason"]) == ("available", "maximum duration exceeded"), now
            assert ended >= 8 and 3 <= now["duration"] <= 5, (ended, now)
            r = requests.get(now["url"], headers=ot.get_headers(), timeout=10)
            pictures, _, _, _, _ = decode_media(r.content)
            reds = [i for i, c in enumerate(pictures) if c[0] > 150 and c[2] < 80]
            blues = [i for i, c in enumerate(pictures) if c[2] > 150 and c[0] < 80]
            assert reds and blues and max(reds) < min(blues) and blues[-1] == len(pictures) - 1, "red, then blue after the pause"
        finally:
            await unpublish(blue)
    finally:
        watcher.close()
