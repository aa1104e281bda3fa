"""A subscriber's bandwidth estimate measures the link from the server, not the publisher's as well: the server
writes the time it received each packet into the abs-send-time header extension it forwards (and offers that
extension to subscribers), so a publisher whose own uplink queues — its send times sliding hundreds of milliseconds
behind — does not read to every subscriber as congestion on their links (which would give them all a smaller
simulcast size). aiortc publishes video whose abs-send-time is skewed as a queue building and draining would
skew it; an aiortc subscriber's packets arrive spaced as their abs-send-times say."""

import asyncio
import time
from types import SimpleNamespace

import pytest

from media_support import MediaServer, loopback_ice, publish, subscribe, tracks_arrive
from rig import run_async

aiortc = pytest.importorskip("aiortc")

QUEUE_MS = 400  # the publisher's make-believe uplink queue grows to this, over 1.6 s, then drains at once


@pytest.fixture
def server():
    s = MediaServer()
    yield s
    s.stop()


def queued_clock():
    """aiortc's sender clock, its NTP time behind the real one by a queue that builds and drains: what a sender's
    abs-send-time does to a receiver when its packets wait in an uplink queue."""
    from aiortc import clock

    def current_ntp_time():
        queue_ms = (time.monotonic() * 1000 % 1600) / 1600 * QUEUE_MS
        return clock.current_ntp_time() - int(queue_ms / 1000 * (1 << 32))

    return SimpleNamespace(current_ntp_time=current_ntp_time, current_datetime=clock.current_datetime)


def spread_ms(samples):
    """How far arrival spacing and abs-send-time spacing disagree across the samples (ms): the offsets' 10th to 90th
    percentile, so a moment this process's event loop stalls on a loaded machine (a few late arrivals, 250 ms once
    beside three other test workers) does not read as a queue, which moves every packet's offset."""
    send0, arrival0 = samples[0]
    offsets, unwrapped, previous = [], send0, send0
    for send, arrival in samples[1:]:
        unwrapped += (send - previous) % (1 << 24)  # 6.18 fixed point wraps every 64 s
        previous = send
        offsets.append((arrival - arrival0) - (unwrapped - send0) * 1000 / (1 << 18))
    offsets.sort()
    return offsets[len(offsets) * 9 // 10] - offsets[len(offsets) // 10]


def test_a_subscribers_abs_send_time_is_the_servers_not_the_publishers(server, monkeypatch):
    loopback_ice()
    import aiortc.rtcrtpreceiver
    import aiortc.rtcrtpsender
    from aiortc.mediastreams import VideoStreamTrack

    monkeypatch.setattr(aiortc.rtcrtpsender, "clock", queued_clock())
    stamped, received = [], []
    original_handle = aiortc.rtcrtpreceiver.RTCRtpReceiver._handle_rtp_packet

    async def handle(receiver, packet, arrival_time_ms):
        if packet.extensions.abs_send_time is not None:
            received.append((packet.extensions.abs_send_time, arrival_time_ms))
        return await original_handle(receiver, packet, arrival_time_ms)

    monkeypatch.setattr(aiortc.rtcrtpreceiver.RTCRtpReceiver, "_handle_rtp_packet", handle)
    original_ntp = aiortc.rtcrtpsender.clock.current_ntp_time

    def recorded_ntp():
        value = original_ntp()
        stamped.append((value >> 14 & 0xFFFFFF, time.monotonic() * 1000))
        return value

    aiortc.rtcrtpsender.clock.current_ntp_time = recorded_ntp

    async def scenario():
        publisher = await publish(server, "queued", [VideoStreamTrack()])
        await asyncio.sleep(1.0)
        subscriber, tracks = await subscribe(server, "queued")
        await tracks_arrive(tracks)
        assert tracks, "no remote track"

        async def drain():
            while True:
                await tracks[0].recv()
        drainer = asyncio.ensure_future(drain())
        await asyncio.sleep(5.0)
        drainer.cancel()
        stats = await server.arequest("GET", f"/test/media/transports/{subscriber.transport_id}/stats")
        await subscriber.close()
        await publisher.close()
        return stats

    stats = run_async(scenario(), 60)
    assert len(received) > 100, f"the subscriber got {len(received)} packets with abs-send-time (it is offered)"
    publisher_spread, subscriber_spread = spread_ms(stamped[-len(received):]), spread_ms(received)
    print(f"publisher's send times against its clock disagree by {publisher_spread:.0f} ms; the subscriber's "
          f"against arrival by {subscriber_spread:.0f} ms over {len(received)} packets; estimate "
          f"{stats.get('receiverEstimate')}")
    # The queue's sawtooth spreads the publisher's offsets evenly over 0–400 ms: about 320 between the percentiles.
    assert publisher_spread > QUEUE_MS * 0.6, "the publisher's queue did not show in its own send times"
    # Loopback from the server: spacing as stamped, give or take a busy machine's scheduling.
    assert subscriber_spread < QUEUE_MS / 4, "the subscriber sees the publisher's queue, not the server's send times"
