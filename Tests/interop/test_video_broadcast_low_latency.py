"""Low-latency HLS broadcasts (`outputs.hls.lowLatency`), started with the official `opentok` SDK from a session
with an aiortc publisher: the playlist lists each partial segment as soon as it is written, so what a segment
holds can be fetched and decoded before the segment is whole; a blocking reload (`_HLS_msn`, `_HLS_part`) and the
preload-hinted part are held until they exist; a colour change of the publisher reaches the parts; FFmpeg's HLS
client, which knows nothing of parts, still plays the playlist; the end is an `#EXT-X-ENDLIST` that no reload
waits on."""
from __future__ import annotations

import asyncio
import re
import threading
import time

import pytest
import requests

from test_video_audio_connector import server  # noqa: F401 (the module's media server fixture)
from test_video_broadcast import RED, BLUE, decode_ts as decode, play_hls, share, until, watch_in_chromium
from video_support import colour_track, opentok_client, publish, unpublish

opentok = pytest.importorskip("opentok")
av = pytest.importorskip("av")

PART = re.compile(r'#EXT-X-PART:DURATION=([0-9.]+),URI="segment-(\d+)\.(\d+)\.ts"(,INDEPENDENT=YES)?')
HINT = re.compile(r'#EXT-X-PRELOAD-HINT:TYPE=PART,URI="segment-(\d+)\.(\d+)\.ts"')


def test_a_low_latency_broadcast_lists_each_part_as_it_is_written(server):
    asyncio.run(_low_latency(server))


