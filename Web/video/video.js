// Video playground: session and token from an app server, then the video:* protocol on the realtime
// gateway (docs/protocol.md, "Video sessions"). In a routed session: one publishing RTCPeerConnection to the
// server, one per subscribed stream. In a relayed one the browsers connect to each other: the publisher makes a
// peer connection per subscriber and the server only passes their offers, answers and candidates (video:relay).
import { Realtime, appServer, rtcConfiguration } from "/web/lib/realtime.js";

const $ = (id) => document.getElementById(id);
// Sessions, tokens, live streams, captions and composed pages come from an app server: the development one
// built into the server (`serve --dev`), or switchboard-video when the page is opened with ?app=http://host:3002.
const params = new URLSearchParams(location.search);
const appApi = appServer("/video/api");

const state = {
  rt: null,
  sessionId: null,
  me: null, // our connection id
  capabilities: {},
  relayed: false, // the session's media goes between its clients
  earlyRelays: [], // subscribers announced (video:relay) before our video:publish reply: served once it comes
  iceServers: [], // STUN and TURN servers for our peer connections, as the server gives them
  connections: new Map(), // connectionId -> connection
  publisher: null, // { pc (routed), peers: subscriberId -> peer (relayed), local, streamId }
  subscribers: new Map(), // streamId -> { pc, tile, stream, media, captions (final ones received) }
  live: null, // { id, hls }: the session's broadcast this page started
  captionsId: null, // the session's live captions this page started
  renderId: null, // the Experience Composer this page started
};

// ---------- UI helpers ----------

function log(text, kind = "") {
  const li = document.createElement("li");
  if (kind) li.className = kind;
  const time = new Date().toLocaleTimeString([], { hour12: false });
  li.innerHTML = `<span>${time}</span> `;
  const b = document.createElement("b");
  b.textContent = text;
  li.appendChild(b);
  $("log").prepend(li);
}

function showError(message) {
  $("alert-text").textContent = message;
  $("alert").hidden = false;
  log(message, "err");
}

function clearError() { $("alert").hidden = true; }

function setStatus(text, live = false) {
  $("status").textContent = text;
  $("status").classList.toggle("live", live);
}

function nameOf(connection) {
  const data = connection?.data || "";
  const m = /(?:^|&)name=([^&]*)/.exec(data);
  if (m) return decodeURIComponent(m[1].replace(/\+/g, " "));
  return data || (connection?.connectionId || "").slice(0, 8);
}

function refreshControls() {
  const joined = !!state.me;
  const publishing = !!state.publisher;
  $("join").disabled = !!state.rt;
  $("leave").disabled = !state.rt;
  $("publish").disabled = !joined;
  $("publish").textContent = publishing ? "Unpublish" : "Publish";
  $("mute-audio").disabled = !publishing;
  $("mute-video").disabled = !publishing;
  $("signal-send").disabled = !joined;
  $("go-live").disabled = !joined || !!state.live || state.relayed;
  $("stop-live").disabled = !state.live;
  $("start-captions").disabled = !joined || !!state.captionsId || state.relayed;
  $("stop-captions").disabled = !state.captionsId;
  $("start-render").disabled = !joined || !!state.renderId || state.relayed;
  $("stop-render").disabled = !state.renderId;
  $("empty").hidden = !!state.rt;
  const select = $("signal-to");
  const current = select.value;
  select.innerHTML = '<option value="">everyone</option>';
  for (const c of state.connections.values()) {
    const o = document.createElement("option");
    o.value = c.connectionId;
    o.textContent = nameOf(c);
    select.appendChild(o);
  }
  select.value = [...select.options].some((o) => o.value === current) ? current : "";
}

function describe(err) {
  switch (err.code) {
    case "notAllowedToPublish": return `Not allowed to publish: ${err.message}`;
    case "notAllowedToSubscribe": return `Not allowed to subscribe: ${err.message}`;
    case "invalidToken": return `Invalid token: ${err.message}`;
    case "tokenExpired": return "The token has expired: make a new one.";
    case "sessionNotFound": return "No such session: create one first.";
    default: return err.message || String(err);
  }
}

// ---------- session and token ----------

async function createSession() {
  clearError();
  try {
    const s = await appApi("POST", "/session", { body: { mediaMode: $("relayed").checked ? "relayed" : "routed" } });
    $("session-id").value = s.sessionId;
    log(`${s.mediaMode} session created ${s.sessionId.slice(0, 24)}…`);
  } catch (e) {
    showError(`Could not create a session: ${e.message}`);
  }
}

async function makeToken() {
  clearError();
  const sessionId = $("session-id").value.trim();
  if (!sessionId) { showError("Create or paste a session id first."); return; }
  try {
    const t = await appApi("POST", "/token", { body: { sessionId, role: $("role").value, data: $("token-data").value } });
    $("token").value = t.token;
    log(`token made (role ${t.role})`);
  } catch (e) {
    showError(`Could not make a token: ${e.message}`);
  }
}

// ---------- live stream (a low-latency HLS broadcast of the session) ----------

