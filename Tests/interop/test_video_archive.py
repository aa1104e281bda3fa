"""Audio-only archives through the official `opentok` SDK: `start_archive(has_video=False)` records the session's
audio mix (an aiortc publisher's 440 Hz) as AAC in an MP4 file; stop, get, list, download and delete behave as the Video API's;
a second archive of a session, a session with nobody in it and a relayed session are refused; the SDK's default archive
(composed, with video) lays every stream out on one canvas with the mix, H.264 and AAC in an MP4 file, decoded here
with PyAV (individual-stream archives:
`test_video_archive_individual.py`); an
archive's metadata survives a restart."""
from __future__ import annotations

import asyncio
import io
import json
import shutil
import subprocess
import zipfile

import numpy as np
import pytest
import requests

from media_support import dominant_frequency
from rig import start_server, wait_until
from test_video_audio_connector import publish_tone, server  # noqa: F401 (the module's media server fixture)
from video_support import VideoPeer, account, decode_media, opentok_client, publish, unpublish

opentok = pytest.importorskip("opentok")


def download(ot, url):
    """An audio-only archive: an MP4 file with AAC sound and no video."""
    r = requests.get(url, headers=ot.get_headers(), timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"] == "audio/mp4", r.text[:200]
    assert r.content[4:8] == b"ftyp"
    _, _, samples, rate, codec = decode_media(r.content)
    assert codec is None
    return samples, rate


def test_an_audio_archive_records_the_session_and_is_downloaded(server):
    asyncio.run(_archive(server))


async def _archive(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    pc, peer, _ = await publish_tone(server, sid, ot.generate_token(sid, data="name=speaker"), 440)
    try:
        await asyncio.sleep(0.5)
        archive = await asyncio.to_thread(ot.start_archive, sid, name="standup", has_video=False)
        assert (archive.status, archive.name, archive.has_audio, archive.has_video) == ("started", "standup", True, False)
        # One archive of a session at a time, of any kind.
        with pytest.raises(Exception):
            await asyncio.to_thread(ot.start_archive, sid, has_video=False)
        r = requests.post(f"{server.http_url}/v2/project/{ot.api_key}/archive", headers=ot.get_json_headers(),
                          json={"sessionId": sid, "hasVideo": True}, timeout=10)
        assert r.status_code == 409 and r.json()["code"] == "archive-in-progress"
        r = requests.delete(f"{server.http_url}/v2/project/{ot.api_key}/archive/{archive.id}", headers=ot.get_headers(), timeout=10)
        assert r.status_code == 409, "a recording archive cannot be deleted"
        await asyncio.sleep(3)
        stopped = await asyncio.to_thread(ot.stop_archive, archive.id)
        assert stopped.status == "available"
        got = await asyncio.to_thread(ot.get_archive, archive.id)
        assert got.status == "available" and got.duration >= 2 and got.size > 1000 and got.url
        listed = await asyncio.to_thread(ot.list_archives, session_id=sid)
        assert [a.id for a in listed.items] == [archive.id] and listed.count == 1
        samples, rate = download(ot, got.url)
        assert len(samples) > rate * 2.5
        tail = samples[-rate * 2:]
        assert np.sqrt(np.mean(tail ** 2)) > 0.01 and abs(dominant_frequency(tail, rate) - 440) < 15
        # Stopped already: stopping again is refused; deleting removes it and its file.
        r = requests.post(f"{server.http_url}/v2/project/{ot.api_key}/archive/{archive.id}/stop", headers=ot.get_headers(), timeout=10)
        assert r.status_code == 409
        await asyncio.to_thread(ot.delete_archive, archive.id)
        r = requests.get(f"{server.http_url}/v2/project/{ot.api_key}/archive/{archive.id}", headers=ot.get_headers(), timeout=10)
        assert r.status_code == 404
    finally:
        await pc.close()
        peer.close()


def test_a_composed_archive_lays_out_every_stream_with_the_mix(server):
    asyncio.run(_composed(server))


async def _composed(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    red = await publish(server, sid, ot.generate_token(sid, data="name=red"), (220, 30, 30), 440)
    blue = await publish(server, sid, ot.generate_token(sid, data="name=blue"), (30, 30, 220), 880)
    try:
        await asyncio.sleep(1)
        # The SDK's defaults: composed, with video and audio.
        archive = await asyncio.to_thread(ot.start_archive, sid, name="grid")
        assert (archive.status, archive.output_mode, archive.has_video, archive.has_audio, archive.resolution) == \
            ("started", opentok.OutputModes.composed, True, True, "640x480")
        await asyncio.sleep(2.5)
        # Blue in focus, laid out as a presentation: big along the top, the others in a strip below.
        await asyncio.to_thread(ot.set_stream_class_lists, sid, [{"id": blue[2], "layoutClassList": ["focus"]}])
        await asyncio.to_thread(ot.set_archive_layout, archive.id, "horizontalPresentation")
        with pytest.raises(opentok.exceptions.ArchiveError):  # no rule for stream elements
            await asyncio.to_thread(ot.set_archive_layout, archive.id, "custom", stylesheet="video { width: 50% }")
        await asyncio.sleep(2)
        await asyncio.to_thread(ot.stop_archive, archive.id)
        got = await asyncio.to_thread(ot.get_archive, archive.id)
        assert got.status == "available" and got.duration >= 3 and got.url
        r = requests.get(got.url, headers=ot.get_headers(), timeout=10)
        assert r.status_code == 200 and r.headers["Content-Type"] == "video/mp4" and len(r.content) == got.size
        pictures, times, samples, rate, codec = decode_media(r.content, keep_pictures=True)
        assert codec == "h264" and pictures[0].shape == (480, 640, 3)
        assert len(pictures) > 15 * got.duration * 0.7, (len(pictures), got.duration)
        def colour(picture, rows, columns):
            return picture[rows, columns].reshape(-1, 3).mean(axis=0)

        # First best fit: two streams side by side in the order they were published, each 4:3 in a 320 × 480 cell,
        # black around them.
        fit = pictures[int(15 * 1.5)].astype(int)
        assert np.abs(colour(fit, slice(200, 280), slice(120, 200)) - (220, 30, 30)).max() < 40, fit[240, 160]
        assert np.abs(colour(fit, slice(200, 280), slice(440, 520)) - (30, 30, 220)).max() < 40, fit[240, 480]
        assert fit[20:80, :].mean() < 40 and fit[400:460, :].mean() < 40
        # Then the presentation: blue (in focus) over the top four fifths, red small in the strip below.
        last = pictures[-1].astype(int)
        assert np.abs(colour(last, slice(120, 260), slice(260, 380)) - (30, 30, 220)).max() < 40, last[190, 320]
        assert np.abs(colour(last, slice(400, 470), slice(290, 350)) - (220, 30, 30)).max() < 40, last[430, 320]
        assert last[400:470, 0:200].mean() < 40
        # The mix: both tones.
        tail = samples[-rate * 2:]
        spectrum = np.abs(np.fft.rfft(tail))
        freqs = np.fft.rfftfreq(len(tail), 1 / rate)
        peak = spectrum.max()
        for tone in (440, 880):
            assert spectrum[np.abs(freqs - tone) < 5].max() > peak / 10, tone
    finally:
        await unpublish(red, blue)


def test_an_h264_stream_is_shown_in_composed_archives_and_kept_as_matroska_in_individual_ones(server):
    asyncio.run(_h264(server))


async def _h264(server):
    """An H.264 publisher (aiortc's: packetization mode 1, STAP-A and FU-A, as Safari may publish) beside a VP8 one:
    a composed archive decodes and shows both, side by side; in an individual archive its file is Matroska (`.mkv`,
    as the Video API names it) with its H.264 units as published and its sound."""
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    vp8 = await publish(server, sid, ot.generate_token(sid, data="name=vp8"), (30, 200, 30), 440)
    h264 = await publish(server, sid, ot.generate_token(sid, data="name=h264"), (200, 30, 200), 880, video_codec="video/H264")
    try:
        await asyncio.sleep(1)
        archive = await asyncio.to_thread(ot.start_archive, sid)
        await asyncio.sleep(3)
        await asyncio.to_thread(ot.stop_archive, archive.id)
        got = await asyncio.to_thread(ot.get_archive, archive.id)
        r = requests.get(got.url, headers=ot.get_headers(), timeout=10)
        pictures, _, samples, rate, _ = decode_media(r.content, keep_pictures=True)
        # Both pictures, in the order published: VP8 green on the left, H.264 magenta on the right; both tones heard.
        last = pictures[-1].astype(int)
        assert np.abs(last[200:280, 120:200].reshape(-1, 3).mean(axis=0) - (30, 200, 30)).max() < 40, last[240, 160]
        assert np.abs(last[200:280, 440:520].reshape(-1, 3).mean(axis=0) - (200, 30, 200)).max() < 40, last[240, 480]
        spectrum = np.abs(np.fft.rfft(samples[-rate * 2:]))
        freqs = np.fft.rfftfreq(rate * 2, 1 / rate)
        assert all(spectrum[np.abs(freqs - tone) < 5].max() > spectrum.max() / 10 for tone in (440, 880))
        archive = await asyncio.to_thread(ot.start_archive, sid, output_mode=opentok.OutputModes.individual)
        await asyncio.sleep(3)
        await asyncio.to_thread(ot.stop_archive, archive.id)
        got = await asyncio.to_thread(ot.get_archive, archive.id)
        r = requests.get(got.url, headers=ot.get_headers(), timeout=10)
        files = zipfile.ZipFile(io.BytesIO(r.content))
        colours, _, _, _, codec = decode_media(files.read(f"{vp8[2]}.webm"))
        assert codec == "vp8" and colours
        # The H.264 stream's file is Matroska, its units as published, with its sound.
        assert sorted(files.namelist()) == sorted([f"{archive.id}.json", f"{vp8[2]}.webm", f"{h264[2]}.mkv"])
        colours, times, samples, rate, codec = decode_media(files.read(f"{h264[2]}.mkv"))
        assert codec == "h264" and len(colours) > 15 * 2 and all(np.abs(c - (200, 30, 200)).max() < 25 for c in colours), colours[:2]
        assert abs(dominant_frequency(samples, rate) - 880) < 15
    finally:
        await unpublish(vp8, h264)


def test_resolutions_bitrates_and_simultaneous_archives(server):
    asyncio.run(_options(server))


async def _options(server):
    """A composed archive at 1280 × 720 (the publisher's 4:3 picture in the middle, black either side) and one at
    480 × 640 (black above and below, at the constant quantizer asked for), with the `maxBitrate` asked for (`ArchiveCanvasTests`: the encoder's bound); archives with tags of their own record
    the session at the same time, one without a tag or with a tag in use is refused; options not done here are
    refused rather than ignored."""
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    red = await publish(server, sid, ot.generate_token(sid, data="name=red"), (220, 30, 30), 440)
    url = f"{server.http_url}/v2/project/{ot.api_key}/archive"
    try:
        await asyncio.sleep(1)
        for bad, why in (({"resolution": "1024x768"}, "resolution"), ({"maxBitrate": 50_000}, "maxBitrate"),
                         ({"maxBitrate": 1.5e6 + 0.5}, "maxBitrate"), ({"multiArchiveTag": ""}, "multiArchiveTag"),
                         ({"quantizationParameter": 10}, "quantizationParameter"), ({"quantizationParameter": 20, "maxBitrate": 500_000}, "quantizationParameter"),
                         ({"quantizationParameter": 20, "outputMode": "individual"}, "quantizationParameter"), ({"hasTranscription": True}, "hasTranscription")):
            r = requests.post(url, headers=ot.get_json_headers(), json={"sessionId": sid, **bad}, timeout=10)
            assert r.status_code == 400 and why in r.json()["detail"], (bad, r.text)
        wide = await asyncio.to_thread(ot.start_archive, sid, resolution="1280x720", max_bitrate=800_000, multi_archive_tag="wide")
        tall = await asyncio.to_thread(ot.start_archive, sid, resolution="480x640", multi_archive_tag="tall", quantization_parameter=40)
        assert (wide.resolution, wide.max_bitrate, tall.resolution, tall.quantization_parameter) == ("1280x720", 800_000, "480x640", 40)
        for tag in (None, "wide"):
            r = requests.post(url, headers=ot.get_json_headers(), json={"sessionId": sid, "multiArchiveTag": tag}, timeout=10)
            assert r.status_code == 409 and r.json()["code"] == "archive-in-progress", (tag, r.text)
        await asyncio.sleep(3)
        for archive in (wide, tall):
            await asyncio.to_thread(ot.stop_archive, archive.id)
        wide, tall = [await asyncio.to_thread(ot.get_archive, a.id) for a in (wide, tall)]
        pictures = {}
        for archive in (wide, tall):
            r = requests.get(archive.url, headers=ot.get_headers(), timeout=10)
            pictures[archive.resolution], _, samples, rate, _ = decode_media(r.content, keep_pictures=True)
            assert abs(dominant_frequency(samples[-rate:], rate) - 440) < 15
            # The encoder's settings, which x264 writes into the stream: a constant quantizer of 40, or a bitrate.
            assert (b"rc=cqp" in r.content and b" qp=40 " in r.content) == (archive.id == tall.id), archive.resolution
        last = pictures["1280x720"][-1].astype(int)
        assert last.shape == (720, 1280, 3)
        assert np.abs(last[200:520, 300:980].reshape(-1, 3).mean(axis=0) - (220, 30, 30)).max() < 40
        assert last[:, :120].mean() < 40 and last[:, -120:].mean() < 40
        last = pictures["480x640"][-1].astype(int)
        assert last.shape == (640, 480, 3)
        assert np.abs(last[200:440, 60:420].reshape(-1, 3).mean(axis=0) - (220, 30, 30)).max() < 40
        assert last[:120, :].mean() < 40 and last[-120:, :].mean() < 40
    finally:
        await unpublish(red)


def test_archives_are_refused_without_clients_or_routing(server):
    ot = opentok_client(server)
    empty = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    url = f"{server.http_url}/v2/project/{ot.api_key}/archive"
    r = requests.post(url, headers=ot.get_json_headers(), json={"sessionId": empty, "hasVideo": False}, timeout=10)
    assert r.status_code == 404 and r.json()["code"] == "no-clients"
    relayed = ot.create_session(media_mode=opentok.MediaModes.relayed).session_id
    r = requests.post(url, headers=ot.get_json_headers(), json={"sessionId": relayed, "hasVideo": False}, timeout=10)
    assert r.status_code == 409
    r = requests.post(url, headers=ot.get_json_headers(), json={"sessionId": empty, "outputMode": "individual"}, timeout=10)
    assert r.status_code == 404 and r.json()["code"] == "no-clients"


def test_an_archive_survives_a_restart(tmp_path):
    data = tmp_path / "data"
    first = start_server(["--log-level", "warn"], https=False, dev=True, data_dir=data)
    try:
        ot = opentok_client(first)
        sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
        peer = VideoPeer(first, sid, ot.generate_token(sid))
        peer.publish("cam")  # someone publishing: the archive records (it is paused while nobody does)
        archive = ot.start_archive(sid, has_video=False)
        wait_until(lambda: ot.get_archive(archive.id).status == "started", timeout=5)
        import time
        time.sleep(1.2)
        ot.stop_archive(archive.id)
        peer.close()
    finally:
        first.stop()
    second = start_server(["--log-level", "warn"], https=False, dev=True, data_dir=data)
    try:
        ot = opentok_client(second)
        again = ot.get_archive(archive.id)
        assert again.status == "available" and again.duration >= 1 and again.size > 0
        r = requests.get(again.url, headers=ot.get_headers(), timeout=10)
        assert r.status_code == 200 and r.content[4:8] == b"ftyp"
    finally:
        second.stop()


def test_an_archive_that_cannot_be_saved_is_refused(tmp_path):
    """An archive is acknowledged only once its metadata is written: with the archives directory unwritable (a file
    in its place) the start is 503 and nothing is left recording; once it can be written again (the directory is
    made again), archives start and a manual one's stream changes are saved before they are acknowledged — one that
    cannot be saved is 503 and undone."""
    data = tmp_path / "data"
    server = start_server(["--log-level", "warn"], https=False, dev=True, data_dir=data)
    try:
        ot = opentok_client(server)
        sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
        peer = VideoPeer(server, sid, ot.generate_token(sid))
        stream = peer.publish("cam")
        archives = data / "video" / "archives"
        shutil.rmtree(archives)
        archives.write_text("not a directory")
        url = f"{server.http_url}/v2/project/{ot.api_key}/archive"
        r = requests.post(url, headers=ot.get_json_headers(), json={"sessionId": sid, "hasVideo": False}, timeout=10)
        assert r.status_code == 503 and "saved" in r.json()["detail"], r.text
        assert ot.list_archives(session_id=sid).count == 0
        archives.unlink()
        archive = ot.start_archive(sid, has_video=False, stream_mode=opentok.StreamModes.manual)
        assert archive.status == "started" and (archives / f"{archive.id}.json").exists()
        ot.add_archive_stream(archive.id, stream)
        assert json.loads((archives / f"{archive.id}.json").read_text())["streams"] == [{"streamId": stream, "hasAudio": True, "hasVideo": True}]
        # A change that cannot be saved is refused and undone.
        shutil.rmtree(archives)
        archives.write_text("not a directory")
        r = requests.patch(f"{url}/{archive.id}/streams", headers=ot.get_json_headers(), json={"removeStream": stream}, timeout=10)
        assert r.status_code == 503, r.text
        assert ot.get_archive(archive.id).streams == [{"streamId": stream, "hasAudio": True, "hasVideo": True}]
        archives.unlink()
        ot.stop_archive(archive.id)
        peer.close()
    finally:
        server.stop()


def test_an_audio_archive_of_an_earlier_version_is_still_served(tmp_path):
    """Audio-only archives were Ogg Opus recorded by the conversations' recorder before archives were MP4: one left
    in the data directory by such a version (its metadata naming the recording, the recording's file and sidecar)
    is still listed, downloaded as `audio/ogg` and deleted with its files."""
    data = tmp_path / "data"
    server = start_server(["--log-level", "warn"], https=False, dev=True, data_dir=data)
    server.stop()  # the account and the directories exist now
    key = account(server)["api_key"]
    recordings, archives = data / "audio" / "recordings", data / "video" / "archives"
    recordings.mkdir(parents=True, exist_ok=True)
    archives.mkdir(parents=True, exist_ok=True)
    wav, ogg = tmp_path / "tone.wav", recordings / "rec-0123456789ab.ogg"
    subprocess.run(["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", str(wav), "synth", "2", "sine", "440"], check=True)
    subprocess.run(["opusenc", "--quiet", str(wav), str(ogg)], check=True)
    size = ogg.stat().st_size
    (recordings / "rec-0123456789ab.json").write_text(json.dumps({
        "id": "rec-0123456789ab", "source": "1_old", "applicationID": key, "format": "ogg", "channels": 1, "sampleRate": 48000,
        "status": "completed", "endReason": "stopped", "startTime": "2026-11-01T10:00:00Z", "endTime": "2026-11-01T10:00:02Z",
        "duration": 2.0, "size": size, "droppedFrames": 0}))
    (archives / "old-archive.json").write_text(json.dumps({
        "id": "old-archive", "sessionID": "1_old", "projectID": key, "name": "before", "createdAt": 1_790_000_000_000,
        "status": "available", "reason": "user initiated", "recordingID": "rec-0123456789ab", "duration": 2, "size": size,
        "updatedAt": 1_790_000_002_000}))
    server = start_server(["--log-level", "warn"], https=False, dev=True, data_dir=data)
    try:
        ot = opentok_client(server)
        got = ot.get_archive("old-archive")
        assert (got.status, got.name, got.has_audio, got.has_video, got.stream_mode) == ("available", "before", True, False, "auto")
        r = requests.get(got.url, headers=ot.get_headers(), timeout=10)
        assert r.status_code == 200 and r.headers["Content-Type"] == "audio/ogg" and r.content == ogg.read_bytes()
        ot.delete_archive("old-archive")
        assert not ogg.exists() and not (recordings / "rec-0123456789ab.json").exists() and not (archives / "old-archive.json").exists()
    finally:
        server.stop()


def test_an_archive_is_paused_while_nobody_publishes(server):
    asyncio.run(_paused(server))


async def _paused(server):
    """As the Video API's: `paused` while nobody publishes (a client connected, no stream), nothing recorded then —
    the file goes on from where it paused — and `started` again when someone publishes."""
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    watcher = await asyncio.to_thread(VideoPeer, server, sid, ot.generate_token(sid))

    async def status_becomes(status):
        deadline = asyncio.get_running_loop().time() + 10
        while (await asyncio.to_thread(ot.get_archive, archive.id)).status != status:
            assert asyncio.get_running_loop().time() < deadline, f"the archive never became {status}"
            await asyncio.sleep(0.2)

    archive = await asyncio.to_thread(ot.start_archive, sid, name="pauses")
    await status_becomes("paused")
    red = await publish(server, sid, ot.generate_token(sid), (220, 30, 30), 440)
    await status_becomes("started")
    await asyncio.sleep(2.5)
    await unpublish(red)
    await status_becomes("paused")
    await asyncio.sleep(3)  # not recorded
    blue = await publish(server, sid, ot.generate_token(sid), (30, 30, 220), 880)
    await status_becomes("started")
    await asyncio.sleep(2.5)
    stopped = await asyncio.to_thread(ot.stop_archive, archive.id)
    await unpublish(blue)
    watcher.close()
    assert stopped.status == "available" and 4 <= stopped.duration <= 6, stopped.duration
    r = requests.get(stopped.url, headers=ot.get_headers(), timeout=10)
    colours, times, samples, rate, codec = decode_media(r.content)
    assert codec == "h264" and times[-1] < 6.5, f"the 3 s paused are not in the file: it lasts {times[-1]:.1f} s"
    red_frames = [t for c, t in zip(colours, times) if c[0] > 150 and c[2] < 80]
    blue_frames = [t for c, t in zip(colours, times) if c[2] > 150 and c[0] < 80]
    assert len(red_frames) > 20 and len(blue_frames) > 20 and max(red_frames) < min(blue_frames), (len(red_frames), len(blue_frames))
    # Between red's last picture and blue's first, at most the moments before blue's first picture is decoded
    # (a recorded pause would be 3 s, 45 pictures).
    gap = [t for c, t in zip(colours, times) if max(red_frames) < t < min(blue_frames)]
    assert len(gap) < 30, f"{len(gap)} pictures between red and blue: the pause was recorded"
    first, last = samples[: int(rate * 1.5)], samples[-int(rate * 1.5):]
    assert dominant_frequency(first, rate) == pytest.approx(440, abs=15) and dominant_frequency(last, rate) == pytest.approx(880, abs=15)


def test_a_custom_layout_places_streams_by_their_classes(server):
    asyncio.run(_custom(server))


async def _custom(server):
    """`layout: {type: custom, stylesheet}`: CSS places the streams by their layout classes (red published first,
    with class `right`; blue with `left`), each covering its half; then `pip`, where the stream with class `full`
    takes the whole picture and the other the corner."""
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    red = await publish(server, sid, ot.generate_token(sid, initial_layout_class_list=["right"]), (220, 30, 30), 440)
    blue = await publish(server, sid, ot.generate_token(sid, initial_layout_class_list=["left"]), (30, 30, 220), 880)
    css = """
        stream { position: absolute; top: 0; width: 50%; height: 100%; object-fit: cover }
        stream.left { left: 0 }
        stream.right { right: 0 }
    """
    try:
        await asyncio.sleep(1)
        archive = await asyncio.to_thread(ot.start_archive, sid, layout={"type": "custom", "stylesheet": css})
        await asyncio.sleep(2.5)
        await asyncio.to_thread(ot.set_stream_class_lists, sid, [{"id": blue[2], "layoutClassList": ["full"]}])
        await asyncio.to_thread(ot.set_archive_layout, archive.id, "pip")
        await asyncio.sleep(2)
        await asyncio.to_thread(ot.stop_archive, archive.id)
        got = await asyncio.to_thread(ot.get_archive, archive.id)
        r = requests.get(got.url, headers=ot.get_headers(), timeout=10)
        pictures, times, _, _, _ = decode_media(r.content, keep_pictures=True)

        def colour(picture, rows, columns):
            return picture[rows, columns].reshape(-1, 3).mean(axis=0)

        custom = pictures[int(15 * 1.5)].astype(int)
        # Blue (class left) covers the left half to its edges, red (class right) the right half: no black bars.
        assert np.abs(colour(custom, slice(0, 480), slice(0, 310)) - (30, 30, 220)).max() < 40, custom[240, 160]
        assert np.abs(colour(custom, slice(0, 480), slice(330, 640)) - (220, 30, 30)).max() < 40, custom[240, 480]
        # pip: blue (class full) fills the picture, red small in the bottom-right corner.
        last = pictures[-1].astype(int)
        assert np.abs(colour(last, slice(40, 300), slice(40, 400)) - (30, 30, 220)).max() < 40, last[150, 200]
        assert np.abs(colour(last, slice(370, 460), slice(490, 620)) - (220, 30, 30)).max() < 40, last[415, 555]
    finally:
        await unpublish(red, blue)
