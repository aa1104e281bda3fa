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

# Files that take a minute or more, started first so that `make test`'s workers (pytest-xdist, one file per
# worker at a time) do not end the run with one of them alone on the machine.
LONGEST_FIRST = ["test_web_reconnect.py", "test_realtime.py", "test_phone_sip_web.py", "test_rooms_lifecycle.py",
                 "test_voice_phone.py", "test_video_sdk_chromium.py"]


def pytest_collection_modifyitems(items):
    def rank(item):
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)
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
