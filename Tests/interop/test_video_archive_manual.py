"""Archives in manual stream mode through the official `opentok` SDK: `start_archive(stream_mode=manual)` records no
stream until `add_archive_stream` chooses one (its audio, its video or both), and `remove_archive_stream` leaves one
out again. Two aiortc publishers send a solid colour and a tone each; the archives are downloaded and decoded with
PyAV, and what was recorded at each moment is checked against what had been chosen then: in a composed archive's
picture and mix, in an audio-only archive's mix, and in the files of an individual archive."""
from __future__ import annotations

import asyncio
import io
import json
import time
import zipfile

import numpy as np
import pytest
import requests

from test_video_audio_connector import server  # noqa: F401 (the module's media server fixture)
from video_support import decode_media, opentok_client, publish, unpublish

opentok = pytest.importorskip("opentok")
av = pytest.importorskip("av")

RED, BLUE = (220, 30, 30), (30, 30, 220)


def tones(samples, rate):
    """Each tone's share of the window's energy, and the window's RMS."""
    spectrum = np.abs(np.fft.rfft(samples)) ** 2
    freqs = np.fft.rfftfreq(len(samples), 1 / rate)
    total = spectrum.sum() + 1e-12
    return {f: spectrum[np.abs(freqs - f) < 10].sum() / total for f in (440, 880)}, float(np.sqrt(np.mean(samples ** 2)))


def colour(picture, rows, columns):
    return picture[rows, columns].reshape(-1, 3).mean(axis=0)


def test_a_composed_archive_records_the_streams_chosen_while_it_records(server):
    asyncio.run(_composed(server))


