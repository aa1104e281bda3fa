// Drop-in audio rooms: log in by name, pick or create a room, talk.
//
// The app server (login, room list, create) is Switchboard's built-in one at /rooms/api, or
// switchboard-dropin when the page is opened with ?app=http://host:3000. Everything live goes
// over the realtime gateway: conversation events and rtc:* media signaling
// (docs/protocol.md, "Media (rtc:*)"). No framework, no build step.
import { Realtime, api, appServer } from "/web/lib/realtime.js";
import { ConversationAudio } from "/web/lib/conversation-audio.js";
import { NamedLogin, announce, error, guarded } from "/web/lib/app-page.js";

const appApi = appServer("/rooms/api");
const login = new NamedLogin(appApi, "rooms.user");
const $ = (id) => document.getElementById(id);

const app = {
  rt: null,
  room: null,          // {id, title, memberID}
  members: new Map(),  // member_id -> {id, name, muted, speaking}
  media: null,         // ConversationAudio of the room: publishing and subscribing peer connections
  mic: null,           // MediaStream
  muted: false,
  starting: null,
};
window.rooms = app;  // for tests and debugging

// MARK: Screens

function show(view) {
  for (const v of ["login-view", "list-view", "room-view"]) $(v).hidden = v !== view;
  $("logout").hidden = view === "login-view";
  $("who").textContent = login.user ? login.user.name : "";
}

// MARK: Login

async function logIn() {
  if (app.rt) app.rt.close();
  // The token provider: when the session ended with its token (close code 4001) or the server no
  // longer knows it, the client logs in again with a new one from the app server.
  const rt = new Realtime(Realtime.defaultURL(), { token: login.renew });
  app.rt = rt;
  rt.on("state", (m) => { if (app.rt === rt) setNetwork(m.body); });
  rt.on("reconnected", (m) => { if (app.rt === rt) reconnected(m.body); });
  rt.on("error", (m) => { if (app.rt === rt) error(`Reconnecting: ${m.body.detail}`); });
  for (const type of ["member:joined", "member:left", "member:media", "audio:speaking:on", "audio:speaking:off",
                      "audio:mute:on", "audio:mute:off"]) {
    rt.on(type, (msg) => conversationEvent(msg));
  }
  rt.on("rtc:offer", (msg) => {
    if (app.room && msg.body.conversation_id === app.room.id) app.media?.offer(msg.body.offer, msg.body.tracks);
  });
  try {
    await login.open(rt);
  } catch (e) {
    if (app.rt === rt) app.rt = null;
    throw e;
  }
  show("list-view");
  await loadRooms();
}

$("logout").addEventListener("click", () => guarded(async () => {
  if (app.room) await leaveRoom();
  const rt = app.rt;
  app.rt = null;
  if (rt) await rt.logout();
  login.forget();
  show("login-view");
}));

function setNetwork({ state, delay }) {
  const net = $("net");
  const was = net.dataset.state;
  net.dataset.state = state;
  net.hidden = state === "connected" || state === "disconnected";
  net.textContent = state === "reconnecting" ? "Reconnecting…" : state === "connecting" ? "Connecting…" : state;
  net.title = delay ? `Next attempt in ${(delay / 1000).toFixed(1)} s` : "";
  if (state === "reconnecting" && was !== "reconnecting") announce("Connection lost. Reconnecting…");
  if (state === "connected" && was === "reconnecting") announce("Reconnected.");
}

// MARK: Room list

async function loadRooms() {
  const list = await appApi("GET", "/rooms");
  const ul = $("rooms");
  ul.replaceChildren();
  for (const room of list) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.textContent = room.display_name || room.id;
    b.dataset.id = room.id;
    b.addEventListener("click", () => guarded(() => enterRoom(room.id, room.display_name)));
    li.append(b);
    ul.append(li);
  }
  $("no-rooms").hidden = list.length > 0;
}

$("refresh").addEventListener("click", () => guarded(loadRooms));

$("create").addEventListener("click", () => {
  $("modal").hidden = false;
  $("room-name").value = "";
  $("room-name").focus();
});
$("cancel-create").addEventListener("click", () => { $("modal").hidden = true; });
$("modal").addEventListener("click", (ev) => { if (ev.target === $("modal")) $("modal").hidden = true; });
document.addEventListener("keydown", (ev) => { if (ev.key === "Escape") $("modal").hidden = true; });
$("create-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  guarded(async () => {
    const name = $("room-name").value.trim();
    if (!name) return;
    const { id } = await appApi("POST", "/rooms", { body: { display_name: name } });
    $("modal").hidden = true;
    await loadRooms();
    await enterRoom(id, name);
  });
});

// MARK: Room

