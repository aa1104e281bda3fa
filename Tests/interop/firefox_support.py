"""Debian's Firefox ESR, headless, driven over Marionette (Firefox's own remote protocol, so no
geckodriver is needed): fake camera and microphone, loopback ICE candidates allowed, autoplay on."""
from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from rig import artifact_path, free_port, wait_until

FIREFOX = shutil.which("firefox-esr") or shutil.which("firefox") or "/usr/bin/firefox-esr"

PREFS = {
    # Media without devices or prompts: Firefox's fake sources (a sine tone, a test pattern).
    "media.navigator.streams.fake": True,
    "media.navigator.permission.disabled": True,
    "media.autoplay.default": 0,
    "media.autoplay.blocking_policy": 0,
    "media.autoplay.block-webaudio": False,
    # No sound card here: without a mock audio backend an AudioContext stays suspended, so a page
    # cannot analyse what it receives.
    "media.cubeb.force_mock_context": True,
    # The server's candidate is 127.0.0.1: gather on loopback too, and show real host addresses.
    "media.peerconnection.ice.loopback": True,
    "media.peerconnection.ice.force_interface": "lo",
    "media.peerconnection.ice.obfuscate_host_addresses": False,
    # A quiet profile: no first-run pages, updates, telemetry or network chatter.
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.startup.page": 0,
    "app.update.disabledForTesting": True,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "browser.safebrowsing.update.enabled": False,
    "extensions.update.enabled": False,
    "remote.prefs.recommended": True,
}


class Firefox:
    """One headless Firefox with one Marionette session; scripts run in the page's own scope."""

    def __init__(self, width: int = 420, height: int = 820):
        from marionette_driver.marionette import Marionette

        self.profile = Path(tempfile.mkdtemp(prefix="sb-firefox-"))
        self.port = free_port()
        prefs = dict(PREFS, **{"marionette.port": self.port})
        (self.profile / "user.js").write_text(
            "".join(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in prefs.items()))
        self.proc = subprocess.Popen(
            [FIREFOX, "--headless", "--marionette", "--no-remote", "--profile", str(self.profile),
             "--width", str(width), "--height", str(height)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.client = Marionette(host="127.0.0.1", port=self.port)
        try:
            self.client.start_session(timeout=60)
        except Exception:
            self.close()
            raise

    def goto(self, url: str):
        self.client.navigate(url)

    def js(self, script: str, *args):
        """Evaluates `script` (a function body: use `return`) in the page, with `arguments`."""
        return self.client.execute_script(script, script_args=list(args), sandbox=None)

    def js_async(self, expression: str, *args):
        """Awaits a promise-valued expression in the page and returns its value."""
        body = ("const done = arguments[arguments.length - 1];"
                f"Promise.resolve({expression}).then(done, e => done({{__error: String(e)}}));")
        value = self.client.execute_async_script(body, script_args=list(args), sandbox=None, script_timeout=15_000)
        if isinstance(value, dict) and "__error" in value:
            raise AssertionError("page script failed: " + value["__error"])
        return value

    def wait_for(self, selector: str, timeout: float = 15.0):
        deadline = time.monotonic() + timeout
        while not self.js("return document.querySelector(arguments[0]) !== null", selector):
            if time.monotonic() > deadline:
                raise AssertionError(f"Firefox: {selector} did not appear within {timeout}s")
            time.sleep(0.05)

    def click(self, selector: str):
        if not self.js("const e = document.querySelector(arguments[0]); if (!e) return false; e.click(); return true",
                       selector):
            raise AssertionError(f"Firefox: nothing to click at {selector}")

    def click_text(self, selector: str, text: str) -> bool:
        """Clicks the first `selector` match whose text contains `text`; False if there is none yet."""
        return self.js("const e = Array.from(document.querySelectorAll(arguments[0]))"
                       ".find(e => e.textContent.includes(arguments[1])); if (e) e.click(); return !!e", selector, text)

    def fill(self, selector: str, value: str):
        self.js("const e = document.querySelector(arguments[0]); e.value = arguments[1];"
                "e.dispatchEvent(new Event('input', {bubbles: true}))", selector, value)

    def screenshot(self, name: str) -> Path:
        path = artifact_path(name if name.endswith(".png") else name + ".png")
        path.write_bytes(base64.b64decode(self.client.screenshot(full=True)))
        return path

    def close(self):
        try:
            self.client.delete_session()
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def create_room_in_chromium(browser, url: str, name: str, room: str):
    """A phone-sized Chromium page that logs in to the rooms app at `url` and creates `room`."""
    page = browser.new_context(viewport={"width": 420, "height": 820}).new_page()
    page.set_default_timeout(15_000)
    page.goto(url)
    page.fill("#name", name)
    page.click("#login")
    page.wait_for_selector("#list-view:not([hidden])")
    page.click("#create")
    page.fill("#room-name", room)
    page.click("#confirm-create")
    page.wait_for_selector("#room-view:not([hidden])")
    return page


def drop_in_with_firefox(firefox: Firefox, url: str, name: str, room: str):
    """Logs in to the rooms app in Firefox, refreshes the list and drops in to `room`."""
    firefox.goto(url)
    firefox.wait_for("#login-view:not([hidden])")
    firefox.fill("#name", name)
    firefox.click("#login")
    firefox.wait_for("#list-view:not([hidden])")
    firefox.click("#refresh")
    wait_until(lambda: firefox.click_text("#rooms button", room), 5, what="the room in Firefox's list")
    firefox.wait_for("#room-view:not([hidden])")
