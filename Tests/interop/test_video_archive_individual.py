"""Individual-stream archives through the official `opentok` SDK: `start_archive(output_mode=individual)` records each
stream of the session (those published before it starts and after) as a WebM file of its own, VP8 and Opus as the
publisher sent them, in a ZIP with a JSON manifest. Two aiortc publishers send a solid colour and a tone each; the
downloaded files are demuxed and decoded with PyAV (FFmpeg's libraries): every file has the publisher's colour and
tone, for as long as it published, and the manifest places each stream on the archive's timeline."""
from __future__ import annotations

import asyncio
import io
import json
import zipfile

import numpy as np
import pytest
import requests

from media_support import dominant_frequency
from test_video_audio_connector import server  # noqa: F401 (the module's media server fixture)
from video_support import decode_media as decode, opentok_client, publish, unpublish

opentok = pytest.importorskip("opentok")
av = pytest.importorskip("av")


def download_zip(ot, url):
    r = requests.get(url, headers=ot.get_headers(), timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/zip", r.text[:200]
    archive = zipfile.ZipFile(io.BytesIO(r.content))
    assert archive.testzip() is None
    return archive


def test_an_individual_archive_records_each_stream_in_its_own_webm(server):
    asyncio.run(_individual(server))


async def _individual(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    red = await publish(server, sid, ot.generate_token(sid, data="name=red"), (220, 30, 30), 440)
    blue = None
    try:
        await asyncio.sleep(1)
        archive = await asyncio.to_thread(ot.start_archive, sid, name="each", output_mode=opentok.OutputModes.individual)
        assert (archive.status, archive.output_mode, archive.has_video, archive.has_audio) == \
            ("started", opentok.OutputModes.individual, True, True)
        await asyncio.sleep(2)
        # A stream published while the archive records gets a file of its own, from when it started.
        blue = await publish(server, sid, ot.generate_token(sid, data="name=blue"), (30, 30, 220), 880)
        await asyncio.sleep(3)
        await asyncio.to_thread(red[1].request, "video:unpublish", {"streamId": red[2]})
        await asyncio.sleep(1.5)
        stopped = await asyncio.to_thread(ot.stop_archive, archive.id)
        assert stopped.status == "available" and stopped.output_mode == opentok.OutputModes.individual
        got = await asyncio.to_thread(ot.get_archive, archive.id)
        assert got.status == "available" and got.duration >= 6 and got.size > 20_000 and got.url
        files = download_zip(ot, got.url)
        manifest = json.loads(files.read(f"{archive.id}.json"))
        assert (manifest["id"], manifest["sessionId"], manifest["name"]) == (archive.id, sid, "each")
        entries = {f["streamId"]: f for f in manifest["files"]}
        assert set(entries) == {red[2], blue[2]}
        assert sorted(files.namelist()) == sorted([f"{archive.id}.json", f"{red[2]}.webm", f"{blue[2]}.webm"])
        r, b = entries[red[2]], entries[blue[2]]
        assert (r["connectionData"], b["connectionData"]) == ("name=red", "name=blue")
        assert r["startTimeOffset"] < 1000 and 1500 < b["startTimeOffset"] < 3500, manifest
        # Red stopped publishing about 5 s in, a second and a half before the archive stopped.
        assert 4000 < r["stopTimeOffset"] - r["startTimeOffset"] < 6500 and b["stopTimeOffset"] > r["stopTimeOffset"] + 500, manifest
        for entry, rgb, tone in ((r, (220, 30, 30), 440), (b, (30, 30, 220), 880)):
            webm = files.read(entry["filename"])
            assert len(webm) == entry["size"]
            colours, times, samples, rate, codec = decode(webm)
            span = (entry["stopTimeOffset"] - entry["startTimeOffset"]) / 1000
            assert codec == "vp8"
            # 15 frames a second, every one decoded, the first a key frame asked for when the recording began.
            assert len(colours) > 15 * span * 0.7 and times[0] < 1.0, (len(colours), span, times[:3])
            assert all(np.abs(c - rgb).max() < 25 for c in colours), (rgb, colours[0], colours[-1])
            assert abs(len(samples) / rate - span) < 1.0, (len(samples) / rate, span)
            assert np.sqrt(np.mean(samples ** 2)) > 0.05 and abs(dominant_frequency(samples, rate) - tone) < 15
    finally:
        await unpublish(red, *([blue] if blue else []))


def test_an_individual_audio_archive_and_refusals(server):
    asyncio.run(_audio_only(server))


async def _audio_only(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    pc, peer, stream = await publish(server, sid, ot.generate_token(sid, data="name=voice"), (0, 200, 0), 660)
    url = f"{server.http_url}/v2/project/{ot.api_key}/archive"
    try:
        await asyncio.sleep(1)
        for bad, why in (({"outputMode": "separate"}, "outputMode"), ({"outputMode": "individual", "hasVideo": "yes"}, "hasVideo"),
                         ({"outputMode": "individual", "hasVideo": False, "hasAudio": False}, "hasAudio"),
                         ({"resolution": "1024x768"}, "resolution"), ({"outputMode": "individual", "resolution": "1280x720"}, "resolution"), ({"layout": {"type": "custom", "stylesheet": "div { width: 1px }"}}, "layout"),
                         ({"streamMode": "sometimes"}, "streamMode")):
            r = requests.post(url, headers=ot.get_json_headers(), json={"sessionId": sid, **bad}, timeout=10)
            assert r.status_code == 400 and why in r.json()["detail"], (bad, r.text)
        archive = await asyncio.to_thread(ot.start_archive, sid, has_video=False, output_mode=opentok.OutputModes.individual)
        assert (archive.has_video, archive.has_audio) == (False, True)
        await asyncio.sleep(3)
        await asyncio.to_thread(ot.stop_archive, archive.id)
        got = await asyncio.to_thread(ot.get_archive, archive.id)
        files = download_zip(ot, got.url)
        colours, _, samples, rate, codec = decode(files.read(f"{stream}.webm"))
        assert codec is None and not colours, "hasVideo false records no video track"
        assert len(samples) / rate > 2.5 and abs(dominant_frequency(samples, rate) - 660) < 15
        await asyncio.to_thread(ot.delete_archive, archive.id)
        assert requests.get(f"{url}/{archive.id}/download", headers=ot.get_headers(), timeout=10).status_code == 404
    finally:
        await pc.close()
        peer.close()


def test_an_individual_archive_recovers_lost_video_packets(server):
    asyncio.run(_lossy(server))


async def _lossy(server):
    """Every eighth video packet lost between the publisher and the server: the server's NACKs bring them back
    over RTX and the archive puts them in place, so (nearly) every frame is in the file and decodes, where without
    the retransmissions each loss would cost its frame and every frame up to the next key frame."""
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    pc, peer, stream = await publish(server, sid, ot.generate_token(sid, data="name=lossy"), (200, 200, 40), 440)
    video = next(t.sender for t in pc.getTransceivers() if t.kind == "video")
    transport, lost, sent, nacks = video.transport, [], [], []
    send, handle = transport._send_rtp, video._handle_rtcp_packet

    async def lossy_send(data: bytes):
        # First sends of the video stream only (its SSRC at bytes 8-11); retransmissions go out on the RTX SSRC.
        if int.from_bytes(data[8:12], "big") == video._ssrc:
            sent.append(1)
            if len(sent) % 8 == 0:
                lost.append(int.from_bytes(data[2:4], "big"))
                return
        await send(data)

    async def note_nacks(packet):
        # What the server asked for again (shown when the test fails).
        if type(packet).__name__ == "RtcpRtpfbPacket" and packet.fmt == 1:
            nacks.append(list(packet.lost))
        return await handle(packet)

    transport._send_rtp = lossy_send
    video._handle_rtcp_packet = note_nacks
    try:
        await asyncio.sleep(1)
        archive = await asyncio.to_thread(ot.start_archive, sid, output_mode=opentok.OutputModes.individual)
        await asyncio.sleep(5)
        await asyncio.to_thread(ot.stop_archive, archive.id)
        got = await asyncio.to_thread(ot.get_archive, archive.id)
        files = download_zip(ot, got.url)
        entry = json.loads(files.read(f"{archive.id}.json"))["files"][0]
        colours, times, _, _, codec = decode(files.read(entry["filename"]))
        span = (entry["stopTimeOffset"] - entry["startTimeOffset"]) / 1000
        assert codec == "vp8" and len(lost) > 5, lost
        assert len(colours) > 15 * span * 0.85, (len(colours), span, "lost", lost, "asked again", nacks)
        assert all(np.abs(c - (200, 200, 40)).max() < 25 for c in colours)
    finally:
        await pc.close()
        peer.close()
