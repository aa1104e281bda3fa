// Experience Composer's publisher (docs/api-compatibility.md, "Experience Composer"). The server puts this function
// into the page it renders, called with the render's settings, before any of the page's own scripts run. Once the
// page has loaded, it captures its own tab — picture and sound — and publishes it into the video session with the
// render's token, as any client does (docs/protocol.md, "Video sessions"); it tells the server the stream's id, or
// why it could not publish, through the `switchboardRender` binding the server added. Not a module: no imports.
(config) => {
  if (window.top !== window) return; // frames of the page do not publish
  // What this needs, taken before the page's own scripts run, so a page that replaces or wraps them (a WebRTC
  // shim, its own `switchboardRender`) does not change what is published or reported.
  const binding = window.switchboardRender;
  delete window.switchboardRender; // the page's scripts do not report for the render
  const { WebSocket, RTCPeerConnection } = window;
  const devices = navigator.mediaDevices;
  const getDisplayMedia = devices?.getDisplayMedia?.bind(devices);
  const report = (what) => {
    try { binding(JSON.stringify(what)); } catch { /* the server has gone */ }
  };

  /** One request on the realtime gateway: its success body, or its error thrown. */
  function requester(ws) {
    const waiting = new Map();
    let next = 1;
    ws.addEventListener("message", (e) => {
      let msg;
      try { msg = JSON.parse(e.data); } catch { return; }
      const done = waiting.get(msg.rid);
      if (!done) return;
      waiting.delete(msg.rid);
      if (msg.type.endsWith(":error")) done.reject(new Error(`${msg.body?.code}: ${msg.body?.detail}`));
      else done.resolve(msg.body);
    });
    ws.addEventListener("close", () => {
      for (const done of waiting.values()) done.reject(new Error("the server closed the connection"));
      waiting.clear();
    });
    return (type, body) => new Promise((resolve, reject) => {
      const tid = String(next++);
      waiting.set(tid, { resolve, reject });
      ws.send(JSON.stringify({ type, tid, body }));
    });
  }

  async function publish() {
    if (!getDisplayMedia) throw new Error("the page cannot capture itself (not a secure context)");
    const media = await getDisplayMedia({
      video: { width: config.width, height: config.height, frameRate: 30 },
      audio: true,
      preferCurrentTab: true,
      selfBrowserSurface: "include",
      surfaceSwitching: "exclude",
    });
    const ws = new WebSocket(config.realtime);
    await new Promise((resolve, reject) => {
      ws.addEventListener("open", resolve, { once: true });
      ws.addEventListener("error", () => reject(new Error(`cannot reach ${config.realtime}`)), { once: true });
    });
    const request = requester(ws);
    const connected = await request("video:connect", { sessionId: config.sessionId, token: config.token });
    const pc = new RTCPeerConnection({ iceServers: connected.iceServers || [] });
    for (const track of media.getTracks()) pc.addTransceiver(track, { direction: "sendonly", streams: [media] });
    await pc.setLocalDescription(await pc.createOffer());
    const published = await request("video:publish", {
      name: config.name, hasAudio: media.getAudioTracks().length > 0, hasVideo: true, videoType: "camera",
      offer: pc.localDescription.sdp,
    });
    await pc.setRemoteDescription({ type: "answer", sdp: published.answer });
    // Kept reachable for as long as the page lives.
    Object.defineProperty(window, "__switchboardRender", { value: { media, ws, pc } });
    report({ streamId: published.streamId, connectionId: connected.connectionId });
  }

  const start = () => publish().catch((e) => report({ error: String(e?.message || e) }));
  if (document.readyState === "complete") start();
  else window.addEventListener("load", start, { once: true });
}
