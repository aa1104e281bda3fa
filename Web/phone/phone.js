// The dialer: log in by name, call a phone number or another user, answer incoming calls.
//
// The app server (login, the answer URL's NCCO) is Switchboard's built-in one at /phone/api, or
// switchboard-voice when the page is opened with ?app=http://host:3001. Calls are placed and
// controlled over the realtime gateway (docs/protocol.md, "Voice calls (call:*)"); their progress
// comes as `leg:status:update` events of the call's conversation, and their audio goes through
// rtc:* in that conversation (Web/lib/conversation-audio.js). No framework, no build step.
import { Realtime, api, appServer } from "/web/lib/realtime.js";
import { NamedLogin, announce, error, guarded } from "/web/lib/app-page.js";
import { ConversationAudio, openMicrophone } from "/web/lib/conversation-audio.js";

const appApi = appServer("/phone/api");
const login = new NamedLogin(appApi, "phone.user");
const $ = (id) => document.getElementById(id);
const KEYS = [["1", ""], ["2", "ABC"], ["3", "DEF"], ["4", "GHI"], ["5", "JKL"], ["6", "MNO"],
              ["7", "PQRS"], ["8", "TUV"], ["9", "WXYZ"], ["*", ""], ["0", "+"], ["#", ""]];
const TERMINAL = new Set(["completed", "busy", "cancelled", "failed", "rejected", "timeout", "unanswered", "disconnected"]);
const RECENT_MAX = 10;

const app = {
  rt: null,
  config: { test_number: null },
  call: null,            // {id, conversationID, direction, peer, state, answeredAt, hangupRequested}
  invite: null,          // the ringing call:invite body
  media: null,           // ConversationAudio of the call's conversation
  mic: null,             // MediaStream while in a call
  muted: false,
  legEvents: new Map(),  // conversation_id -> leg:status:update bodies seen before the call was known
  transfers: new Map(),  // call_id -> a call:transfer told before call:create's reply gave the call's id
  ticker: null,
};
window.phone = app;  // for tests and debugging

// MARK: Screens

function show(view) {
  for (const v of ["login-view", "dial-view", "incoming-view", "call-view"]) $(v).hidden = v !== view;
  $("logout").hidden = view === "login-view";
  $("who").textContent = login.user ? login.user.name : "";
}

