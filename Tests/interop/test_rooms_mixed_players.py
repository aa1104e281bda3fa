"""Players and recordings in a mixed room over REST (application JWT): speech said into the room is
heard by aiortc listeners for a plausible time, bad sources are refused with typed errors, a WAV
recording of the room holds both speakers' tones for the time it ran and one with a channel per speaker
holds each alone; recordings end at their time-out and on silence."""
import asyncio
import json
import subprocess
import time

import numpy as np
import pytest
import requests

from rig import start_server
from rooms_support import app_headers, create_room, join_room, loopback_ice, mix_track, sine_track, tone_strength, wait_for
from media_support import mp3_seconds, wav_samples

TONES = {"speaker-a": 440.0, "speaker-b": 660.0}


@pytest.fixture(scope="module")
def server():
    s = start_server(["--media-port", "0", "--threads", "2"], https=False, dev=True,
                     env={"SWITCHBOARD_ROOM_MODE": "mixed"})
    yield s
    s.stop()
    s.cleanup()


async def collect_until(track, seconds):
    """What a listener hears for `seconds` of wall time: the mixer sends nothing once the room is quiet
    (the listener's decoder sees discontinuous transmission), so a quiet end is not an error."""
    chunks, rate = [], 48000
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            frame = await asyncio.wait_for(track.recv(), timeout=left)
        except asyncio.TimeoutError:
            break
        rate = frame.sample_rate
        data = frame.to_ndarray()
        chunks.append((data.reshape(-1, len(frame.layout.channels))[:, 0] if data.ndim == 2 and data.shape[0] == 1 else data[0])
                      .astype(np.float64))
    return (np.concatenate(chunks) if chunks else np.zeros(0)), rate