async def _composed(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    red = await publish(server, sid, ot.generate_token(sid, data="name=red"), RED, 440)
    blue = await publish(server, sid, ot.generate_token(sid, data="name=blue"), BLUE, 880)
    try:
        await asyncio.sleep(1)
        archive = await asyncio.to_thread(ot.start_archive, sid, name="chosen", stream_mode=opentok.StreamModes.manual)
        start = time.monotonic()
        assert (archive.status, archive.stream_mode, archive.streams, archive.has_video) == ("started", "manual", [], True)
        marks = []

        async def phase(*changes):
            for change in changes:
                await asyncio.to_thread(*change)
            marks.append(time.monotonic() - start)
            await asyncio.sleep(2)

        await asyncio.sleep(1.5)  # nothing chosen: a black picture, silence
        await phase((ot.add_archive_stream, archive.id, red[2]))  # red: its picture and its tone
        got = await asyncio.to_thread(ot.get_archive, archive.id)
        assert got.streams == [{"streamId": red[2], "hasAudio": True, "hasVideo": True}]
        await phase((ot.add_archive_stream, archive.id, blue[2], False, True))  # blue's picture beside red's, not its tone
        # Red left out; blue chosen again, with its tone.
        await phase((ot.remove_archive_stream, archive.id, red[2]), (ot.add_archive_stream, archive.id, blue[2]))
        got = await asyncio.to_thread(ot.get_archive, archive.id)
        assert got.streams == [{"streamId": blue[2], "hasAudio": True, "hasVideo": True}]
        stopped = await asyncio.to_thread(ot.stop_archive, archive.id)
        assert stopped.status == "available" and stopped.stream_mode == "manual" and stopped.streams == []
        r = requests.get(stopped.url, headers=ot.get_headers(), timeout=10)
        assert r.status_code == 200 and r.headers["Content-Type"] == "video/mp4"
        pictures, times, samples, rate, codec = decode_media(r.content, keep_pictures=True)
        assert codec == "h264"

        def picture_at(t):
            return pictures[min(range(len(times)), key=lambda i: abs(times[i] - t))].astype(int)

        def audio(a, b):
            return tones(samples[int(a * rate):int(b * rate)], rate)

        windows = [(0.3, marks[0] - 0.5)] + [(m + 0.6, m + 1.4) for m in marks]  # clear of the changes either side
        # Nothing chosen.
        assert picture_at(sum(windows[0]) / 2).mean() < 20
        assert audio(*windows[0])[1] < 0.005
        # Red alone fills the picture (4:3 on 4:3); 440 Hz alone is heard.
        shown = picture_at(sum(windows[1]) / 2)
        assert np.abs(colour(shown, slice(100, 380), slice(100, 540)) - RED).max() < 40, shown[240, 320]
        share, rms = audio(*windows[1])
        assert rms > 0.01 and share[440] > 0.5 and share[880] < 0.01, share
        # Red and blue side by side; still 440 Hz alone.
        shown = picture_at(sum(windows[2]) / 2)
        assert np.abs(colour(shown, slice(200, 280), slice(120, 200)) - RED).max() < 40, shown[240, 160]
        assert np.abs(colour(shown, slice(200, 280), slice(440, 520)) - BLUE).max() < 40, shown[240, 480]
        share, _ = audio(*windows[2])
        assert share[440] > 0.5 and share[880] < 0.01, share
        # Blue alone, heard and seen.
        shown = picture_at(sum(windows[3]) / 2)
        assert np.abs(colour(shown, slice(100, 380), slice(100, 540)) - BLUE).max() < 40, shown[240, 320]
        share, rms = audio(*windows[3])
        assert rms > 0.01 and share[880] > 0.5 and share[440] < 0.01, share
    finally:
        await unpublish(red, blue)


def test_audio_and_individual_archives_record_the_chosen_streams_and_refusals(server):
    asyncio.run(_audio_and_individual(server))


async def _audio_and_individual(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    red = await publish(server, sid, ot.generate_token(sid, data="name=red"), RED, 440)
    blue = await publish(server, sid, ot.generate_token(sid, data="name=blue"), BLUE, 880)
    url = f"{server.http_url}/v2/project/{ot.api_key}/archive"
    try:
        await asyncio.sleep(1)
        r = requests.post(url, headers=ot.get_json_headers(), json={"sessionId": sid, "streamMode": "sometimes"}, timeout=10)
        assert r.status_code == 400 and "streamMode" in r.json()["detail"]
        # Streams are chosen only for an archive in manual mode.
        automatic = await asyncio.to_thread(ot.start_archive, sid, has_video=False)
        r = requests.patch(f"{url}/{automatic.id}/streams", headers=ot.get_json_headers(), json={"addStream": red[2]}, timeout=10)
        assert r.status_code == 405 and r.json()["code"] == "stream-mode-auto", r.text
        await asyncio.to_thread(ot.stop_archive, automatic.id)

        # Audio only: what the chosen stream says, not the other.
        archive = await asyncio.to_thread(ot.start_archive, sid, has_video=False, stream_mode=opentok.StreamModes.manual)
        streams = f"{url}/{archive.id}/streams"
        for body, status in (({"addStream": "no-such-stream"}, 404), ({"removeStream": blue[2]}, 404),
                             ({"addStream": blue[2], "removeStream": red[2]}, 400), ({}, 400),
                             ({"addStream": blue[2], "hasAudio": False, "hasVideo": False}, 400),
                             ({"addStream": blue[2], "hasAudio": "yes"}, 400)):
            r = requests.patch(streams, headers=ot.get_json_headers(), json=body, timeout=10)
            assert r.status_code == status and r.json()["type"], (body, r.status_code, r.text)
        await asyncio.to_thread(ot.add_archive_stream, archive.id, blue[2])
        await asyncio.sleep(3)
        stopped = await asyncio.to_thread(ot.stop_archive, archive.id)
        r = requests.patch(streams, headers=ot.get_json_headers(), json={"addStream": red[2]}, timeout=10)
        assert r.status_code == 409, "a stopped archive records no more streams"
        r = requests.get(stopped.url, headers=ot.get_headers(), timeout=10)
        _, _, samples, rate, _ = decode_media(r.content)
        share, rms = tones(samples[-rate * 2:], rate)
        assert rms > 0.01 and share[880] > 0.5 and share[440] < 0.01, share

        # Individual: a file per stream chosen, a new one when a stream is chosen again or with other media.
        archive = await asyncio.to_thread(ot.start_archive, sid, output_mode=opentok.OutputModes.individual,
                                          stream_mode=opentok.StreamModes.manual)
        await asyncio.to_thread(ot.add_archive_stream, archive.id, red[2])
        await asyncio.sleep(2)
        await asyncio.to_thread(ot.remove_archive_stream, archive.id, red[2])
        await asyncio.sleep(1)
        await asyncio.to_thread(ot.add_archive_stream, archive.id, red[2], False, True)
        await asyncio.sleep(2.5)
        stopped = await asyncio.to_thread(ot.stop_archive, archive.id)
        r = requests.get(stopped.url, headers=ot.get_headers(), timeout=10)
        files = zipfile.ZipFile(io.BytesIO(r.content))
        manifest = json.loads(files.read(f"{archive.id}.json"))
        entries = sorted(manifest["files"], key=lambda f: f["startTimeOffset"])
        assert [(f["streamId"], f["filename"]) for f in entries] == [(red[2], f"{red[2]}.webm"), (red[2], f"{red[2]}-2.webm")], manifest
        first, second = entries
        assert 1200 < first["stopTimeOffset"] - first["startTimeOffset"] < 2800, first
        assert second["startTimeOffset"] > first["stopTimeOffset"] + 500, manifest
        colours, _, samples, rate, codec = decode_media(files.read(first["filename"]))
        assert codec == "vp8" and colours and np.abs(colours[-1] - RED).max() < 25 and np.sqrt(np.mean(samples ** 2)) > 0.05
        colours, _, samples, _, codec = decode_media(files.read(second["filename"]))
        assert codec == "vp8" and colours and not samples.size, "chosen again with its video alone"
    finally:
        await unpublish(red, blue)
