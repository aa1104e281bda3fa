"""The web client's realtime reconnect, its HTTP errors and the rooms page's accessibility, in Debian
Chromium (fake microphones, loopback).

* A dropped TCP connection (a proxy between page and server cuts it) comes back with exactly one new
  WebSocket and the same, resumed session; a server restart comes back with exactly one new open socket
  and a fresh login; the room keeps working either way.
* Repeated drops, outages and calls to connect()/reconnect() never leave two sockets alive at once, and
  attempts back off instead of looping; close() cancels a pending reconnect.
* Close code 4001 (tokenExpired) gets a new token and logs in; 4003 (loginTimeout) reconnects and
  resumes, with backoff when it repeats.
* A proxy's HTML 502 or a plain-text 503 is shown with its status code.
* Every input of the rooms page has an accessible name; speaking and muted changes are announced in a
  polite live region.
* The video playground, on the same client, reconnects on one new socket and publishes again.

Screenshots go to Tests/interop/artifacts/ (web-*.png)."""
from __future__ import annotations

import json
import re
import shutil
import socket
import tempfile
import threading
import time

import pytest

from media_support import CHROMIUM_ARGS
from rig import CHROMIUM, free_port, screenshot, start_server

# Counts the page's WebSockets from inside: created, open now (created, no close event yet), the most
# ever alive at once, and when each was created (to see the backoff).
COUNT_SOCKETS = """
(() => {
  const Native = window.WebSocket;
  const s = window.__sockets = { created: 0, opened: 0, live: 0, maxLive: 0, times: [], closes: [] };
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      s.created += 1; s.live += 1; s.maxLive = Math.max(s.maxLive, s.live); s.times.push(performance.now());
      this.addEventListener("open", () => { s.opened += 1; });
      this.addEventListener("close", (e) => { s.live -= 1; s.closes.push(e.code); });
    }
  };
})();
"""


# MARK: Rig

class Proxy:
    """A TCP proxy in front of the server, so a test can cut the page's connections like a network
    would (`drop_websockets`) or refuse new ones for a while (`refusing`)."""

    def __init__(self, upstream_port: int):
        self.upstream = upstream_port
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.refusing = False
        self.refused = 0
        self.lock = threading.Lock()
        self.conns: list[dict] = []
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.refusing:
                self.refused += 1
                client.close()
                continue
            try:
                up = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:
                client.close()
                continue
            conn = {"client": client, "up": up, "ws": False, "dead": False}
            with self.lock:
                self.conns.append(conn)
            threading.Thread(target=self._pump, args=(client, up, conn, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, client, conn, False), daemon=True).start()

    def _pump(self, src, dst, conn, from_client):
        first = from_client
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if first:
                    first = False
                    conn["ws"] = b"upgrade: websocket" in data[:8192].lower()
                dst.sendall(data)
        except OSError:
            pass
        finally:
            self._kill(conn)

    def _kill(self, conn):
        conn["dead"] = True
        for s in (conn["client"], conn["up"]):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def websockets(self):
        with self.lock:
            return [c for c in self.conns if c["ws"] and not c["dead"]]

    def drop_websockets(self) -> int:
        """Cuts every WebSocket connection at once (both directions): the page sees close 1006."""
        live = self.websockets()
        for c in live:
            self._kill(c)
        return len(live)

    def close(self):
        self.closed = True
        self.listener.close()
        with self.lock:
            for c in self.conns:
                self._kill(c)


class Sockets:
    """The page's WebSockets as Playwright sees them (page.on("websocket")), with how many of the
    earlier ones were still open when each was created."""

    def __init__(self, page):
        self.page = page
        self.all: list[dict] = []
        page.on("websocket", self._created)

    def _created(self, ws):
        rec = {"url": ws.url, "closed": False, "overlapping": sum(1 for r in self.all if not r["closed"])}
        self.all.append(rec)
        ws.on("close", lambda _ws: rec.update(closed=True))
        ws.on("socketerror", lambda _err: rec.update(closed=True))

    def count(self):
        self.page.wait_for_timeout(1)  # lets Playwright deliver pending events
        return len(self.all)

    def overlaps(self):
        return [r for r in self.all if r["overlapping"]]


