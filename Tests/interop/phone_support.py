"""Driving the dialer web app (/phone/) in Chromium: fake-microphone tones, login, call state, getStats and
the frequency the page hears (shared by test_phone_web.py and test_phone_sip_web.py)."""
import math
import struct
import tempfile
import time
import wave
from pathlib import Path

from media_support import CHROMIUM_ARGS
from rig import CHROMIUM

PHONE_SIZE = {"width": 375, "height": 740}


def tone_wav(frequency: float, seconds: float = 5.0, rate: int = 48000) -> Path:
    """A mono 16-bit WAV of a sine at `frequency` (Chromium loops it as the fake microphone)."""
    path = Path(tempfile.mkdtemp(prefix="phone-tone-")) / f"tone-{int(frequency)}.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(struct.pack("<h", int(0.5 * 32767 * math.sin(2 * math.pi * frequency * i / rate)))
                               for i in range(int(seconds * rate))))
    return path


def launch(playwright, *args):
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS + list(args))


def wait(predicate, timeout, what, interval=0.05):
    """Polls `predicate` until it is truthy; `what` (a string, or a function giving one) says what failed."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what() if callable(what) else what}")
        time.sleep(interval)


def open_phone(browser, server, name, prepare=None):
    """The dialer logged in as `name`; `prepare(context)` runs first (e.g. to route the page's WebSocket)."""
    context = browser.new_context(viewport=PHONE_SIZE)
    if prepare:
        prepare(context)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(server.http_url + "/phone/")
    page.wait_for_selector("#login-view:not([hidden])")
    page.fill("#name", name)
    page.click("#login")
    page.wait_for_selector("#dial-view:not([hidden])")
    return page


def call_state(page):
    return page.eval_on_selector("#call-state", "e => [e.dataset.state || '', e.textContent]")


def inbound_bytes(page):
    stats = page.evaluate("phone.stats()")
    return sum(s["bytesReceived"] for s in stats["inbound"].values()), stats["outbound"]["bytesSent"]


# The dominant frequency of what the page receives, measured with an AnalyserNode on the received track.
DOMINANT_FREQUENCY_JS = """async () => {
  // Nothing heard yet while the page is still subscribing (its media starts after the call shows answered).
  const sub = phone.media && phone.media.sub;
  const receivers = sub ? sub.getReceivers().filter((r) => r.track && r.track.kind === 'audio') : [];
  const ctx = new AudioContext();
  await ctx.resume();
  const analyser = ctx.createAnalyser();
  analyser.fftSize = 8192;
  for (const r of receivers) ctx.createMediaStreamSource(new MediaStream([r.track])).connect(analyser);
  await new Promise((r) => setTimeout(r, 1500));
  const bins = new Float32Array(analyser.frequencyBinCount);
  analyser.getFloatFrequencyData(bins);
  let best = 5;
  for (let i = 5; i < bins.length; i++) if (bins[i] > bins[best]) best = i;
  const result = {frequency: best * ctx.sampleRate / analyser.fftSize, level: bins[best]};
  ctx.close();
  return result;
}"""

# Every state #call-state shows, in order, recorded by the page from the moment this runs.
RECORD_STATES_JS = """() => {
  window.seenStates = [];
  const el = document.getElementById('call-state');
  const note = () => { const s = el.dataset.state || ''; if (s && window.seenStates.at(-1) !== s) window.seenStates.push(s); };
  new MutationObserver(note).observe(el, {attributes: true, childList: true, characterData: true, subtree: true});
}"""

# The loudest 100 ms (RMS, dBFS) of what the page receives over `ms` milliseconds: speech spreads over many
# frequency bins, so its level is read in the time domain.
LOUDEST_JS = """async (ms) => {
  // Nothing heard yet while the page is still subscribing (its media starts after the call shows answered).
  const sub = phone.media && phone.media.sub;
  const receivers = sub ? sub.getReceivers().filter((r) => r.track && r.track.kind === 'audio') : [];
  const ctx = new AudioContext();
  await ctx.resume();
  const analyser = ctx.createAnalyser();
  analyser.fftSize = 4096;
  for (const r of receivers) ctx.createMediaStreamSource(new MediaStream([r.track])).connect(analyser);
  const samples = new Float32Array(analyser.fftSize);
  let loudest = -Infinity;
  for (let t = 0; t < ms; t += 100) {
    await new Promise((r) => setTimeout(r, 100));
    analyser.getFloatTimeDomainData(samples);
    let sum = 0;
    for (const s of samples) sum += s * s;
    loudest = Math.max(loudest, 10 * Math.log10(sum / samples.length + 1e-12));
  }
  ctx.close();
  return loudest;
}"""