async function enterRoom(id, title) {
  const joined = await app.rt.request("rtc:join", { conversation_id: id });
  app.room = { id, title: title || id, memberID: joined.body.member_id };
  app.members.clear();
  app.muted = false;
  $("room-title").textContent = app.room.title;
  $("mic-message").hidden = true;
  $("mute").textContent = "Mute";
  $("mute").setAttribute("aria-pressed", "false");
  show("room-view");
  await loadMembers();
  await startMedia();
}

async function loadMembers() {
  const page = await api("GET", `/v1/conversations/${app.room.id}/members?page_size=100`, { token: login.user.jwt });
  for (const m of page._embedded.members) {
    if (m.state !== "JOINED") continue;
    const known = app.members.get(m.id);
    app.members.set(m.id, {
      id: m.id, name: m._embedded.user.name,
      muted: m.media?.audio_settings?.muted || false, speaking: known?.speaking || false,
    });
  }
  render();
}

function conversationEvent(msg) {
  if (!app.room || msg.cid !== app.room.id) return;
  const b = msg.body || {};
  const id = msg.from || b.member_id;
  const m = app.members.get(id);
  const before = m && { muted: m.muted, speaking: m.speaking };
  switch (msg.type) {
    case "member:joined":
      if (!app.members.has(b.member_id) && b.member_id !== app.room.memberID) announce(`${b.user?.name || "Someone"} joined.`);
      app.members.set(b.member_id, { id: b.member_id, name: b.user?.name || "?", muted: false, speaking: false });
      break;
    case "member:left":
      if (app.members.has(b.member_id) && b.member_id !== app.room.memberID) announce(`${app.members.get(b.member_id).name} left.`);
      app.members.delete(b.member_id);
      if (b.member_id === app.room.memberID) {
        // Marked left because our connection was gone too long (reason "disconnected"): the page is
        // still here, so it joins again. Any other reason (removed, the room ended) ends the visit.
        if (b.reason?.text === "disconnected") { rejoin(); return; }
        closeMedia(); app.room = null; show("list-view"); loadRooms(); return;
      }
      break;
    case "member:media":
      if (m) { m.muted = !!b.media?.audio_settings?.muted; if (m.muted) m.speaking = false; }
      // Muted (or unmuted) by the room's app server: the microphone and the button follow.
      if (id === app.room.memberID && b.audio !== false) setOwnMute(!!b.media?.audio_settings?.muted);
      break;
    case "audio:mute:on": if (m) { m.muted = true; m.speaking = false; } break;
    case "audio:mute:off": if (m) m.muted = false; break;
    case "audio:speaking:on": if (m) m.speaking = true; break;
    case "audio:speaking:off": if (m) m.speaking = false; break;
  }
  if (m) announceChange(m, before);
  render();
}

/** Speaking and muted changes, in words (the avatars' rings and marks only show them). */
function announceChange(m, before) {
  const me = m.id === app.room?.memberID;
  const who = me ? "You" : m.name;
  if (m.muted !== before.muted) announce(m.muted ? `${who} ${me ? "are" : "is"} muted.` : `${who} ${me ? "are" : "is"} unmuted.`);
  else if (m.speaking !== before.speaking && !m.muted) {
    announce(m.speaking ? `${who} ${me ? "are" : "is"} speaking.` : `${who} stopped speaking.`);
  }
}

const MIC_OFF = '<svg viewBox="0 0 24 24" width="14" height="14" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2.4" stroke-linecap="round"><path d="M9 5a3 3 0 0 1 6 0v6M15 13.5A3 3 0 0 1 9 11V9"/><path d="M5 11a7 7 0 0 0 11.5 5.3M19 11a7 7 0 0 1-.6 2.8M12 18v3"/><path d="M3 3l18 18"/></svg>';

function colorFor(name) {
  let h = 0;
  for (const c of name) h = (h * 31 + c.codePointAt(0)) % 360;
  return `hsl(${h} 70% 65%)`;
}

function render() {
  const ul = $("members");
  ul.replaceChildren();
  const list = [...app.members.values()].sort((a, b) => a.name.localeCompare(b.name));
  for (const m of list) {
    const li = document.createElement("li");
    li.className = "member";
    li.dataset.memberId = m.id;
    li.dataset.name = m.name;
    li.classList.toggle("me", m.id === app.room?.memberID);
    li.classList.toggle("is-speaking", m.speaking);
    li.classList.toggle("is-muted", m.muted);
    const avatar = document.createElement("div");
    avatar.className = "avatar";
    avatar.setAttribute("aria-hidden", "true");
    avatar.style.background = colorFor(m.name);
    avatar.textContent = m.name.slice(0, 1).toUpperCase();
    const mark = document.createElement("span");
    mark.className = "muted-mark";
    mark.title = "muted";
    mark.innerHTML = MIC_OFF;
    avatar.append(mark);
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = m.name;
    const status = document.createElement("span");
    status.className = "visually-hidden";
    status.textContent = [m.muted && "muted", m.speaking && "speaking"]
      .filter(Boolean).join(", ");
    li.append(avatar, name, status);
    ul.append(li);
  }
  $("room-status").textContent = `${list.length} here`;
}