async function goLive() {
  clearError();
  try {
    state.live = await appApi("POST", "/broadcast", { body: { sessionId: state.sessionId } });
    refreshControls();
    log("live stream starting");
    $("live-url").href = state.live.hls;
    $("live-tile").hidden = false;
    // A live player starts a few segments behind the newest: wait for them, then play (nothing is loaded before).
    const live = state.live;
    while (state.live === live) {
      const playlist = await fetch(live.hls, { cache: "no-store" }).then((r) => (r.ok ? r.text() : ""));
      if ((playlist.match(/#EXTINF/g) || []).length >= 4) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    if (state.live !== live) return;
    const video = $("live-video");
    video.src = live.hls;
    await video.play();
    log("live stream playing");
  } catch (e) {
    showError(`Could not go live: ${describe(e)}`);
  }
}

async function stopLive() {
  const live = state.live;
  if (!live) return;
  state.live = null;
  refreshControls();
  const video = $("live-video");
  video.pause();
  video.removeAttribute("src");
  video.load();
  $("live-tile").hidden = true;
  try {
    await appApi("POST", "/broadcast/stop", { body: { id: live.id } });
    log("live stream ended");
  } catch (e) {
    showError(`Could not stop the live stream: ${describe(e)}`);
  }
}

// ---------- live captions ----------

async function startCaptions() {
  clearError();
  try {
    state.captionsId = (await appApi("POST", "/captions", { body: { sessionId: state.sessionId } })).captionsId;
    log("live captions started");
  } catch (e) {
    showError(`Could not start captions: ${describe(e)}`);
  }
  refreshControls();
}

async function stopCaptions() {
  const id = state.captionsId;
  if (!id) return;
  state.captionsId = null;
  refreshControls();
  try {
    await appApi("POST", "/captions/stop", { body: { id } });
    log("live captions stopped");
  } catch (e) {
    showError(`Could not stop captions: ${describe(e)}`);
  }
}

// ---------- Experience Composer ----------

async function startRender() {
  clearError();
  const url = $("render-url").value.trim();
  if (!url) { showError("Give the address of a page to compose."); return; }
  try {
    state.renderId = (await appApi("POST", "/render", { body: { sessionId: state.sessionId, url } })).id;
    log("composing the page: its stream comes once it has loaded");
  } catch (e) {
    showError(`Could not compose the page: ${describe(e)}`);
  }
  refreshControls();
}

async function stopRender() {
  const id = state.renderId;
  if (!id) return;
  state.renderId = null;
  refreshControls();
  try {
    await appApi("POST", "/render/stop", { body: { id } });
    log("composed page stopped");
  } catch (e) {
    showError(`Could not stop the composed page: ${describe(e)}`);
  }
}

/** A caption of a stream we watch: shown on its tile, a partial one in italics; a final one fades after 5 s. */
function captionReceived({ streamId, caption, isFinal }) {
  const sub = state.subscribers.get(streamId);
  if (!sub) return;
  const line = sub.tile.querySelector(".captions");
  line.textContent = caption;
  line.classList.toggle("partial", !isFinal);
  line.hidden = false;
  clearTimeout(sub.captionTimer);
  if (isFinal) {
    sub.captions.push(caption);
    sub.captionTimer = setTimeout(() => { line.hidden = true; }, 5000);
  }
}

/** Asks for (or stops) the captions of every stream we watch. */
function showCaptions(on) {
  for (const streamId of state.subscribers.keys()) {
    state.rt?.request("video:subscribeToCaptions", { streamId, subscribe: on }).catch((e) => log(describe(e), "err"));
  }
  if (!on) for (const sub of state.subscribers.values()) sub.tile.querySelector(".captions").hidden = true;
}

// ---------- joining ----------

async function join() {
  clearError();
  const sessionId = $("session-id").value.trim();
  const token = $("token").value.trim();
  if (!sessionId || !token) { showError("A session id and a token are needed to join."); return; }
  const rt = new Realtime();
  state.rt = rt;
  state.token = token;
  refreshControls();
  try {
    setStatus("connecting…");
    wire(rt);
    await rt.connect();
    await connectToSession(rt, sessionId, token);
    if ($("auto-publish").checked) await publish();
  } catch (e) {
    if (rt !== state.rt) return;  // left meanwhile
    showError(describe(e));
    if (!state.me) teardown("failed");
  }
}

/** video:connect on the socket: the first time, and again on a new socket after a reconnect. */
async function connectToSession(rt, sessionId, token) {
  const { body } = await rt.request("video:connect", { sessionId, token });
  if (rt !== state.rt) return;
  state.sessionId = sessionId;
  state.me = body.connectionId;
  state.capabilities = body.capabilities || {};
  state.relayed = body.mediaMode === "relayed";
  state.iceServers = body.iceServers || [];
  state.connections.clear();
  for (const c of body.connections || []) state.connections.set(c.connectionId, c);
  setStatus(`connected · ${body.connectionId.slice(0, 8)}${state.relayed ? " · peer to peer" : ""}`, true);
  log(`connected as ${body.connectionId.slice(0, 8)} (${nameOf(body.connection)}), ${state.connections.size} other connection(s)`);
  refreshControls();
  for (const s of body.streams || []) streamCreated(s);
}

function wire(rt) {
  rt.on("video:connectionCreated", ({ body }) => {
    state.connections.set(body.connection.connectionId, body.connection);
    log(`connectionCreated ${nameOf(body.connection)}`);
    refreshControls();
  });
  rt.on("video:connectionDestroyed", ({ body }) => {
    state.connections.delete(body.connection.connectionId);
    log(`connectionDestroyed ${nameOf(body.connection)} (${body.reason})`);
    refreshControls();
  });
  rt.on("video:streamCreated", ({ body }) => streamCreated(body.stream));
  rt.on("video:streamDestroyed", ({ body }) => streamDestroyed(body.stream, body.reason));
  rt.on("video:signal", ({ body }) => signalReceived(body));
  rt.on("video:captionReceived", ({ body }) => captionReceived(body));
  rt.on("video:relay", ({ body }) => relayReceived(body).catch((e) => log(`relay: ${e.message}`, "err")));
  rt.on("video:streamPropertyChanged", ({ body }) => {
    const sub = state.subscribers.get(body.stream.streamId);
    if (sub) { sub.stream = body.stream; decorate(sub); }
    log(`streamPropertyChanged ${body.stream.name || body.stream.streamId.slice(0, 8)} ${body.property}=${body.newValue}`);
  });
  // Audio fallback: the server warns that our link loses too much of a stream's video, turns the video off (we keep
  // its audio) and on again when the link carries it.
  for (const event of ["videoDisableWarning", "videoDisableWarningLifted", "videoDisabled", "videoEnabled"]) {
    rt.on(`video:${event}`, ({ body }) => audioFallback(body.streamId, event, body.reason));
  }
  rt.on("video:publisherAudioFallback", ({ body }) => publisherAudioFallback(body));
  rt.on("video:unusedLayers", ({ body }) => {
    const p = state.publisher;
    if (!p || body.streamId !== p.streamId) return;
    p.layersUnused = new Set(body.rids);
    applyVideoSending(p).catch((e) => log(`simulcast sizes: ${e.message}`, "err"));
    log(body.rids.length ? `sizes no one watches, paused: ${body.rids.join(", ")}` : "every size is sent");
  });
  rt.on("video:muteForced", () => {
    if (state.publisher) setTrack("audio", false, false);
    log("muteForced: a moderator muted your audio");
  });
  rt.on("video:sessionDisconnected", ({ body }) => {
    showError(`Disconnected from the session (${body.reason}).`);
    teardown(body.reason);
  });
  // The socket dropped: the server ends this connection and its streams with it. The client reconnects
  // by itself (one socket at a time, with backoff); then the page connects to the session again, with
  // a new connection id, and publishes again if it was publishing.
  rt.on("state", ({ body }) => {
    if (rt !== state.rt) return;
    if (body.state === "reconnecting") {
      if (state.me) {
        log("lost the connection to the server; reconnecting", "err");
        state.republish = !!state.publisher;
        dropMedia();
        state.me = null;
        refreshControls();
      }
      setStatus("reconnecting…");
    } else if (body.state === "connecting") {
      setStatus("connecting…");
    }
  });
  rt.on("reconnected", async () => {
    if (rt !== state.rt || !state.sessionId) return;
    try {
      await connectToSession(rt, state.sessionId, state.token);
      log("reconnected");
      if (state.republish) { state.republish = false; await publish(); }
    } catch (e) {
      if (e.code === "disconnected" || rt !== state.rt) return;  // lost again: the next reconnect retries
      showError(describe(e));
      teardown("failed");
    }
  });
}

// ---------- publishing ----------

async function publish() {
  if (state.publisher) return;
  let local;
  try {
    const size = $("simulcast").checked && !state.relayed ? { width: 960, height: 540 } : { width: 640, height: 360 };
    local = await navigator.mediaDevices.getUserMedia({ audio: true, video: size });
  } catch (e) {
    showError(`Camera or microphone unavailable: ${e.message}`);
    return;
  }
  if (state.relayed) { await publishRelayed(local); return; }
  const pc = new RTCPeerConnection(rtcConfiguration(state.iceServers));
  addLocalTracks(pc, local);
  try {
    await pc.setLocalDescription(await pc.createOffer());
    const { body } = await state.rt.request("video:publish", {
      name: $("name").value || "guest", hasAudio: true, hasVideo: true, videoType: "camera", offer: pc.localDescription.sdp,
      publishCaptions: $("publish-captions").checked, audioFallback: { publisher: $("publisher-fallback").checked },
    }, 15000);
    await pc.setRemoteDescription({ type: "answer", sdp: body.answer });
    pc.onconnectionstatechange = () => log(`publisher ${pc.connectionState}`);
    published({ pc, peers: new Map(), local, streamId: body.streamId, qualityEvents: [] }, body);
  } catch (e) {
    pc.close();
    for (const t of local.getTracks()) t.stop();
    showError(describe(e));
  }
  refreshControls();
}

/** A relayed session: the stream is announced at once; each subscriber gets a peer connection of its own (relayReceived). */
async function publishRelayed(local) {
  try {
    const { body } = await state.rt.request("video:publish", {
      name: $("name").value || "guest", hasAudio: true, hasVideo: true, videoType: "camera",
    });
    published({ pc: null, peers: new Map(), local, streamId: body.streamId }, body);
  } catch (e) {
    for (const t of local.getTracks()) t.stop();
    showError(describe(e));
  }
  refreshControls();
}

function published(publisher, body) {
  state.publisher = publisher;
  for (const early of state.earlyRelays.splice(0)) {
    if (early.streamId === publisher.streamId) relayReceived(early).catch((e) => log(`relay: ${e.message}`, "err"));
  }
  if (body.stream?.hasAudio === false) { setTrack("audio", false, false); log("published muted: the session is under mute-all"); }
  $("own-video").srcObject = publisher.local;
  $("own-name").textContent = $("name").value || "you";
  $("own-tile").hidden = false;
  log(`publishing stream ${body.streamId.slice(0, 8)}${state.relayed ? " (peer to peer)" : ""}`);
}

/**
 * Simulcast: the camera in three sizes, lowest first (the SFU ranks layers by their key frames' size), each subscriber
 * getting one (`video:subscriberPreferences`). The browser leaves out the sizes its bandwidth or CPU cannot afford;
 * subscribers of a size that stops get the next one down. VP8 sizes are sent in three temporal layers (a quarter, a
 * half and all of the frames), so a subscriber may also take fewer frames (`preferredFrameRate`).
 */
const SIMULCAST = [
  { rid: "q", scaleResolutionDownBy: 4, maxBitrate: 150_000 },
  { rid: "h", scaleResolutionDownBy: 2, maxBitrate: 500_000 },
  { rid: "f", scaleResolutionDownBy: 1, maxBitrate: 1_500_000 },
];

function addLocalTracks(pc, local) {
  for (const track of local.getTracks()) {
    const init = { direction: "sendonly", streams: [local] };
    if (track.kind === "video" && $("simulcast").checked) {
      const temporal = preferredCodec?.toUpperCase() === "H264" ? {} : { scalabilityMode: "L1T3" };
      init.sendEncodings = SIMULCAST.map((e) => ({ ...e, ...temporal }));
    }
    const tr = pc.addTransceiver(track, init);
    if (track.kind === "video" && preferredCodec) preferCodec(tr, preferredCodec);
  }
}

/** Our camera's video sender (routed sessions: one peer connection to the server). */
function videoSender(p = state.publisher) {
  return p?.pc?.getSenders().find((s) => s.track?.kind === "video");
}

/** Our camera's video sender, when it sends in several sizes. */
function simulcastSender(p = state.publisher) {
  const sender = videoSender(p);
  return sender?.getParameters().encodings?.some((e) => e.rid) ? sender : null;
}

/**
 * Sends the camera, each simulcast size of it unless the page turned it off (`setSimulcastLayer`) or the server said
 * no subscriber takes it now (`video:unusedLayers`): a size nobody watches costs the camera's encoder and uplink for
 * nothing. None while the publisher audio fallback has our video off (`video:publisherAudioFallback`).
 */
async function applyVideoSending(p = state.publisher) {
  const sender = videoSender(p);
  if (!sender) return;
  const parameters = sender.getParameters();
  let changed = false;
  for (const e of parameters.encodings ?? []) {
    const active = !p.fallbackOff && !p.layersOff?.has(e.rid) && !p.layersUnused?.has(e.rid);
    if (e.active !== active) { e.active = active; changed = true; }
  }
  if (changed) await sender.setParameters(parameters);
}

/**
 * Our publisher audio fallback (asked for with "audio only on a weak uplink"): the server warns that our link loses
 * too much of our video, tells us to stop sending it (the audio goes on, the preview stays) and, now and then, to try
 * it again; `sendVideo` is what to do now, `event` what to show (none for a try). Kept for `qualityEvents`.
 */
function publisherAudioFallback({ streamId, event, reason, sendVideo }) {
  const p = state.publisher;
  if (!p || streamId !== p.streamId) return;
  p.fallbackOff = !sendVideo;
  applyVideoSending(p).catch((e) => log(`audio fallback: ${e.message}`, "err"));
  if (!event) { log(sendVideo ? "trying our video again" : "our video is still too much for the link"); return; }
  p.qualityEvents.push({ event, reason, sendVideo, at: performance.now() });
  const tile = $("own-tile");
  if (event === "videoDisableWarning") tile.classList.add("fallback-warning");
  if (event === "videoDisableWarningLifted" || event === "videoDisabled" || event === "videoEnabled") tile.classList.remove("fallback-warning");
  if (event === "videoDisabled") tile.classList.add("fallback");
  if (event === "videoEnabled") tile.classList.remove("fallback");
  log(`publisher ${event}${reason ? ` (${reason})` : ""}`);
}

/** Turns one simulcast size of our camera on or off (as a browser short of bandwidth would), by its rid. */
async function setSimulcastLayer(rid, active) {
  const p = state.publisher;
  if (!simulcastSender(p)?.getParameters().encodings.some((e) => e.rid === rid)) return false;
  p.layersOff ??= new Set();
  if (active) p.layersOff.delete(rid); else p.layersOff.add(rid);
  await applyVideoSending(p);
  return true;
}

/** Each encoding of our camera by rid ("" for a camera sent in one size): whether it is being sent, and its bytes sent so far. */
async function publisherLayers() {
  const sender = videoSender();
  if (!sender) return {};
  const out = {};
  for (const e of sender.getParameters().encodings) out[e.rid ?? ""] = { active: e.active, bytesSent: 0 };
  (await sender.getStats()).forEach((r) => {
    if (r.type === "outbound-rtp" && r.kind === "video" && out[r.rid ?? ""]) out[r.rid ?? ""].bytesSent = r.bytesSent;
  });
  return out;
}

/** The frame rate a subscriber would like (null: every frame); streams sent without temporal layers ignore it. */
async function setPreferredFrameRate(streamId, rate) {
  const sub = state.subscribers.get(streamId);
  if (!sub || state.relayed) return;
  const select = sub.tile.querySelector(".preferred-rate");
  if (select) {
    const value = rate ? String(rate) : "";
    if (![...select.options].some((o) => o.value === value)) select.add(new Option(`${value} fps`, value));
    select.value = value;
  }
  await state.rt.request("video:subscriberPreferences", { streamId, preferredFrameRate: rate });
}

/** The picture size a subscriber would like of a simulcast stream (null: the largest); streams sent in one size ignore it. */
async function setPreferredResolution(streamId, resolution) {
  const sub = state.subscribers.get(streamId);
  if (!sub || state.relayed) return;
  const select = sub.tile.querySelector(".preferred");
  if (select) select.value = resolution ? `${resolution.width}x${resolution.height}` : "";
  await state.rt.request("video:subscriberPreferences", { streamId, preferredResolution: resolution });
}

/**
 * Whether this page takes a subscribed stream's audio, and its video (OpenTok's `subscribeToAudio`/`subscribeToVideo`):
 * the server stops sending what the page does not take. In a relayed session the track is only turned off here.
 */
async function subscribeTo(streamId, kind, on) {
  const sub = state.subscribers.get(streamId);
  if (!sub) return;
  const box = sub.tile.querySelector(`.take-${kind} input`);
  if (box) box.checked = on;
  for (const t of sub.media.getTracks()) if (t.kind === kind) t.enabled = on;
  if (kind === "video") { sub.watching = on; decorate(sub); }
  if (!state.relayed) await state.rt.request("video:subscriberPreferences", { streamId, [kind === "audio" ? "subscribeToAudio" : "subscribeToVideo"]: on });
}

async function unpublish() {
  const p = state.publisher;
  if (!p) return;
  state.publisher = null;
  try { await state.rt.request("video:unpublish", { streamId: p.streamId }); } catch (e) { log(describe(e), "err"); }
  stopPublisher(p);
  log("unpublished");
  refreshControls();
}

function stopPublisher(p) {
  p.pc?.close();
  for (const peer of p.peers.values()) peer.pc.close();
  for (const t of p.local.getTracks()) t.stop();
  $("own-video").srcObject = null;
  $("own-tile").hidden = true;
  $("own-tile").classList.remove("fallback", "fallback-warning");
  $("mute-audio").textContent = "Mute audio";
  $("mute-video").textContent = "Stop video";
}

/** Turns our audio or video on or off: the track stops sending, and others see the property. */
function setTrack(kind, enabled, tell = true) {
  const p = state.publisher;
  if (!p) return;
  for (const t of p.local.getTracks()) if (t.kind === kind) t.enabled = enabled;
  if (kind === "audio") $("mute-audio").textContent = enabled ? "Mute audio" : "Unmute audio";
  else { $("mute-video").textContent = enabled ? "Stop video" : "Start video"; $("own-tile").classList.toggle("video-off", !enabled); }
  if (tell) {
    const prop = kind === "audio" ? "hasAudio" : "hasVideo";
    state.rt.request("video:streamProperty", { streamId: p.streamId, [prop]: enabled }).catch((e) => log(describe(e), "err"));
  }
}

/** `?codec=H264` (or VP8) offers only that codec (plus RTX): the SFU takes VP8 whenever it is offered. */
const preferredCodec = new URLSearchParams(location.search).get("codec");

function preferCodec(transceiver, name) {
  const caps = RTCRtpSender.getCapabilities("video")?.codecs || [];
  const wanted = caps.filter((c) => c.mimeType.toLowerCase() === `video/${name.toLowerCase()}`);
  if (!wanted.length) { log(`codec ${name} not available in this browser`, "err"); return; }
  transceiver.setCodecPreferences([...wanted, ...caps.filter((c) => c.mimeType.toLowerCase() === "video/rtx")]);
}

function trackEnabled(kind) {
  return state.publisher?.local.getTracks().some((t) => t.kind === kind && t.enabled);
}

// ---------- subscribing ----------

function streamCreated(stream) {
  log(`streamCreated ${stream.name || "(unnamed)"} from ${nameOf(state.connections.get(stream.connectionId))}`);
  if (stream.connectionId === state.me || state.subscribers.has(stream.streamId)) return;
  if (state.capabilities.subscribe === false) return;
  subscribe(stream).catch((e) => showError(`Could not subscribe to ${stream.name}: ${describe(e)}`));
}

async function subscribe(stream) {
  const tile = document.createElement("figure");
  tile.className = "tile";
  tile.dataset.streamId = stream.streamId;
  const video = document.createElement("video");
  video.autoplay = true;
  video.playsInline = true;
  const caption = document.createElement("figcaption");
  const preferred = document.createElement("select");
  preferred.className = "preferred";
  preferred.title = "The size you would like of this stream, when its publisher sends several (simulcast)";
  for (const [value, label] of [["", "largest"], ["640x360", "≥ 640×360"], ["320x180", "≥ 320×180"], ["1x1", "smallest"]]) {
    preferred.add(new Option(label, value));
  }
  preferred.hidden = state.relayed;
  preferred.onchange = () => {
    const [width, height] = preferred.value.split("x").map(Number);
    setPreferredResolution(stream.streamId, preferred.value ? { width, height } : null).catch((e) => log(describe(e), "err"));
  };
  const rate = document.createElement("select");
  rate.className = "preferred-rate";
  rate.title = "The frame rate you would like of this stream, when its publisher sends temporal layers";
  for (const [value, label] of [["", "every frame"], ["15", "15 fps"], ["7.5", "7.5 fps"]]) rate.add(new Option(label, value));
  rate.hidden = state.relayed;
  rate.onchange = () => setPreferredFrameRate(stream.streamId, rate.value ? Number(rate.value) : null).catch((e) => log(describe(e), "err"));
  const captions = document.createElement("p");
  captions.className = "captions";
  captions.hidden = true;
  captions.setAttribute("aria-live", "polite");
  // The size decoded now: with simulcast, the publisher's size this page gets.
  const size = document.createElement("span");
  size.className = "size";
  video.onresize = () => { size.textContent = `${video.videoWidth}×${video.videoHeight}`; };
  const takes = document.createElement("span");
  takes.className = "takes";
  for (const kind of ["audio", "video"]) {
    const label = document.createElement("label");
    label.className = `take-${kind}`;
    label.title = `Take this stream's ${kind} (off: the server sends none)`;
    const box = document.createElement("input");
    box.type = "checkbox";
    box.checked = true;
    box.onchange = () => subscribeTo(stream.streamId, kind, box.checked).catch((e) => log(describe(e), "err"));
    label.append(box, ` ${kind}`);
    takes.appendChild(label);
  }
  tile.append(video, captions, caption, preferred, rate, size, takes);
  $("tiles").appendChild(tile);
  const media = new MediaStream();
  video.srcObject = media;
  const sub = { tile, stream, media, captions: [], qualityEvents: [] };
  if (state.relayed) {
    // The publisher offers once the server tells it we subscribed; our answer and candidates go back through the server.
    Object.assign(sub, relayPeer(stream.streamId, state.me));
  } else {
    sub.pc = new RTCPeerConnection(rtcConfiguration(state.iceServers));
  }
  const pc = sub.pc;
  state.subscribers.set(stream.streamId, sub);
  decorate(sub);
  pc.ontrack = (e) => { media.addTrack(e.track); video.play().catch(() => {}); };
  pc.onconnectionstatechange = () => log(`subscriber ${stream.name || stream.streamId.slice(0, 8)} ${pc.connectionState}`);
  const { body } = await state.rt.request("video:subscribe", { streamId: stream.streamId }, 15000);
  if (state.subscribers.get(stream.streamId) !== sub) return;
  if (!body.relayed) {
    await pc.setRemoteDescription({ type: "offer", sdp: body.offer });
    await pc.setLocalDescription(await pc.createAnswer());
    await state.rt.request("video:subscribe:answer", { streamId: stream.streamId, answer: pc.localDescription.sdp });
  }
  log(`subscribed to ${stream.name || stream.streamId.slice(0, 8)}${body.relayed ? " (peer to peer)" : ""}`);
  if ($("show-captions").checked) await state.rt.request("video:subscribeToCaptions", { streamId: stream.streamId, subscribe: true });
}

// ---------- relayed sessions: peer to peer ----------

/**
 * One end of a relayed subscription: a peer connection whose candidates go to the other end through the server,
 * and a queue for the candidates that come before its remote description.
 */
function relayPeer(streamId, subscriberId) {
  const pc = new RTCPeerConnection(rtcConfiguration(state.iceServers));
  const peer = { pc, early: [] };
  pc.onicecandidate = (e) => {
    if (!e.candidate) return;
    state.rt?.request("video:relay", { streamId, subscriberId, candidate: e.candidate.toJSON() }).catch((err) => log(`relay: ${describe(err)}`, "err"));
  };
  return peer;
}

async function sendDescription(streamId, subscriberId, pc) {
  const { type, sdp } = pc.localDescription;
  await state.rt.request("video:relay", { streamId, subscriberId, description: { type, sdp } });
}

async function relayReceived(body) {
  const { streamId, subscriberId, event, description, candidate } = body;
  const p = state.publisher;
  const mine = p && p.streamId === streamId;
  // A subscriber can be announced before our own publish's reply has come: kept until it does.
  if (!mine && event === "subscribe" && state.relayed) { state.earlyRelays.push(body); return; }
  if (!mine && event === "end") {
    state.earlyRelays = state.earlyRelays.filter((r) => r.subscriberId !== subscriberId || r.streamId !== streamId);
    return;
  }
  if (mine && event === "subscribe") {
    p.peers.get(subscriberId)?.pc.close();
    const peer = relayPeer(streamId, subscriberId);
    p.peers.set(subscriberId, peer);
    addLocalTracks(peer.pc, p.local);
    peer.pc.onconnectionstatechange = () => log(`peer ${nameOf(state.connections.get(subscriberId))} ${peer.pc.connectionState}`);
    await peer.pc.setLocalDescription(await peer.pc.createOffer());
    await sendDescription(streamId, subscriberId, peer.pc);
    log(`offered ${nameOf(state.connections.get(subscriberId))} our stream, peer to peer`);
    return;
  }
  if (mine && event === "end") {
    p.peers.get(subscriberId)?.pc.close();
    p.peers.delete(subscriberId);
    return;
  }
  const peer = mine ? p.peers.get(subscriberId) : state.subscribers.get(streamId);
  if (!peer || (!mine && subscriberId !== state.me)) return;
  if (description) {
    await peer.pc.setRemoteDescription(description);
    if (description.type === "offer") {
      await peer.pc.setLocalDescription(await peer.pc.createAnswer());
      await sendDescription(streamId, subscriberId, peer.pc);
    }
    for (const c of peer.early.splice(0)) await peer.pc.addIceCandidate(c);
  } else if (candidate) {
    if (peer.pc.remoteDescription) await peer.pc.addIceCandidate(candidate);
    else peer.early.push(candidate);
  }
}

function decorate(sub) {
  const s = sub.stream;
  const caption = sub.tile.querySelector("figcaption");
  caption.textContent = s.name || nameOf(state.connections.get(s.connectionId));
  if (!s.hasAudio) {
    const tag = document.createElement("span");
    tag.className = "tag muted-flag";
    tag.textContent = " muted";
    caption.appendChild(tag);
  }
  sub.tile.classList.toggle("video-off", !s.hasVideo || sub.watching === false);
  sub.tile.classList.toggle("not-watching", s.hasVideo && sub.watching === false);
  sub.tile.classList.toggle("fallback", !!sub.fallback);
  sub.tile.classList.toggle("fallback-warning", !!sub.fallbackWarning && !sub.fallback);
}

/** A subscribed stream's audio fallback event (`video:videoDisabled` and the others), kept for `qualityEvents`. */
function audioFallback(streamId, event, reason) {
  const sub = state.subscribers.get(streamId);
  if (!sub) return;
  sub.qualityEvents.push({ event, reason, at: performance.now() });
  if (event === "videoDisableWarning") sub.fallbackWarning = true;
  if (event === "videoDisableWarningLifted" || event === "videoEnabled") sub.fallbackWarning = false;
  if (event === "videoDisabled") sub.fallback = true;
  if (event === "videoEnabled") sub.fallback = false;
  decorate(sub);
  log(`${event} ${sub.stream.name || streamId.slice(0, 8)}${reason ? ` (${reason})` : ""}`);
}

function streamDestroyed(stream, reason) {
  log(`streamDestroyed ${stream.name || stream.streamId.slice(0, 8)} (${reason})`);
  const sub = state.subscribers.get(stream.streamId);
  if (sub) {
    state.subscribers.delete(stream.streamId);
    sub.pc.close();
    clearTimeout(sub.captionTimer);
    sub.tile.remove();
  }
  if (state.publisher?.streamId === stream.streamId) {
    const p = state.publisher;
    state.publisher = null;
    stopPublisher(p);
    refreshControls();
  }
}

// ---------- signals ----------

function signalReceived(body) {
  const li = document.createElement("li");
  const from = document.createElement("span");
  from.className = "from";
  from.textContent = body.from ? (body.from === state.me ? "me" : nameOf(state.connections.get(body.from))) : "server";
  const type = document.createElement("span");
  type.className = "type";
  type.textContent = body.type || "";
  li.append(from, type, document.createTextNode(body.data));
  $("signals").prepend(li);
  log(`signal ${body.type || "(no type)"} from ${from.textContent}`);
}

async function sendSignal(ev) {
  ev.preventDefault();
  const data = $("signal-text").value;
  if (!state.me || !data) return;
  const msg = { type: $("signal-type").value, data };
  if ($("signal-to").value) msg.to = $("signal-to").value;
  try {
    await state.rt.request("video:signal", msg);
    $("signal-text").value = "";
  } catch (e) {
    showError(`Signal not sent: ${describe(e)}`);
  }
}

// ---------- leaving ----------

async function leave() {
  await stopLive();
  await stopCaptions();
  await stopRender();
  if (state.rt && state.me) {
    try { await state.rt.request("video:disconnect", {}, 3000); } catch { /* closing anyway */ }
  }
  teardown("clientDisconnected");
  log("left the session");
}

/** Closes every peer connection (they died with the socket or the session). */
function dropMedia() {
  state.earlyRelays = [];
  if (state.publisher) { stopPublisher(state.publisher); state.publisher = null; }
  for (const sub of state.subscribers.values()) { sub.pc.close(); sub.tile.remove(); }
  state.subscribers.clear();
  state.connections.clear();
}

function teardown(reason) {
  dropMedia();
  state.me = null;
  state.republish = false;
  if (state.rt) { const rt = state.rt; state.rt = null; rt.close(); }
  setStatus(reason === "clientDisconnected" ? "left" : "not connected");
  refreshControls();
}

// ---------- stats (shown nowhere; tests and curious users read them from the console) ----------

async function stats() {
  const out = {};
  for (const [streamId, sub] of state.subscribers) {
    const entry = { state: sub.pc.connectionState, name: sub.stream.name, audio: null, video: null };
    const report = await sub.pc.getStats();
    report.forEach((s) => {
      if (s.type !== "inbound-rtp") return;
      entry[s.kind] = {
        packetsReceived: s.packetsReceived, packetsLost: s.packetsLost, nackCount: s.nackCount,
        framesDecoded: s.framesDecoded, frameWidth: s.frameWidth, frameHeight: s.frameHeight, framesPerSecond: s.framesPerSecond,
        codec: report.get(s.codecId)?.mimeType,
        keyFramesDecoded: s.keyFramesDecoded, totalSamplesReceived: s.totalSamplesReceived,
        concealedSamples: s.concealedSamples, audioLevel: s.audioLevel,
      };
    });
    entry.path = selectedPath(report);
    out[streamId] = entry;
  }
  return out;
}

/** The addresses a peer connection's media goes between (its selected ICE candidate pair: the server's, or a peer's), and its own candidates. */
function selectedPath(report) {
  let path = null;
  report.forEach((t) => {
    if (t.type !== "transport" || !t.selectedCandidatePairId) return;
    const pair = report.get(t.selectedCandidatePairId);
    const local = report.get(pair?.localCandidateId);
    const remote = report.get(pair?.remoteCandidateId);
    if (local && remote) {
      path = { local: `${local.address}:${local.port}`, localType: local.candidateType, remote: `${remote.address}:${remote.port}`, remoteType: remote.candidateType };
    }
  });
  if (path) {
    path.localCandidates = [];
    report.forEach((c) => { if (c.type === "local-candidate") path.localCandidates.push(`${c.address}:${c.port}`); });
  }
  return path;
}

/** Where each subscriber of our stream gets it from us, in a relayed session: subscriber connection id -> path. */
async function peerPaths() {
  const out = {};
  for (const [id, peer] of state.publisher?.peers || []) out[id] = { state: peer.pc.connectionState, path: selectedPath(await peer.pc.getStats()) };
  return out;
}

window.playground = {
  state, stats, peerPaths, join, leave, publish, unpublish, setPreferredResolution, setPreferredFrameRate, setSimulcastLayer, publisherLayers,
  subscribeToAudio: (streamId, on) => subscribeTo(streamId, "audio", on),
  subscribeToVideo: (streamId, on) => subscribeTo(streamId, "video", on),
  /** Each subscribed stream's audio fallback events, in order: `{event, reason, at}` (`at`: the page's clock, ms). */
  qualityEvents: () => Object.fromEntries([...state.subscribers].map(([id, sub]) => [id, sub.qualityEvents])),
  /** Our own stream's publisher audio fallback events ({event, reason, sendVideo, at}). */
  publisherQualityEvents: () => state.publisher?.qualityEvents ?? [],
  connectionId: () => state.me,
  streamIds: () => [...state.subscribers.keys()],
  /** The final captions each watched stream got, by stream id. */
  captions: () => Object.fromEntries([...state.subscribers].map(([id, sub]) => [id, sub.captions])),
};

// ---------- wiring ----------

$("create-session").onclick = createSession;
$("make-token").onclick = makeToken;
$("join").onclick = join;
$("leave").onclick = leave;
$("publish").onclick = () => (state.publisher ? unpublish() : publish());
$("mute-audio").onclick = () => setTrack("audio", !trackEnabled("audio"));
$("mute-video").onclick = () => setTrack("video", !trackEnabled("video"));
$("signal-form").onsubmit = sendSignal;
$("go-live").onclick = goLive;
$("stop-live").onclick = stopLive;
$("start-captions").onclick = startCaptions;
$("start-render").onclick = startRender;
$("stop-render").onclick = stopRender;
$("stop-captions").onclick = stopCaptions;
$("show-captions").onchange = () => showCaptions($("show-captions").checked);
$("publish-captions").onchange = () => {
  const p = state.publisher;
  if (p) state.rt.request("video:publishCaptions", { streamId: p.streamId, publishCaptions: $("publish-captions").checked }).catch((e) => log(describe(e), "err"));
};
$("alert-close").onclick = clearError;
$("name").oninput = () => { $("token-data").value = `name=${$("name").value}`; };
if (params.get("session")) $("session-id").value = params.get("session");
if (params.get("token")) $("token").value = params.get("token");
refreshControls();
