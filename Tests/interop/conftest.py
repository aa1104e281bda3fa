"""Session fixtures for the live interop suite.

`make test` builds the release binary first; nothing is built here. The session server runs with HTTPS
and a fresh data directory, and must exit 0 on SIGTERM at the end of the session.
"""
import os
import signal

# Every server a test starts picks free UDP media ports, so servers can run side by side.
os.environ.setdefault("SWITCHBOARD_MEDIA_PORT", "0")

import pytest

from rig import chromium, start_server

# Files that take a minute or more, started first (after the two media groups below) so that `make test`'s
# workers do not end the run with one of them alone on the machine.
LONGEST_FIRST = ["test_voice_phone.py", "test_web_reconnect.py", "test_realtime.py", "test_rooms_lifecycle.py", "test_video_broadcast_lifetime.py",
                 "test_video_archive_lifetime.py"]

# Files whose tests keep real-time media flowing through encoders and decoders. With pytest-xdist workers
# (`make test`: --dist loadgroup) each of the two sets below is one group, run one file after another on one
# worker: two browsers encoding video at once on a 2-core machine starve each other (a bandwidth estimate that
# never ramps, too few decoded frames), and so would two sets of many aiortc peers or load generators. One file
# of each set runs beside one of the other and beside the files that mostly wait (timeouts, back-offs,
# signalling). Every other file is a group of its own, so its module fixtures start once.
BROWSER_MEDIA = {
    "test_media_chromium.py", "test_media_loss.py", "test_video_sdk_chromium.py", "test_video_playground.py",
    "test_video_capture.py", "test_video_archive_playback.py", "test_rooms_browser.py", "test_rooms_firefox.py", "test_rooms_mixed_browser.py",
    "test_phone_web.py", "test_phone_sip_web.py", "test_video_relayed.py", "test_video_render.py", "test_video_simulcast.py",
    "test_video_publisher_fallback.py", "test_video_example.py",
}
PEER_MEDIA = {
    "test_media_aiortc.py", "test_media_send_time.py", "test_video_cli.py", "test_video_sdk.py", "test_client_cli.py", "test_client_network.py",
    "test_rooms_mixed_aiortc.py", "test_rooms_mixed_players.py", "test_rooms_aiortc.py", "test_rooms_policy.py",
    "test_rooms_mode_switch.py", "test_load_authenticated.py", "test_load_cli.py", "test_load_mixed.py",
    "test_janus_peers.py", "test_video_audio_connector.py", "test_video_sip_dial.py", "test_video_archive.py", "test_video_archive_manual.py",
    "test_video_broadcast.py", "test_video_broadcast_low_latency.py",
}


# Tests that belong to another group than their file's.
GROUP_OF_TEST = {
    "test_video_sdk.py::test_vonage_sdk_experience_composer": "media-browsers",  # its render is a browser encoding video
}


def group(nodeid):
    """The group of a test, by its node id: `Tests/interop/test_x.py::test_y[param]`."""
    path, _, test = nodeid.partition("::")
    name = path.rsplit("/", 1)[-1]
    explicit = GROUP_OF_TEST.get(name + "::" + test.split("[", 1)[0])
    return explicit or ("media-browsers" if name in BROWSER_MEDIA else "media-peers" if name in PEER_MEDIA else name)


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` with the groups above. pytest-xdist's own loadgroup renames each test after its
    `xdist_group` mark, which pytest 9's node ids no longer allow: every test went to any worker. Here the
    controller, which sees only node ids, takes each test's group from `group`; a group is one scope of
    pytest-xdist's loadscope scheduling (one worker, in collection order: --no-loadscope-reorder)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return group(nodeid)

    return GroupScheduling(config, log)


def pytest_collection_modifyitems(items):
    def rank(item):
        name = item.path.name
        if name in BROWSER_MEDIA or name in PEER_MEDIA:
            return 0  # the largest groups first (make test keeps collection order: --no-loadscope-reorder)
        return 1 + (LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST))
    items.sort(key=rank)  # stable: the order within a file and among the rest is kept


@pytest.fixture(scope="session")
def server():
    s = start_server(dev=True)
    try:
        yield s
    finally:
        alive = s.alive()
        code = s.stop(signal.SIGTERM)
        log = s.log()
        s.cleanup()
        assert alive, f"switchboard died during the session:\n{log[-4000:]}"
        assert code == 0, f"switchboard exited with {code} on SIGTERM:\n{log[-4000:]}"


# Module scope: sync Playwright keeps an event loop on the main thread while it is open, which other
# modules' own Playwright sessions and asyncio.run() would trip over; it closes when its module is done.
@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b