// MARK: Media

/** Asks for the microphone, publishes it and subscribes to everyone else. */
async function startMedia() {
  if (app.starting) return app.starting;
  app.starting = (async () => {
    try {
      closeMedia(false);
      if (!app.mic) {
        try {
          app.mic = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
        } catch (e) {
          $("mic-message").textContent = e.name === "NotAllowedError"
            ? "Microphone access was refused, so others cannot hear you. Allow the microphone for this site (the icon in the address bar) and rejoin the room. You can still listen."
            : `No microphone could be opened (${e.message || e.name}). You can still listen.`;
          $("mic-message").hidden = false;
        }
      }
      app.media = new ConversationAudio(app.rt, app.room.id, { onFailed: restartMedia });
      if (app.mic) await publish();
      await app.media.subscribe();
    } finally {
      app.starting = null;
    }
  })();
  return app.starting;
}

async function publish() {
  // Publishing posts member:media unmuted: a microphone muted before it is muted again after.
  const muted = app.muted;
  await app.media.publish(app.mic, { muted });
  $("mute").disabled = false;
  if (muted) {
    await app.rt.request("rtc:mute", { conversation_id: app.room.id, muted: true });
    setOwnMute(true);
  }
}

function closeMedia(stopMic = true) {
  if (app.media) app.media.close();
  app.media = null;
  if (stopMic && app.mic) { for (const t of app.mic.getTracks()) t.stop(); app.mic = null; }
  $("mute").disabled = true;
}

let restartTimer = null;
function restartMedia() {
  clearTimeout(restartTimer);
  restartTimer = setTimeout(() => { if (app.room) guarded(startMedia); }, 500);
}

/** The realtime socket came back: the server dropped our media with the old socket. After a fresh
 *  login (the session was gone) the events in between were not replayed, so the lists are reloaded. */
async function reconnected({ resumed }) {
  error("");
  if (!app.room) { if (!resumed) await guarded(loadRooms); return; }
  await rejoin(!resumed);
}

/** Joins the current room again (a no-op at the server when still joined), reloads its members and
 *  publishes and subscribes anew. */
async function rejoin(reload = true) {
  const rt = app.rt;
  const room = app.room;
  try {
    const joined = await rt.request("rtc:join", { conversation_id: room.id });
    if (app.room !== room) return;
    room.memberID = joined.body.member_id;
    if (reload) app.members.clear();
    await loadMembers();
    if (app.starting) await app.starting.catch(() => {});
    await startMedia();
  } catch (e) {
    // Lost again meanwhile: the next reconnect does this again.
    if (e.code === "disconnected" || e.code === "closed" || rt !== app.rt || app.room !== room) return;
    console.error(e);
    error(e.message || String(e));
  }
}

/** Our microphone's state, whether we or the room's app server muted it. */
function setOwnMute(muted) {
  app.muted = muted;
  const track = app.mic?.getAudioTracks()[0];
  if (track) track.enabled = !muted;
  $("mute").textContent = muted ? "Unmute" : "Mute";
  $("mute").setAttribute("aria-pressed", String(muted));
}

$("mute").addEventListener("click", () => guarded(async () => {
  const muted = !app.muted;
  await app.rt.request("rtc:mute", { conversation_id: app.room.id, muted });
  setOwnMute(muted);
  const me = app.members.get(app.room.memberID);
  if (me) {
    const before = { muted: me.muted, speaking: me.speaking };
    me.muted = muted;
    if (muted) me.speaking = false;
    announceChange(me, before);
    render();
  }
}));

async function leaveRoom() {
  const room = app.room;
  app.room = null;
  closeMedia();
  try { await app.rt.request("rtc:unpublish", { conversation_id: room.id }); } catch {}
  await api("PATCH", `/v1/conversations/${room.id}/members/me`, { token: login.user.jwt, body: { state: "left" } });
}

$("leave").addEventListener("click", () => guarded(async () => {
  if (app.room) await leaveRoom();
  show("list-view");
  await loadRooms();
}));

/** Per-member inbound audio from getStats, keyed by name (for tests and debugging). */
app.inbound = async () => (app.media ? app.media.inbound() : {});

// MARK: Start

(async () => {
  if (!await login.start(logIn)) show("login-view");
})();