def test_say_heard_and_recording_holds_the_tones(server, tmp_path):
    loopback_ice()
    api = server.http_url + "/rooms/api"
    room = create_room(api, "Players")
    base = server.http_url + f"/v1/conversations/{room}"

    async def member(name):
        return (await join_room(server, room, name))[:2]

    async def scenario():
        headers = app_headers(server)
        listeners = [await member(f"listener-{i}") for i in range(2)]
        for _, m in listeners:
            await m.subscribe()
        await wait_for(lambda: all(mix_track(m) is not None for _, m in listeners), timeout=30, what="the mix on the listeners")

        # Bad sources: typed errors, nothing starts.
        bad = requests.post(base + "/say", json={"text": "hello", "language": "xx-XX"}, headers=headers, timeout=10)
        assert bad.status_code == 422, bad.text
        unreachable = requests.post(base + "/play", json={"url": "http://127.0.0.1:9/none.wav"}, headers=headers, timeout=30)
        assert unreachable.status_code == 422, unreachable.text
        assert requests.post(base + "/say", json={"text": "hi"}, timeout=10).status_code == 401

        r = requests.post(base + "/say", json={"text": "The quick brown fox jumps over the lazy dog, twice over.", "language": "en-GB"},
                          headers=headers, timeout=10)
        assert r.status_code == 201, r.text
        heard = await asyncio.gather(*(collect_until(mix_track(m), 5.0) for _, m in listeners))

        speakers = []
        for name, tone in TONES.items():
            rt, m = await member(name)
            await m.publish(sine_track(tone, amplitude=0.2))
            speakers.append((rt, m))
        await asyncio.sleep(2.0)
        rec = requests.post(base + "/recordings", json={"format": "wav"}, headers=headers, timeout=10)
        assert rec.status_code == 201, rec.text
        rid = rec.json()["id"]
        # Beside it, a channel per speaker (one more than there are: it stays silent).
        per_speaker = requests.post(base + "/recordings", json={"format": "wav", "channels": 3}, headers=headers, timeout=10)
        assert per_speaker.status_code == 201 and per_speaker.json()["channels"] == 3, per_speaker.text
        await asyncio.sleep(3.0)
        stopped = requests.delete(server.http_url + f"/v1/recordings/{rid}", headers=headers, timeout=10).json()
        requests.delete(server.http_url + f"/v1/recordings/{per_speaker.json()['id']}", headers=headers, timeout=10)
        channels = requests.get(server.http_url + f"/v1/recordings/{per_speaker.json()['id']}/file", headers=headers, timeout=10)
        meta = requests.get(server.http_url + f"/v1/recordings/{rid}", headers=headers, timeout=10).json()
        file = requests.get(server.http_url + f"/v1/recordings/{rid}/file", headers=headers, timeout=10)
        for rt, m in listeners + speakers:
            await m.close()
            await rt.close()
        return heard, stopped, meta, file, channels

    heard, stopped, meta, file, channels = asyncio.run(asyncio.wait_for(scenario(), 120))
    for samples, rate in heard:
        window = rate // 50
        rms = np.sqrt(np.mean(samples[: len(samples) // window * window].reshape(-1, window) ** 2, axis=1))
        voiced = float((rms > 300).sum()) * 0.02
        print("voiced seconds", voiced, "peak", float(np.abs(samples).max()))
        assert np.abs(samples).max() > 2000, "the listener heard silence"
        assert 1.0 < voiced < 4.0, f"speech for {voiced} s"

    print("recording", meta)
    assert stopped["status"] == "completed" and meta["status"] == "completed", meta
    assert 2.0 < meta["duration"] < 6.0, meta
    assert file.status_code == 200 and file.headers["content-type"] == "audio/wav"
    assert meta["size"] == len(file.content)
    path = tmp_path / "room.wav"
    path.write_bytes(file.content)
    soxi = float(subprocess.run(["soxi", "-D", str(path)], capture_output=True, text=True, check=True).stdout)
    assert abs(soxi - meta["duration"]) < 0.05, soxi
    data = np.frombuffer(file.content[44:], dtype="<i2").astype(np.float64)
    tail = data[-48000:]  # the last second: both speakers established
    assert np.abs(tail).max() > 1000
    for name, tone in TONES.items():
        assert tone_strength(tail, 48000, tone) > 20, f"{name}'s tone is missing from the recording"

    # The per-speaker recording: each speaker's tone alone on a channel of its own, the third channel silent.
    assert channels.status_code == 200 and channels.content[22] == 3, channels.status_code
    per_channel = np.frombuffer(channels.content[44:], dtype="<i2").astype(np.float64).reshape(-1, 3)[-48000:]
    found = []
    for c in range(2):
        strengths = {tone: tone_strength(per_channel[:, c], 48000, tone) for tone in TONES.values()}
        print("channel", c, strengths)
        mine = max(strengths, key=strengths.get)
        assert strengths[mine] > 20 and strengths[mine] > 100 * min(strengths.values()), f"channel {c} is not one speaker: {strengths}"
        found.append(mine)
    assert sorted(found) == sorted(TONES.values()), found
    assert np.abs(per_channel[:, 2]).max() < 50, "the spare channel is not silent"


def test_recordings_end_at_their_time_out_and_on_silence(server, tmp_path):
    """Two recordings of one speaker: one ends by itself at its `timeout` (3 s) and begins with its beep, the other
    ends `end_on_silence` (3 s) after the speaker leaves a quiet listener alone in the room; bad options are refused with the documented errors."""
    loopback_ice()
    room = create_room(server.http_url + "/rooms/api", "Recorder endings")
    base = server.http_url + f"/v1/conversations/{room}"
    headers = app_headers(server)

    def meta(rid):
        return requests.get(server.http_url + f"/v1/recordings/{rid}", headers=headers, timeout=10).json()

    async def scenario():
        # A member who stays (and says nothing) keeps the room, and its mixer, open once the speaker has left.
        stays, listener, _ = await join_room(server, room, "listener")
        await listener.subscribe()
        rt, speaker, _ = await join_room(server, room, "speaker")
        await speaker.publish(sine_track(440.0, amplitude=0.2))
        await asyncio.sleep(1.5)
        refused = {json.dumps(body): requests.post(base + "/recordings", json=body, headers=headers, timeout=10)
                   for body in ({"end_on_silence": "soon"}, {"timeout": 2}, {"end_on_silence": 11}, {"format": "flac"},
                                {"beep_start": "yes"}, {"split": True}, {"channels": "two"}, {"channels": 33},
                                {"channels": 3, "format": "mp3"})}
        timed = requests.post(base + "/recordings", json={"format": "ogg", "timeout": 3, "beep_start": True}, headers=headers, timeout=10)
        quiet = requests.post(base + "/recordings", json={"format": "mp3", "end_on_silence": 3}, headers=headers, timeout=10)
        assert timed.status_code == 201 and quiet.status_code == 201, (timed.text, quiet.text)
        await asyncio.sleep(4.5)
        left_at = time.monotonic()
        await speaker.close()
        await rt.close()
        await wait_for(lambda: meta(quiet.json()["id"])["status"] != "recording", timeout=15, what="the silence to end it")
        after_leaving = time.monotonic() - left_at
        # A finished recording played back into the room: the listener hears the speaker's tone again.
        missing = requests.post(base + "/play", json={"recording_id": "rec-000000000000000000000000"}, headers=headers, timeout=10)
        assert missing.status_code == 404 and missing.json()["code"] == "recording-not-found", missing.text
        replay = requests.post(base + "/play", json={"recording_id": timed.json()["id"]}, headers=headers, timeout=10)
        assert replay.status_code == 201, replay.text
        replayed = await collect_until(mix_track(listener), 2.0)
        await listener.close()
        await stays.close()
        return refused, timed.json()["id"], quiet.json()["id"], after_leaving, replayed

    refused, timed, quiet, after_leaving, (replayed, rate) = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert tone_strength(replayed, rate, 440.0) > 20, "the replayed recording is not heard"
    codes = {body: (r.status_code, r.json().get("code")) for body, r in refused.items()}
    print("refused", codes)
    assert codes == {'{"end_on_silence": "soon"}': (400, "invalid-end-on-silence"), '{"timeout": 2}': (422, "invalid-audio"),
                     '{"end_on_silence": 11}': (422, "invalid-audio"), '{"format": "flac"}': (400, "invalid-format"),
                     '{"beep_start": "yes"}': (400, "invalid-beep-start"), '{"split": true}': (422, "invalid-audio"),
                     '{"channels": "two"}': (400, "invalid-channels"), '{"channels": 33}': (422, "invalid-audio"),
                     '{"channels": 3, "format": "mp3"}': (422, "invalid-audio")}, codes

    t = meta(timed)
    print("timed", t)
    assert t["status"] == "completed" and t["end_reason"] == "timeout" and abs(t["duration"] - 3.0) < 0.05, t
    ogg = tmp_path / "timed.ogg"
    ogg.write_bytes(requests.get(server.http_url + f"/v1/recordings/{timed}/file", headers=headers, timeout=10).content)
    wav = tmp_path / "timed.wav"  # Debian's sox reads no Opus: opus-tools decodes it (at 48 kHz, as recorded)
    subprocess.run(["opusdec", "--quiet", "--rate", "48000", str(ogg), str(wav)], check=True)
    assert abs(float(subprocess.run(["soxi", "-D", str(wav)], capture_output=True, text=True, check=True).stdout) - 3.0) < 0.1
    data = np.frombuffer(wav.read_bytes()[44:], dtype="<i2").astype(np.float64)
    assert tone_strength(data[: 48000 // 5], 48000, 1000.0) > 20, "no beep at the start"
    assert tone_strength(data[-48000:], 48000, 440.0) > 20, "the speaker is missing"

    q = meta(quiet)
    print("quiet", q, "ended", round(after_leaving, 2), "s after the speaker left")
    assert q["status"] == "completed" and q["end_reason"] == "silence", q
    # 1.5 s in the room before it started, 4.5 s recorded with the speaker, then 3 s of silence.
    assert 6.5 < q["duration"] < 9.0, q
    assert 2.5 < after_leaving < 6.0, after_leaving
    mp3 = tmp_path / "quiet.mp3"
    mp3.write_bytes(requests.get(server.http_url + f"/v1/recordings/{quiet}/file", headers=headers, timeout=10).content)
    # Its LAME tag gives players its length to the sample; sox decodes it (libmad) to the tone and the silence.
    seconds = mp3_seconds(mp3.read_bytes())
    print("mp3 plays", seconds, "s")
    assert seconds is not None and abs(seconds - q["duration"]) < 0.025, (seconds, q)
    decoded = tmp_path / "quiet.wav"
    subprocess.run(["sox", str(mp3), str(decoded)], check=True)
    data, rate = wav_samples(decoded)
    assert tone_strength(data[rate * 2:rate * 4], rate, 440.0) > 20, "the speaker is missing"
    assert np.abs(data[-rate:]).max() < 300, "the last second is not silent"


def test_tones_and_a_country_ringback_are_heard_and_stopped(server):
    """`tone` with two frequencies and `tone` with a country's ringback (GB: 400 + 450 Hz) reach a listener of
    the mix; DELETE stops what plays (then 404 with nothing left); bad tones are refused with their codes."""
    loopback_ice()
    room = create_room(server.http_url + "/rooms/api", "Tones")
    base = server.http_url + f"/v1/conversations/{room}"
    headers = app_headers(server)

    async def scenario():
        rt, listener, _ = await join_room(server, room, "listener")
        await listener.subscribe()
        await wait_for(lambda: mix_track(listener) is not None, timeout=30, what="the mix")
        refused = [requests.post(base + "/tone", json=body, headers=headers, timeout=10)
                   for body in ({"frequencies": [5]}, {"ringback": "XX"}, {"frequency": 440, "duration_ms": 0})]
        dual = requests.post(base + "/tone", json={"frequencies": [350, 440], "duration_ms": 1500}, headers=headers, timeout=10)
        assert dual.status_code == 201, dual.text
        heard_dual = await collect_until(mix_track(listener), 1.2)
        await asyncio.sleep(0.5)
        ring = requests.post(base + "/tone", json={"ringback": "GB", "duration_ms": 30000}, headers=headers, timeout=10)
        assert ring.status_code == 201, ring.text
        heard_ring = await collect_until(mix_track(listener), 1.0)
        stopped = requests.delete(base + "/tone", headers=headers, timeout=10)
        again = requests.delete(base + "/tone", headers=headers, timeout=10)
        await listener.close()
        await rt.close()
        return refused, heard_dual, heard_ring, stopped, again

    refused, (dual, rate), (ring, ring_rate), stopped, again = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert [(r.status_code, r.json()["code"]) for r in refused] == [
        (400, "invalid-frequency"), (400, "invalid-country"), (400, "invalid-duration")], [r.text for r in refused]
    for tone in (350, 440):
        assert tone_strength(dual, rate, tone) > 20, f"{tone} Hz is missing"
    for tone in (400, 450):
        assert tone_strength(ring, ring_rate, tone) > 20, f"the GB ringback's {tone} Hz is missing"
    assert stopped.status_code == 200 and stopped.json()["stopped"] == 1, stopped.text
    assert again.status_code == 404 and again.json()["code"] == "not-playing", again.text