function micMessage(message) {
  $("mic-message").textContent = message || "";
  $("mic-message").hidden = !message;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// MARK: Number field

/** What the dialler accepts: a phone number (an optional + and 6 to 15 digits; spaces, dots, dashes
 *  and brackets are dropped), a SIP address (sip:user@host[:port]) or a user name. Returns {to, kind} or {error}. */
export function parseTarget(raw) {
  const value = raw.trim();
  if (!value) return { error: "Enter a phone number, a SIP address or a user name." };
  if (/^sips?:/i.test(value)) {
    if (/^sips?:[^\s<>"@;]+@[A-Za-z0-9.\-]+(:[0-9]{1,5})?(;transport=(udp|tcp|tls))?$/i.test(value)) return { to: value, kind: "sip" };
    return { error: "A SIP address is sip:user@host, with an optional :port." };
  }
  const compact = value.replace(/[\s().-]/g, "");
  if (/^\+?[0-9*#]/.test(compact)) {
    if (/^\+?[0-9]{6,15}$/.test(compact)) return { to: compact, kind: "number" };
    return { error: "A phone number is an optional + followed by 6 to 15 digits." };
  }
  if (value.length <= 100 && /^[\p{L}\p{N}._@-]+$/u.test(value)) return { to: value, kind: "user" };
  return { error: "A user name may only have letters, digits and . _ - @." };
}

function validate() {
  const result = parseTarget($("number").value);
  $("number").setAttribute("aria-invalid", String(!!result.error));
  $("number-error").textContent = result.error || "";
  $("number-error").hidden = !result.error;
  return result;
}

function buildKeypad(container, onKey) {
  for (const [key, letters] of KEYS) {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.key = key;
    b.setAttribute("aria-label", key === "*" ? "star" : key === "#" ? "pound" : key);
    b.innerHTML = `<span aria-hidden="true">${key}</span><small aria-hidden="true">${letters}</small>`;
    b.addEventListener("click", () => onKey(key));
    container.append(b);
  }
}

buildKeypad($("keypad"), (key) => {
  const input = $("number");
  input.value += key;
  if ($("number-error").hidden === false) validate();
});
buildKeypad($("dtmf-keypad"), (key) => sendDigits(key));

$("backspace").addEventListener("click", () => {
  $("number").value = $("number").value.slice(0, -1);
  $("number").focus();
});
$("number").addEventListener("input", () => { if (!$("number-error").hidden) validate(); });

$("dial-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const target = validate();
  if (target.error) { $("number").focus(); return; }
  guarded(() => placeCall(target));
});

$("test-number").addEventListener("click", () => {
  $("number").value = app.config.test_number;
  validate();
  $("call").focus();
});

// MARK: Login

async function logIn() {
  if (app.rt) app.rt.close();
  const rt = new Realtime(Realtime.defaultURL(), { token: login.renew });
  app.rt = rt;
  rt.on("state", (m) => { if (app.rt === rt) setNetwork(m.body); });
  rt.on("reconnected", (m) => { if (app.rt === rt) reconnected(m.body); });
  rt.on("error", (m) => { if (app.rt === rt) error(`Reconnecting: ${m.body.detail}`); });
  rt.on("call:invite", (m) => { if (app.rt === rt) incoming(m.body); });
  rt.on("call:invite:cancel", (m) => { if (app.rt === rt) inviteCancelled(m.body); });
  rt.on("call:hangup", (m) => { if (app.rt === rt && app.call?.id === m.body.call_id) remoteHangup(); });
  rt.on("call:transfer", (m) => { if (app.rt === rt) transferred(m.body); });
  rt.on("leg:status:update", (m) => { if (app.rt === rt) legStatus({ ...m.body, conversation_id: m.body.conversation_id || m.cid }); });
  rt.on("rtc:offer", (m) => {
    if (app.media && m.body.conversation_id === app.media.conversationID) app.media.offer(m.body.offer, m.body.tracks);
  });
  try {
    await login.open(rt);
  } catch (e) {
    if (app.rt === rt) app.rt = null;
    throw e;
  }
  show("dial-view");
  renderRecent();
  loadConfig();
  $("number").focus();
}

/** The app server's settings: the built-in test number, when there is one. */
async function loadConfig() {
  try {
    app.config = (await appApi("GET", "/config")) || { test_number: null };
  } catch {
    app.config = { test_number: null };  // an app server without the route
  }
  const n = app.config.test_number;
  $("test-hint").hidden = !n;
  $("test-number").textContent = n || "";
}

$("logout").addEventListener("click", () => guarded(async () => {
  if (app.call && app.call.state !== "ended") await hangUp();
  const rt = app.rt;
  app.rt = null;
  if (rt) await rt.logout();
  login.forget();
  micMessage("");
  $("net-message").hidden = true;
  show("login-view");
}));

// MARK: Network

function setNetwork({ state, delay }) {
  const net = $("net");
  const was = net.dataset.state;
  net.dataset.state = state;
  net.hidden = state === "connected" || state === "disconnected";
  net.textContent = state === "reconnecting" ? "Reconnecting…" : state === "connecting" ? "Connecting…" : state;
  net.title = delay ? `Next attempt in ${(delay / 1000).toFixed(1)} s` : "";
  if (state === "reconnecting" && was !== "reconnecting") networkLost();
  if (state === "connected" && was === "reconnecting") {
    $("net-message").hidden = true;
    announce("Connected again.");
  }
}

function networkLost() {
  const inCall = app.call && app.call.state !== "ended";
  $("net-message").textContent = inCall
    ? "The connection to the server was lost. Reconnecting… The call's audio stops until the connection is back."
    : "The connection to the server was lost. Reconnecting… Calls cannot be placed or received until it is back.";
  $("net-message").hidden = false;
  announce("Connection lost. Reconnecting…");
}

window.addEventListener("offline", () => { if (app.rt) networkLost(); });

/** The socket is back; the server dropped the call's media with the old one, so it starts again.
 *  A resumed session replayed the events missed meanwhile; after a fresh login (the server
 *  restarted, or the session expired) the call's leg statuses are read back first. */
async function reconnected({ resumed }) {
  error("");
  $("net-message").hidden = true;
  const call = app.call;
  if (!call || call.state === "ended" || !call.conversationID) return;
  if (!resumed) {
    try {
      const page = await api("GET", `/v1/conversations/${call.conversationID}/events?event_type=leg:status:update&page_size=100`,
        { token: login.user.jwt });
      for (const ev of page?._embedded?.events || []) legStatus({ ...ev.body, conversation_id: call.conversationID });
    } catch (e) {
      // No longer a member: the call ended while this page was away (a server restart ends every call).
      if (e.status === 403 || e.status === 404) endCall("The call was cut off while the connection was down.", "disconnected");
      else console.error("could not read the call's status", e);
    }
  }
  if (app.call === call && call.state !== "ended") await guarded(startMedia);
}

// MARK: Calls

function newCall(fields) {
  return { id: null, conversationID: null, state: "calling", answeredAt: null, hangupRequested: false, ...fields };
}

async function placeCall(target) {
  if (app.call && app.call.state !== "ended") return;
  if (!(await getMicrophone())) return;
  app.call = newCall({ direction: "outbound", peer: target.to, kind: target.kind });
  app.muted = false;
  showCall();
  setCallState("calling", `Calling ${target.to}…`);
  const call = app.call;
  let reply;
  try {
    reply = await app.rt.request("call:create", { to: target.to });
  } catch (e) {
    endCall(`The call could not be placed: ${e.message}`, "failed");
    return;
  }
  call.id = reply.body.call_id;
  call.conversationID = reply.body.conversation_id;
  if (call.hangupRequested) {
    // Hung up while the call was being placed.
    await app.rt.request("call:hangup", { call_id: call.id }).catch(() => {});
    return;
  }
  replayLegEvents();
  const early = app.transfers.get(call.id);
  app.transfers.delete(call.id);
  if (early) moveCall(early);
  if (call.state !== "ended") await startMedia();
}

/** The microphone for a call; false (with the reason on the page) when it cannot be had. */
async function getMicrophone() {
  micMessage("");
  if (app.mic) return true;
  try {
    app.mic = await openMicrophone();
    return true;
  } catch (e) {
    micMessage(e.message);  // an alert: read out at once
    return false;
  }
}

function stopMicrophone() {
  if (app.mic) for (const t of app.mic.getTracks()) t.stop();
  app.mic = null;
}

function incoming(invite) {
  if (app.call && app.call.state !== "ended") {
    // Busy on another call: the caller hears it declined, this page lists it as missed.
    app.rt.request("call:reject", { call_id: invite.call_id }).catch(() => {});
    addRecent({ peer: describe(invite.from), direction: "inbound", outcome: "missed" });
    return;
  }
  app.invite = invite;
  micMessage("");
  $("incoming-from").textContent = describe(invite.from);
  show("incoming-view");
  announce(`Incoming call from ${describe(invite.from)}.`);
  $("answer").focus();
}

function describe(from) {
  if (!from) return "unknown";
  return from.user || from.number || from.uri || "unknown";
}

function inviteCancelled({ call_id, reason }) {
  if (!app.invite || app.invite.call_id !== call_id) return;
  const who = describe(app.invite.from);
  app.invite = null;
  const elsewhere = reason === "answeredElsewhere" || reason === "rejectedElsewhere";
  if (!elsewhere) addRecent({ peer: who, direction: "inbound", outcome: "missed" });
  show("dial-view");
  renderRecent();
  announce(reason === "answeredElsewhere" ? `The call from ${who} was answered on another device.`
    : reason === "rejectedElsewhere" ? `The call from ${who} was rejected on another device.`
    : `Missed call from ${who}.`);
}

$("answer").addEventListener("click", () => guarded(async () => {
  const invite = app.invite;
  if (!invite) return;
  if (!(await getMicrophone())) {
    micMessage(`${$("mic-message").textContent} The call is still ringing.`);
    return;
  }
  // The server tells this user's sessions the call was answered (answeredElsewhere), this one
  // included, possibly before the answer's reply: the invite is settled from here on.
  app.invite = null;
  try {
    await app.rt.request("call:answer", { call_id: invite.call_id });
  } catch (e) {
    stopMicrophone();
    show("dial-view");
    throw new Error(`The call could not be answered: ${e.message}`);
  }
  app.call = newCall({ id: invite.call_id, conversationID: invite.conversation_id, direction: "inbound", peer: describe(invite.from) });
  app.muted = false;
  showCall();
  answered();
  replayLegEvents();
  await startMedia();
}));

$("reject").addEventListener("click", () => guarded(async () => {
  const invite = app.invite;
  if (!invite) return;
  app.invite = null;
  show("dial-view");
  addRecent({ peer: describe(invite.from), direction: "inbound", outcome: "rejected" });
  renderRecent();
  announce(`You rejected the call from ${describe(invite.from)}.`);
  await app.rt.request("call:reject", { call_id: invite.call_id });
}));

function showCall() {
  const call = app.call;
  $("call-peer").textContent = call.peer;
  // A SIP address is long: smaller, so it breaks less often (and then anywhere rather than off screen).
  $("call-peer").classList.toggle("long", call.peer.length > 16);
  $("call-direction").textContent = call.direction === "outbound" ? "Outgoing call" : "Incoming call";
  $("timer").textContent = "0:00";
  $("timer").hidden = true;
  $("dtmf").hidden = true;
  $("dtmf-sent").textContent = "";
  $("show-dtmf").setAttribute("aria-expanded", "false");
  $("mute").textContent = "Mute";
  $("mute").setAttribute("aria-pressed", "false");
  for (const id of ["mute", "show-dtmf"]) $(id).disabled = true;
  $("hangup").hidden = false;
  $("hangup").disabled = false;
  $("mute").hidden = false;
  $("show-dtmf").hidden = false;
  $("after-call").hidden = true;
  show("call-view");
  $("hangup").focus();
}

/** The call state in words, in the polite live region; `state` is calling | ringing | answered | ended. */
function setCallState(state, text) {
  if (app.call) app.call.state = state;
  const el = $("call-state");
  el.dataset.state = state;
  el.textContent = text;
}

function answered() {
  const call = app.call;
  if (!call || call.state === "answered" || call.state === "ended") return;
  call.answeredAt = Date.now();
  setCallState("answered", `Answered — talking to ${call.peer}`);
  $("timer").hidden = false;
  for (const id of ["mute", "show-dtmf"]) $(id).disabled = false;
  clearInterval(app.ticker);
  app.ticker = setInterval(tick, 250);
  tick();
}

/** The application's NCCO moved the call into a conversation: its audio meets there from now on, and the
 *  call is under way (nobody else's leg answers it). */
function transferred(body) {
  if (!app.call || app.call.id !== body.call_id) {
    // The NCCO can move a call before call:create's reply has given this page the call's id: kept until then.
    app.transfers.set(body.call_id, body);
    while (app.transfers.size > 20) app.transfers.delete(app.transfers.keys().next().value);
    return;
  }
  if (moveCall(body)) guarded(startMedia);
}

function moveCall(body) {
  const call = app.call;
  if (!call || call.state === "ended") return false;
  call.conversationID = body.conversation_id;
  answered();
  return true;
}

function elapsed(call) {
  return call.answeredAt ? Math.floor((Date.now() - call.answeredAt) / 1000) : 0;
}

function formatDuration(s) {
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

function tick() {
  if (app.call) $("timer").textContent = formatDuration(elapsed(app.call));
}

/** A leg of a conversation changed status. Before call:create answered, events are kept per
 *  conversation and replayed once the call's conversation is known. */
function legStatus(body) {
  const call = app.call;
  if (!call || !call.conversationID || body.conversation_id !== call.conversationID) {
    const list = app.legEvents.get(body.conversation_id) || [];
    list.push(body);
    app.legEvents.set(body.conversation_id, list.slice(-20));
    while (app.legEvents.size > 20) app.legEvents.delete(app.legEvents.keys().next().value);
    return;
  }
  if (call.state === "ended") return;
  const status = body.status;
  if (body.leg_id === call.id) {
    if (TERMINAL.has(status)) endCall(call.state === "answered" ? "Call ended." : "The call ended before it was answered.", status);
    return;
  }
  // The other side's leg.
  if (status === "ringing" && call.state === "calling") setCallState("ringing", `Ringing ${call.peer}…`);
  else if (status === "answered") answered();
  else if (TERMINAL.has(status)) {
    const text = call.state === "answered" && status === "completed" ? `${call.peer} hung up.` : reasonText(status, call.peer);
    endCall(text, call.state === "answered" ? "completed" : status);
    if (call.id) app.rt.request("call:hangup", { call_id: call.id }).catch(() => {});
  }
}

function reasonText(status, peer) {
  switch (status) {
    case "rejected": return `${peer} declined the call.`;
    case "busy": return `${peer} is busy.`;
    case "timeout": case "unanswered": return `No answer from ${peer}.`;
    case "cancelled": return "The call was cancelled.";
    case "failed": return `The call to ${peer} could not be connected.`;
    case "disconnected": return "The call was disconnected.";
    default: return "The call ended.";
  }
}

function replayLegEvents() {
  const call = app.call;
  const kept = app.legEvents.get(call.conversationID) || [];
  app.legEvents.delete(call.conversationID);
  for (const body of kept) legStatus(body);
}

function remoteHangup() {
  if (app.call && app.call.state !== "ended") endCall(`${app.call.peer} hung up.`, "completed");
}

async function hangUp() {
  const call = app.call;
  if (!call || call.state === "ended") return;
  if (!call.id) { call.hangupRequested = true; endCall("You hung up.", "cancelled"); return; }
  endCall("You hung up.", call.state === "answered" ? "completed" : "cancelled");
  try {
    await app.rt.request("call:hangup", { call_id: call.id });
  } catch (e) {
    if (e.code !== "callNotLive") throw e;  // already over at the server
  }
}

$("hangup").addEventListener("click", () => guarded(hangUp));

/** Ends the call on this page: media off, the reason shown, the call listed in the recents. */
function endCall(text, outcome) {
  const call = app.call;
  if (!call || call.state === "ended") return;
  const seconds = elapsed(call);
  clearInterval(app.ticker);
  app.ticker = null;
  if (app.media) app.media.close();
  app.media = null;
  stopMicrophone();
  setCallState("ended", `Call ended: ${text}`);
  for (const id of ["mute", "show-dtmf"]) $(id).disabled = true;
  $("hangup").hidden = true;
  $("mute").hidden = true;
  $("show-dtmf").hidden = true;
  $("dtmf").hidden = true;
  $("after-call").hidden = false;
  addRecent({ peer: call.peer, direction: call.direction, outcome: call.answeredAt ? "completed" : outcome, seconds });
  if (!$("call-view").hidden) $("done").focus();
}

$("done").addEventListener("click", () => {
  app.call = null;
  micMessage("");
  show("dial-view");
  renderRecent();
  $("number").focus();
});

// MARK: Media

/** Publishes the microphone and receives the other side in the call's conversation. The caller's
 *  member may join a moment after call:create answers, so a `notJoined` publish is tried again. */
async function startMedia() {
  const call = app.call;
  if (!call || !call.conversationID || !app.mic) return;
  if (app.media) app.media.close();
  const media = new ConversationAudio(app.rt, call.conversationID, { onFailed: restartMedia });
  app.media = media;
  for (let attempt = 0; ; attempt++) {
    try {
      await media.publish(app.mic, { muted: app.muted });
      break;
    } catch (e) {
      if (e.code !== "notJoined" || attempt >= 40 || app.media !== media) throw e;
      await sleep(250);
    }
  }
  if (app.media !== media) return;
  await media.subscribe();
}

let restartTimer = null;
function restartMedia() {
  clearTimeout(restartTimer);
  restartTimer = setTimeout(() => { if (app.call && app.call.state !== "ended") guarded(startMedia); }, 500);
}

$("mute").addEventListener("click", () => guarded(async () => {
  const call = app.call;
  if (!call || call.state !== "answered") return;
  const muted = !app.muted;
  await app.rt.request("call:mute", { call_id: call.id, muted });
  app.muted = muted;
  const track = app.mic?.getAudioTracks()[0];
  if (track) track.enabled = !muted;
  $("mute").textContent = muted ? "Unmute" : "Mute";
  $("mute").setAttribute("aria-pressed", String(muted));
  announce(muted ? "Microphone muted." : "Microphone on.");
}));

$("show-dtmf").addEventListener("click", () => {
  const open = $("dtmf").hidden;
  $("dtmf").hidden = !open;
  $("show-dtmf").setAttribute("aria-expanded", String(open));
  if (open) $("dtmf-keypad").querySelector("button").focus();
});

async function sendDigits(digits) {
  const call = app.call;
  if (!call || call.state !== "answered") return;
  await guarded(async () => {
    await app.rt.request("call:dtmf", { call_id: call.id, digits });
    $("dtmf-sent").textContent += digits;
  });
}

// Digits typed while the in-call keypad is open are sent as tones.
document.addEventListener("keydown", (ev) => {
  if ($("dtmf").hidden || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (/^[0-9*#]$/.test(ev.key)) { ev.preventDefault(); sendDigits(ev.key); }
});

/** Inbound and outbound audio of the call from getStats (for tests and debugging). */
app.stats = async () => ({
  inbound: app.media ? await app.media.inbound() : {},
  outbound: app.media ? await app.media.outbound() : { packetsSent: 0, bytesSent: 0 },
});

// MARK: Recent calls

function recentKey() { return `phone.recent.${login.user?.name || ""}`; }

function recentCalls() {
  try { return JSON.parse(localStorage.getItem(recentKey()) || "[]"); } catch { return []; }
}

function addRecent(entry) {
  const list = [{ ...entry, at: Date.now() }, ...recentCalls()].slice(0, RECENT_MAX);
  try { localStorage.setItem(recentKey(), JSON.stringify(list)); } catch { /* storage full or off */ }
}

const OUTCOMES = { completed: "", missed: "Missed", rejected: "Declined", cancelled: "Cancelled", failed: "Failed",
                   busy: "Busy", timeout: "No answer", unanswered: "No answer", disconnected: "Dropped" };

function renderRecent() {
  const ul = $("recent");
  ul.replaceChildren();
  const list = recentCalls();
  for (const c of list) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    const arrow = c.direction === "outbound" ? "↗" : "↙";
    const outcome = OUTCOMES[c.outcome] ?? c.outcome;
    const what = document.createElement("span");
    what.className = "what";
    what.textContent = `${arrow} ${c.peer}${outcome ? ` · ${outcome}` : c.seconds ? ` · ${formatDuration(c.seconds)}` : ""}`;
    const when = document.createElement("span");
    when.className = "when";
    when.textContent = new Date(c.at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    li.className = c.outcome === "missed" ? "missed" : "";
    b.setAttribute("aria-label", `${c.direction === "outbound" ? "Call to" : "Call from"} ${c.peer}, ${outcome || "answered"}, `
      + `${when.textContent}. Put the number in the dialler.`);
    b.append(what, when);
    b.addEventListener("click", () => { $("number").value = c.peer; validate(); $("call").focus(); });
    li.append(b);
    ul.append(li);
  }
  $("no-recent").hidden = list.length > 0;
}

// MARK: Start

(async () => {
  if (!await login.start(logIn)) show("login-view");
})();