async def _low_latency(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    colour = list(RED)  # the publisher's picture: changed in place below
    red = await publish(server, sid, ot.generate_token(sid), None, 440, track=colour_track(colour))
    try:
        await asyncio.sleep(1)
        broadcast = await asyncio.to_thread(ot.start_broadcast, sid, {"outputs": {"hls": {"lowLatency": True}}})
        url = broadcast.broadcastUrls["hls"]
        base = url.rsplit("/", 1)[0]
        got = requests.get(f"{server.http_url}/v2/project/{ot.api_key}/broadcast/{broadcast.id}", headers=ot.get_json_headers(), timeout=5).json()
        assert got["settings"]["hls"] == {"dvr": False, "lowLatency": True}
        await until(lambda: ot.get_broadcast(broadcast.id).broadcastUrls["hlsStatus"] == "live", 15, "HLS live")

        def get(name, **params):
            return requests.get(base + "/" + name, params=params, timeout=15)

        # A whole segment and more: its parts are listed beside it.
        await until(lambda: "#EXTINF" in get("live.m3u8").text, 15, "a whole segment")
        playlist = get("live.m3u8")
        assert playlist.status_code == 200 and playlist.headers["Content-Type"] == "application/vnd.apple.mpegurl"
        text = playlist.text
        for tag in ("#EXT-X-PART-INF:PART-TARGET=0.500", "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.500",
                    "#EXT-X-PROGRAM-DATE-TIME:"):
            assert tag in text, text
        # Segments of 2 s, cut at key frames: one whose key frame came late (a loaded machine) is longer, and the
        # target covers it (RFC 8216: every EXTINF, rounded to the nearest integer, at most the target).
        target = int(re.search(r"#EXT-X-TARGETDURATION:(\d+)", text).group(1))
        assert target >= 2 and all(int(float(d) + 0.5) <= target for d in re.findall(r"#EXTINF:([0-9.]+),", text)), text
        parts = PART.findall(text)
        assert parts and all(float(d) <= 0.5 for d, *_ in parts), text
        assert all(bool(independent) == (p == "0") for _, _, p, independent in parts), "each segment's first part starts with its key frame"

        # The segment being made: its parts so far can be fetched and played though the segment does not exist yet.
        # (Two or three parts listed, so that at least 0.6 s of it is still to come when its whole file is asked for,
        # right after the playlist: on any machine, not whole yet.)
        def being_made():
            m = HINT.search(get("live.m3u8").text)
            segment, hinted = int(m.group(1)), int(m.group(2))
            return (segment, hinted, get(f"segment-{segment}.ts").status_code) if hinted in (2, 3) else None
        segment, hinted, whole_status = await until(being_made, 10, "a segment with two or three parts listed")
        data = b"".join(get(f"segment-{segment}.{p}.ts").content for p in range(hinted))
        assert whole_status == 404, "not whole yet"
        colours, sound, rate = decode(data)
        assert len(colours) >= 10 and colours[-1][0] > 150 and colours[-1][2] < 80, colours[-1:]
        assert share(sound, rate, 440) > 0.5

        # A blocking reload waits for the hinted part; a request for the hinted part itself waits for it to be written.
        fetched = {}
        waiter = threading.Thread(target=lambda: fetched.update(response=get(f"segment-{segment}.{hinted}.ts")))
        waiter.start()
        reload = await asyncio.to_thread(get, "live.m3u8", _HLS_msn=segment, _HLS_part=hinted)
        assert reload.status_code == 200 and f'URI="segment-{segment}.{hinted}.ts"' in reload.text, reload.text
        await asyncio.to_thread(waiter.join, 15)
        assert fetched["response"].status_code == 200 and fetched["response"].headers["Content-Type"] == "video/mp2t"
        assert fetched["response"].content == get(f"segment-{segment}.{hinted}.ts").content and len(fetched["response"].content) % 188 == 0
        # Once whole, the segment is its parts end to end.
        whole = await asyncio.to_thread(get, "live.m3u8", _HLS_msn=segment)
        assert f"segment-{segment}.ts" in whole.text
        count = sum(1 for _, s, _, _ in PART.findall(whole.text) if int(s) == segment)
        assert get(f"segment-{segment}.ts").content == b"".join(get(f"segment-{segment}.{p}.ts").content for p in range(count))

        # Refused: too far ahead, a part without its segment, not a number.
        position = HINT.search(whole.text)
        ahead = int(position.group(1)) + 2
        for params in ({"_HLS_msn": ahead}, {"_HLS_msn": int(position.group(1)), "_HLS_part": int(position.group(2)) + 3},
                       {"_HLS_part": 1}, {"_HLS_msn": "x"}, {"_HLS_msn": -1}):
            refused = get("live.m3u8", **params)
            assert refused.status_code == 400 and refused.json()["code"] == "bad-request", (params, refused.text)
        assert get(f"segment-{ahead}.0.ts").status_code == 400, "a part far ahead is not waited for"

        # The publisher turns blue: followed part by part through blocking reloads, blue arrives in a part.
        colour[:] = BLUE
        seen, deadline = None, time.monotonic() + 15
        segment, hinted = int(position.group(1)), int(position.group(2))
        while seen is None and time.monotonic() < deadline:
            reload = await asyncio.to_thread(get, "live.m3u8", _HLS_msn=segment, _HLS_part=hinted)
            assert reload.status_code == 200
            listed = [(int(s), int(p)) for _, s, p, _ in PART.findall(reload.text)]
            current = [p for s, p in listed if s == segment]
            data = b"".join(get(f"segment-{segment}.{p}.ts").content for p in current)
            colours, _, _ = decode(data) if data else ([], None, None)
            if colours and colours[-1][2] > 150 and colours[-1][0] < 80:
                seen = (segment, max(current))
            m = HINT.search(reload.text)
            segment, hinted = int(m.group(1)), int(m.group(2))
        assert seen, "blue reached the parts"

        # A player that knows nothing of parts plays the playlist as HLS.
        played = await asyncio.to_thread(play_hls, url)
        assert len(played) == 20 and max(played[-1]) > 150, "the publisher's picture, red or blue"
        # (once the playlist holds the few segments a live player starts behind the end with)
        await until(lambda: requests.get(url, timeout=5).text.count("#EXTINF") >= 4, 15, "four whole segments")
        # Chromium's own HLS player plays it live: the publisher's picture and sound.
        watched = await asyncio.to_thread(watch_in_chromium, url, "broadcast-low-latency-hls.png")
        assert watched["error"] is None and (watched["width"], watched["height"]) == (640, 480), watched
        assert watched["time"] > 1 and watched["audioBytes"] > 0, watched
        assert max(watched["pixel"][:3]) > 150 and min(watched["pixel"][:3]) < 80, watched

        stopped = await asyncio.to_thread(ot.stop_broadcast, broadcast.id)
        assert stopped.status == "stopped"
        ended = get("live.m3u8", _HLS_msn=segment + 1, _HLS_part=0)
        assert ended.status_code == 200 and ended.text.endswith("#EXT-X-ENDLIST\n") and "PRELOAD-HINT" not in ended.text, ended.text
        assert "#EXT-X-PART:" not in ended.text
    finally:
        await unpublish(red)