def in_page(page):
    return page.evaluate("window.__sockets")


def wait(predicate, timeout, what, page=None, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        if page is not None:
            page.wait_for_timeout(interval * 1000)
        else:
            time.sleep(interval)


def rt_state(page):
    return page.evaluate("window.rooms.rt && window.rooms.rt.state")


def names_on(page):
    return sorted(page.eval_on_selector_all("#members .member", "els => els.map(e => e.dataset.name)"))


def member_class(page, name):
    return page.eval_on_selector(f'#members .member[data-name="{name}"]', "e => e.className")


def inbound_packets(page, name):
    return page.evaluate("rooms.inbound()").get(name, {}).get("packetsReceived", 0)


def open_rooms(browser, base_url, name):
    context = browser.new_context(viewport={"width": 420, "height": 820})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.add_init_script(COUNT_SOCKETS)
    sockets = Sockets(page)
    page.goto(base_url + "/rooms/")
    page.wait_for_selector("#login-view:not([hidden])")
    page.fill("#name", name)
    page.click("#login")
    page.wait_for_selector("#list-view:not([hidden])")
    return page, sockets


def create_room(page, title):
    page.click("#create")
    page.fill("#room-name", title)
    page.click("#confirm-create")
    page.wait_for_selector("#room-view:not([hidden])")


def enter_room(page, title):
    page.click("#refresh")
    page.click(f'#rooms button:has-text("{title}")')
    page.wait_for_selector("#room-view:not([hidden])")


def close_all(*pages):
    for p in pages:
        p.context.close()


@pytest.fixture(scope="module")
def server():
    s = start_server(["--media-port", "0"], https=False, dev=True)
    yield s
    s.stop()
    s.cleanup()


@pytest.fixture
def proxy(server):
    p = Proxy(server.http_port)
    yield p
    p.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


# MARK: (1) a dropped connection and a server restart: one new socket each, the room live again

def test_drop_and_restart_reconnect_with_exactly_one_new_socket(browser):
    data = tempfile.mkdtemp(prefix="switchboard-web-restart-")
    port = free_port()
    args = ["--media-port", "0"]
    s = start_server(args, https=False, data_dir=data, http_port=port, dev=True)
    proxy = Proxy(port)
    pages = []
    try:
        alice, sockets = open_rooms(browser, proxy.url, "alice-drop")
        bob, _ = open_rooms(browser, s.http_url, "bob-drop")
        pages += [alice, bob]
        create_room(alice, "Drop test")
        enter_room(bob, "Drop test")
        wait(lambda: names_on(alice) == ["alice-drop", "bob-drop"], 5, "both in the room", alice)
        wait(lambda: inbound_packets(bob, "alice-drop") > 0, 10, "bob hears alice", bob)
        session = alice.evaluate("rooms.rt.sessionID")
        assert sockets.count() == 1 and in_page(alice)["live"] == 1

        # A: the TCP connection is cut. Exactly one new WebSocket, and the session resumes. The first retry
        # comes 250-500 ms after the drop, sooner than a loaded machine may poll the page twice, so what the
        # network banner showed meanwhile is recorded in the page.
        alice.evaluate("""() => {
            const net = document.getElementById("net");
            window.netShown = [];
            new MutationObserver(() => { if (!net.hidden) netShown.push(net.textContent); })
                .observe(net, { attributes: true, childList: true, characterData: true, subtree: true });
        }""")
        assert proxy.drop_websockets() == 1
        wait(lambda: any("Reconnecting" in t for t in alice.evaluate("netShown")), 3,
             "alice's page shows that it is reconnecting", alice)
        screenshot(alice, "web-reconnecting")
        wait(lambda: rt_state(alice) == "connected", 10, "alice reconnected", alice)
        alice.wait_for_timeout(2000)  # nothing else may follow
        counts = in_page(alice)
        print("after the drop", sockets.all, counts)
        assert sockets.count() == 2, sockets.all
        assert counts["created"] == 2 and counts["live"] == 1 and counts["maxLive"] == 1, counts
        assert not sockets.overlaps(), sockets.all
        assert len(proxy.websockets()) == 1
        assert alice.evaluate("rooms.rt.sessionID") == session  # resumed, not a new login
        assert alice.is_hidden("#net")

        # The room is live again: bob hears alice, a newcomer and a mute show on alice's page.
        start = inbound_packets(bob, "alice-drop")
        wait(lambda: inbound_packets(bob, "alice-drop") > start + 25, 10, "bob hears alice after the drop", bob)
        carol, _ = open_rooms(browser, s.http_url, "carol-drop")
        pages.append(carol)
        enter_room(carol, "Drop test")
        wait(lambda: names_on(alice) == ["alice-drop", "bob-drop", "carol-drop"], 5, "carol on alice's page", alice)
        bob.click("#mute")
        wait(lambda: "is-muted" in member_class(alice, "bob-drop"), 3, "bob's mute on alice's page", alice)
        screenshot(alice, "web-after-drop")
        carol.click("#leave")
        wait(lambda: names_on(alice) == ["alice-drop", "bob-drop"], 5, "carol gone", alice)
        carol.context.close()
        pages.remove(carol)

        # B: the server restarts (down for 3 s). Attempts fail one at a time, spaced out; then exactly
        # one new socket opens, and as the session died with the server, the page logs in afresh.
        before = in_page(alice)
        s.stop()
        down_at = time.monotonic()
        wait(lambda: rt_state(alice) == "reconnecting", 3, "alice notices the restart", alice)
        alice.wait_for_timeout(3000)
        s = start_server(args, https=False, data_dir=data, http_port=port, dev=True)
        for page in (alice, bob):
            wait(lambda: rt_state(page) == "connected", 15, "reconnected after the restart", page)
        print(f"back {time.monotonic() - down_at:.1f} s after the stop")
        alice.wait_for_timeout(2000)
        counts = in_page(alice)
        times = counts["times"][before["created"]:]
        gaps = [round(b - a) for a, b in zip(times, times[1:])]
        print("after the restart", counts, "gaps ms", gaps)
        assert counts["opened"] == before["opened"] + 1, counts
        assert counts["live"] == 1 and counts["maxLive"] == 1, counts
        assert not sockets.overlaps(), sockets.all
        assert 2 <= len(times) <= 6, times
        assert all(g >= 200 for g in gaps), gaps
        assert alice.evaluate("rooms.rt.sessionID") not in (None, session)

        # The room works again on both pages.
        wait(lambda: names_on(alice) == ["alice-drop", "bob-drop"], 5, "members after the restart", alice)
        wait(lambda: names_on(bob) == ["alice-drop", "bob-drop"], 5, "members on bob's page", bob)
        bob.click("#mute")  # unmute
        wait(lambda: bob.inner_text("#mute") == "Mute", 3, "bob unmuted")
        wait(lambda: "is-muted" not in member_class(alice, "bob-drop"), 3, "bob's unmute on alice's page", alice)
        bob.click("#mute")
        wait(lambda: "is-muted" in member_class(alice, "bob-drop"), 3, "bob's mute on alice's page", alice)
        dave, _ = open_rooms(browser, s.http_url, "dave-drop")
        pages.append(dave)
        enter_room(dave, "Drop test")
        wait(lambda: "dave-drop" in names_on(alice), 5, "dave on alice's page", alice)
        wait(lambda: inbound_packets(dave, "alice-drop") > 25, 15, "dave hears alice", dave)
        screenshot(alice, "web-after-restart")
    finally:
        close_all(*pages)
        proxy.close()
        s.stop()
        s.cleanup()
        shutil.rmtree(data, ignore_errors=True)


# MARK: (2) repeated drops never overlap

def test_repeated_drops_never_overlap_and_back_off(server, proxy, browser):
    alice, sockets = open_rooms(browser, proxy.url, "alice-flap")
    bob, _ = open_rooms(browser, server.http_url, "bob-flap")
    create_room(alice, "Flap test")
    enter_room(bob, "Flap test")
    wait(lambda: names_on(alice) == ["alice-flap", "bob-flap"], 5, "both in the room", alice)

    def created():
        return in_page(alice)["created"]

    def closes():
        return len(in_page(alice)["closes"])

    def drop_and_wait(what):
        n = closes()
        assert proxy.drop_websockets() == 1
        wait(lambda: closes() > n, 5, f"the page notices {what}", alice)
        wait(lambda: rt_state(alice) == "connected", 20, f"back after {what}", alice)

    # connect() and reconnect() while the socket is open open nothing.
    alice.evaluate("Promise.all([rooms.rt.connect(), rooms.rt.connect()]).then(() => rooms.rt.reconnect())")
    alice.wait_for_timeout(1000)
    assert created() == 1

    # An outage: every attempt fails for 4 s; then the server is reachable again.
    proxy.refusing = True
    proxy.drop_websockets()
    outage = created()
    alice.wait_for_timeout(4000)
    outage_times = in_page(alice)["times"][outage:]
    attempts = len(outage_times)
    proxy.refusing = False
    # "Try now" while a reconnect is pending: one attempt at once (never two), the pending one dropped.
    manual = created()
    alice.evaluate("rooms.rt.reconnect(); rooms.rt.reconnect(); rooms.rt.connect().catch(() => {})")
    wait(lambda: rt_state(alice) == "connected", 20, "back after the outage", alice)
    assert created() == manual + 1

    # A plain drop, then a drop the moment the new socket connects (before it is logged in again).
    drop_and_wait("a drop")
    n = created()
    proxy.drop_websockets()
    wait(lambda: created() > n, 10, "a new attempt", alice, interval=0.005)
    wait(lambda: proxy.websockets(), 5, "it reaches the proxy", interval=0.002)
    n = closes()
    assert proxy.drop_websockets() == 1
    wait(lambda: closes() > n, 5, "the page notices the drop during login", alice)
    wait(lambda: rt_state(alice) == "connected", 20, "back after the drop during login", alice)

    # Two more drops, each as soon as the page is back.
    for i in range(2):
        drop_and_wait(f"drop {i + 3}")
    alice.wait_for_timeout(1500)

    counts = in_page(alice)
    times = counts["times"]
    gaps = [round(b - a) for i, (a, b) in enumerate(zip(times, times[1:])) if i + 1 != manual]
    outage_gaps = [round(b - a) for a, b in zip(outage_times, outage_times[1:])]
    print("in page", counts, "gaps ms", gaps, "outage attempts", attempts, outage_gaps, "refused", proxy.refused)
    assert counts["maxLive"] == 1, counts
    assert counts["live"] == 1, counts
    assert not sockets.overlaps(), sockets.all
    assert len(proxy.websockets()) == 1
    # Backoff: 4 s of outage is at most 5 attempts (0.25-0.5, 0.5-1, 1-2, 2-4 s apart), none back to back.
    assert 2 <= attempts <= 5, attempts
    # Each delay is drawn from [b/2, b] for a b that doubles, so consecutive ranges only touch: a gap never
    # shrinks by more than the failed attempt's own time around it (measured: 1,034 ms then 1,018 ms).
    assert all(b >= a - 100 for a, b in zip(outage_gaps, outage_gaps[1:])), outage_gaps
    assert min(gaps) >= 200, gaps

    # Still working.
    bob.click("#mute")
    wait(lambda: "is-muted" in member_class(alice, "bob-flap"), 3, "bob's mute on alice's page", alice)
    screenshot(alice, "web-after-flapping")

    # close() cancels a pending reconnect: nothing is opened afterwards.
    proxy.refusing = True
    proxy.drop_websockets()
    wait(lambda: rt_state(alice) == "reconnecting", 3, "reconnecting", alice)
    n = created()
    alice.evaluate("rooms.rt.close()")
    proxy.refusing = False
    alice.wait_for_timeout(3000)
    assert created() == n
    assert in_page(alice)["live"] == 0
    close_all(alice, bob)


# MARK: close codes 4001 and 4003

def test_close_codes_token_expired_and_login_timeout(server, browser):
    context = browser.new_context(viewport={"width": 420, "height": 820})
    page = context.new_page()
    page.set_default_timeout(15_000)
    routes = []  # per socket: {"route", "server", "sent": [messages from the page], "at": time}
    mode = {"reject": False}

    def handle(route):
        rec = {"route": route, "server": None, "sent": [], "at": time.monotonic()}
        routes.append(rec)
        if mode["reject"]:
            route.close(code=4003, reason="loginTimeout")
            return
        upstream = route.connect_to_server()
        rec["server"] = upstream

        def from_page(message):
            rec["sent"].append(json.loads(message))
            upstream.send(message)
        route.on_message(from_page)

    page.route_web_socket(re.compile(r".*/v1/realtime$"), handle)
    auths = []
    page.on("request", lambda r: auths.append(r) if r.url.endswith("/rooms/api/auth") else None)
    page.goto(server.http_url + "/rooms/")
    page.fill("#name", "erin-codes")
    page.click("#login")
    page.wait_for_selector("#list-view:not([hidden])")
    assert len(routes) == 1 and routes[0]["sent"][0]["type"] == "session:login"
    first_token = routes[0]["sent"][0]["body"]["token"]
    assert len(auths) == 1

    def cut(rec, code, reason):
        rec["route"].close(code=code, reason=reason)
        rec["server"].close()

    # 4001: the session ended with its token; the page gets a new token and logs in with it.
    page.wait_for_timeout(1100)  # a new token differs from the first (its iat)
    cut(routes[-1], 4001, "tokenExpired")
    wait(lambda: len(routes) == 2 and routes[1]["sent"], 10, "a new socket after 4001", page)
    wait(lambda: rt_state(page) == "connected", 10, "logged in again", page)
    first = routes[1]["sent"][0]
    print("after 4001:", first["type"], len(auths), "auth requests")
    assert first["type"] == "session:login", first
    assert len(auths) == 2, "no new token was fetched"
    assert first["body"]["token"] != first_token
    session = page.evaluate("rooms.rt.sessionID")

    # 4003: retryable; the page reconnects and resumes the session.
    cut(routes[-1], 4003, "loginTimeout")
    wait(lambda: len(routes) == 3 and routes[2]["sent"], 10, "a new socket after 4003", page)
    wait(lambda: rt_state(page) == "connected", 10, "resumed", page)
    first = routes[2]["sent"][0]
    assert first["type"] == "session:resume" and first["body"]["session_id"] == session, first
    assert len(auths) == 2

    # 4003 on every new socket for 8 s: attempts back off, never a tight loop.
    mode["reject"] = True
    before = len(routes)
    cut(routes[-1], 4003, "loginTimeout")
    page.wait_for_timeout(8000)
    rejected = routes[before:]
    gaps = [round((b["at"] - a["at"]) * 1000) for a, b in zip(rejected, rejected[1:])]
    print("rejected attempts", len(rejected), "gaps ms", gaps)
    assert 2 <= len(rejected) <= 6, len(rejected)
    assert all(g >= 200 for g in gaps), gaps
    assert gaps == sorted(gaps) or max(gaps) >= 1000, gaps
    mode["reject"] = False
    wait(lambda: rt_state(page) == "connected", 15, "back once the server lets it in", page)
    page.click("#refresh")
    page.wait_for_selector("#list-view:not([hidden])")
    assert page.is_hidden("#error")
    context.close()


# MARK: (3) HTTP errors with non-JSON bodies

NGINX_502 = ("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n"
             "<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n")


def test_non_json_http_errors_show_their_status(server, browser):
    context = browser.new_context(viewport={"width": 420, "height": 820})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(server.http_url + "/rooms/")

    # A plain-text 503 from the app server when logging in.
    page.route("**/rooms/api/auth", lambda r: r.fulfill(status=503, content_type="text/plain",
                                                         body="Service Unavailable: over the connection limit\n"))
    page.fill("#name", "frank-errors")
    page.click("#login")
    page.wait_for_selector("#error:not([hidden])")
    text = page.inner_text("#error")
    print("503:", text)
    assert "503" in text and "over the connection limit" in text, text
    assert "JSON" not in text and "Unexpected token" not in text, text
    screenshot(page, "web-error-503-text")
    page.unroute("**/rooms/api/auth")

    page.click("#login")
    page.wait_for_selector("#list-view:not([hidden])")
    assert page.is_hidden("#error")

    # A proxy's HTML 502 for the room list.
    page.route("**/rooms/api/rooms", lambda r: r.fulfill(status=502, content_type="text/html", body=NGINX_502))
    page.click("#refresh")
    page.wait_for_selector("#error:not([hidden])")
    text = page.inner_text("#error")
    print("502:", text)
    assert "502" in text and "Bad Gateway" in text, text
    assert "<" not in text and "JSON" not in text and "Unexpected token" not in text, text
    screenshot(page, "web-error-502-html")
    page.unroute("**/rooms/api/rooms")
    page.click("#refresh")
    wait(lambda: page.is_hidden("#error"), 5, "the error clears once the list loads", page)
    context.close()


# MARK: (4) accessible names and announcements

WATCH_ANNOUNCER = """
(() => {
  window.__announced = [];
  const el = document.querySelector('[aria-live="polite"]');
  new MutationObserver(() => window.__announced.push(el.textContent.trim()))
    .observe(el, { childList: true, characterData: true, subtree: true });
})()
"""


def unnamed_fields(page):
    """Visible inputs, selects and text areas without an accessible name (label, aria-label(ledby), title)."""
    fields = page.locator("input:visible, select:visible, textarea:visible")
    out = []
    for i in range(fields.count()):
        f = fields.nth(i)
        try:
            from playwright.sync_api import expect
            expect(f).to_have_accessible_name(re.compile(r"\S"), timeout=500)
        except AssertionError:
            out.append(f.evaluate("e => e.outerHTML"))
    return out


def test_rooms_inputs_are_labelled_and_changes_announced(server, browser):
    context = browser.new_context(viewport={"width": 420, "height": 820})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(server.http_url + "/rooms/")
    page.wait_for_selector("#login-view:not([hidden])")
    seen = page.locator("input:visible, select:visible, textarea:visible").count()
    assert unnamed_fields(page) == []
    page.fill("#name", "gina-a11y")
    page.click("#login")
    page.wait_for_selector("#list-view:not([hidden])")
    page.click("#create")
    seen += page.locator("input:visible, select:visible, textarea:visible").count()
    assert unnamed_fields(page) == []
    assert seen >= 2
    screenshot(page, "web-a11y-create")
    page.fill("#room-name", "Accessible room")
    page.click("#confirm-create")
    page.wait_for_selector("#room-view:not([hidden])")
    assert unnamed_fields(page) == []

    region = page.locator('[aria-live="polite"]')
    assert region.count() == 1
    page.evaluate(WATCH_ANNOUNCER)

    hank, _ = open_rooms(browser, server.http_url, "hank-a11y")
    enter_room(hank, "Accessible room")
    wait(lambda: names_on(page) == ["gina-a11y", "hank-a11y"], 5, "both in the room", page)

    def announced():
        return page.evaluate("window.__announced")

    # hank's fake microphone beeps: the server's speaking events are announced.
    wait(lambda: any(re.match(r"hank-a11y is speaking", t) for t in announced()), 10, "hank speaking announced", page)
    hank.click("#mute")
    wait(lambda: any(t.startswith("hank-a11y is muted") for t in announced()), 3, "hank muted announced", page)
    page.click("#mute")
    wait(lambda: any(t.startswith("You are muted") for t in announced()), 3, "own mute announced", page)
    assert page.get_attribute("#mute", "aria-pressed") == "true"
    hank.click("#mute")
    wait(lambda: any(t.startswith("hank-a11y is unmuted") for t in announced()), 3, "hank unmuted announced", page)
    print("announced:", announced())
    # The members' states are in words in the list too.
    assert "muted" in page.locator('#members .member[data-name="gina-a11y"]').inner_text()
    screenshot(page, "web-a11y-room")
    close_all(page, hank)


# MARK: the video playground on the same client

def log_lines(page):
    return page.eval_on_selector_all("#log li b", "els => els.map(e => e.textContent)")


def test_video_playground_reconnects_and_publishes_again(server, proxy, browser):
    """A cut connection: the playground reconnects on exactly one new socket, connects to its session
    again (a new connection id) and publishes again, and the other page sees the new stream."""
    alice = browser.new_context(viewport={"width": 1100, "height": 800}).new_page()
    alice.add_init_script(COUNT_SOCKETS)
    sockets = Sockets(alice)
    alice.goto(proxy.url + "/video")
    alice.click("#create-session")
    wait(lambda: alice.input_value("#session-id"), 10, "a session", alice)
    sid = alice.input_value("#session-id")
    alice.fill("#name", "alice")
    alice.click("#make-token")
    wait(lambda: alice.input_value("#token"), 10, "a token", alice)
    alice.click("#join")
    wait(lambda: alice.evaluate("window.playground.connectionId()"), 10, "alice connected", alice)
    wait(lambda: any(line.startswith("publishing stream") for line in log_lines(alice)), 15, "alice publishes", alice)
    first = alice.evaluate("window.playground.connectionId()")

    bob = browser.new_context(viewport={"width": 1100, "height": 800}).new_page()
    bob.goto(f"{server.http_url}/video?session={sid}")
    bob.fill("#name", "bob")
    bob.click("#make-token")
    wait(lambda: bob.input_value("#token"), 10, "a token", bob)
    bob.uncheck("#auto-publish")
    bob.click("#join")
    wait(lambda: bob.evaluate("window.playground.streamIds().length") == 1, 15, "bob subscribes to alice", bob)
    old_stream = bob.evaluate("window.playground.streamIds()[0]")

    assert proxy.drop_websockets() == 1
    wait(lambda: "reconnected" in log_lines(alice), 15, "alice reconnected", alice)
    wait(lambda: sum(line.startswith("publishing stream") for line in log_lines(alice)) == 2, 15, "alice publishes again", alice)
    alice.wait_for_timeout(1000)
    counts = in_page(alice)
    print("video", counts, log_lines(alice)[:8])
    assert sockets.count() == 2 and counts["created"] == 2 and counts["maxLive"] == 1 and counts["live"] == 1, counts
    assert alice.evaluate("window.playground.connectionId()") not in (None, first)
    assert alice.is_hidden("#alert")
    # bob loses the old stream and gets the new one.
    wait(lambda: bob.evaluate("window.playground.streamIds()") not in ([], [old_stream]), 15, "bob gets the new stream", bob)
    screenshot(alice, "web-video-after-reconnect")
    screenshot(bob, "web-video-bob-after-reconnect")
    close_all(alice, bob)
