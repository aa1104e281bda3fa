// Realtime gateway client: one WebSocket to /v1/realtime, request/reply by `tid`, pushes by type,
// login, heartbeat, and one reconnect loop that resumes the session after a network blip.
// No dependencies.
//
//   const rt = new Realtime(Realtime.defaultURL(), { token: () => fetchNewToken() });
//   rt.on("member:joined", (msg) => ...);
//   rt.on("state", ({ body }) => ...);         // connecting | connected | reconnecting | disconnected
//   rt.on("reconnected", ({ body }) => ...);   // body.resumed: false when the session had to start anew
//   await rt.connect();
//   await rt.login(token);
//   const { body } = await rt.request("rtc:join", { conversation_id });
//
// Reconnecting (docs/protocol.md, "Resume and retention", "Close codes"):
// * There is never more than one socket: a new one is opened only once the previous one has closed,
//   and only by the single reconnect timer (or the first connect()).
// * Delays double from 0.5 s up to 10 s, each one drawn at random between half and all of it, so clients
//   dropped together do not come back together. The delay only starts over after a connection stayed up.
// * After reconnecting, a logged-in client sends `session:resume` with the last event id it saw per
//   conversation; when the session is gone it logs in again. Close code 4001 (tokenExpired) means the
//   session and its token are gone: a new token comes from the `token` option before logging in.
// * close() ends it all: no reconnect is pending or attempted afterwards.

const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 10_000;
const STABLE_MS = 10_000;        // a connection up this long resets the backoff
const HEARTBEAT_MS = 20_000;     // a session:ping this often...
const HEARTBEAT_TIMEOUT_MS = 10_000; // ...unanswered this long means the connection is dead

/** Close codes the server uses (docs/protocol.md, "Close codes"). */
export const CLOSE = { tokenExpired: 4001, pingTimeout: 4002, loginTimeout: 4003 };

export class Realtime {
  /**
   * `options.token`: an async function returning a fresh user token, used when the session cannot be
   * resumed and the last token was refused or has expired. `options.backoff`: {first, max} in ms.
   */
  constructor(url = Realtime.defaultURL(), options = {}) {
    this.url = url;
    this.tokenProvider = options.token || null;
    this.backoff = { first: BACKOFF_FIRST_MS, max: BACKOFF_MAX_MS, ...(options.backoff || {}) };
    this.handlers = new Map();
    this.pending = new Map();
    this.nextID = 1;
    this.sessionID = null;
    this.user = null;
    this.lastEventIDs = {};
    this.token = null;
    this.tokenStale = false;
    this.ws = null;          // the one socket, from creation until its close event
    this.opening = null;     // resolves when this.ws opens
    this.timer = null;       // the pending reconnect, if any
    this.attempt = 0;        // reconnects since the connection was last stable
    this.upSince = 0;
    this.heartbeat = null;
    this.closedByUser = false;
    this.everConnected = false;
    this.state = "disconnected";
    this.lastClose = null;   // {code, reason} of the last socket that closed
    this.waiters = [];       // connect() calls waiting for a socket to open
    this.onOnline = () => { if (this.timer) this.reconnect(); };
    if (typeof window !== "undefined") window.addEventListener("online", this.onOnline);
  }

  static defaultURL() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/v1/realtime`;
  }

  /** Registers a handler for pushed messages of `type` ("*" for every message). */
  on(type, handler) {
    if (!this.handlers.has(type)) this.handlers.set(type, new Set());
    this.handlers.get(type).add(handler);
    return () => this.handlers.get(type).delete(handler);
  }

  emit(type, msg) {
    for (const key of [type, "*"]) for (const h of this.handlers.get(key) || []) {
      try { h(msg); } catch (e) { console.error(e); }
    }
  }

  setState(s, detail = {}) {
    if (this.state === s && !detail.delay) return;
    this.state = s;
    this.emit("state", { type: "state", body: { state: s, ...detail } });
  }

  /**
   * Opens the socket, or waits for the one already connecting or for the pending reconnect (never a
   * second socket). Resolves once a socket is open; while the server cannot be reached it keeps
   * retrying with backoff, and rejects only when close() is called first.
   */
  connect() {
    if (this.closedByUser) return Promise.reject(Object.assign(new Error("closed"), { code: "closed" }));
    if (this.ws?.readyState === WebSocket.OPEN) return Promise.resolve();
    const opened = new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.ws && !this.timer) this.open();
    return opened;
  }

  /** Reconnects now instead of waiting for the pending delay; does nothing while a socket exists. */
  reconnect() {
    if (this.closedByUser || this.ws) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.reopen();
  }

  open() {
    if (this.ws) return this.opening;
    const ws = new WebSocket(this.url);
    this.ws = ws;
    if (!this.everConnected) this.setState("connecting");
    this.opening = new Promise((resolve, reject) => {
      ws.onopen = () => {
        if (ws !== this.ws) return;
        this.startHeartbeat(ws);
        if (!this.everConnected) {
          this.everConnected = true;
          this.upSince = Date.now();
          this.setState("connected");
        }
        for (const w of this.waiters.splice(0)) w.resolve();
        resolve();
      };
      ws.onclose = (ev) => {
        reject(Object.assign(new Error("could not reach the realtime gateway"), { code: "disconnected" }));
        this.socketClosed(ws, ev.code, ev.reason);
      };
    });
    this.opening.catch(() => {});
    ws.onerror = () => {};  // a close event always follows
    ws.onmessage = (ev) => { if (ws === this.ws) this.received(ev.data); };
    return this.opening;
  }

  received(text) {
    let msg;
    try { msg = JSON.parse(text); } catch { return; }
    if (msg.rid !== undefined && this.pending.has(String(msg.rid))) {
      const rid = String(msg.rid);
      const { resolve, reject, timer } = this.pending.get(rid);
      this.pending.delete(rid);
      clearTimeout(timer);
      if (msg.type.endsWith(":error") || msg.type === "error") {
        const err = new Error(msg.body?.detail || msg.body?.code || "request failed");
        err.code = msg.body?.code;
        reject(err);
      } else {
        resolve(msg);
      }
      return;
    }
    if (msg.type === "session:error" && msg.body?.code === "tokenExpired") this.tokenStale = true;
    if (msg.cid && typeof msg.id === "number") {
      this.lastEventIDs[msg.cid] = Math.max(this.lastEventIDs[msg.cid] || 0, msg.id);
    }
    this.emit(msg.type, msg);
  }

  /** Sends a message and waits for its `:success` (resolves) or `:error` (rejects with err.code). */
  request(type, body = {}, timeoutMs = 10000) {
    const tid = String(this.nextID++);
    const ws = this.ws;
    return new Promise((resolve, reject) => {
      if (!ws || ws.readyState !== WebSocket.OPEN) {
        reject(Object.assign(new Error("Not connected to the server."), { code: "disconnected" }));
        return;
      }
      const timer = setTimeout(() => {
        this.pending.delete(tid);
        reject(Object.assign(new Error(`${type} timed out`), { code: "timeout" }));
      }, timeoutMs);
      this.pending.set(tid, { resolve, reject, timer });
      ws.send(JSON.stringify({ type, tid, body }));
    });
  }

  /** Logs in with a user token; the token is kept for logging in again after a lost session. */
  async login(token) {
    this.token = token;
    this.tokenStale = false;
    const reply = await this.request("session:login", { token });
    this.sessionID = reply.body.session_id;
    this.user = reply.body.user;
    this.iceServers = reply.body.ice_servers || [];
    return reply.body;
  }

  /** Ends the session at the server (it cannot be resumed) and closes the socket. */
  async logout() {
    if (this.sessionID && this.ws?.readyState === WebSocket.OPEN) {
      try { await this.request("session:logout", {}, 3000); } catch { /* closing anyway */ }
    }
    this.sessionID = null;
    this.close();
  }

  socketClosed(ws, code, reason) {
    if (ws !== this.ws) return;  // a socket already given up (close(), a dead heartbeat)
    this.ws = null;
    this.opening = null;
    this.lastClose = { code, reason };
    this.stopHeartbeat();
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(Object.assign(new Error("The connection to the server was lost."), { code: "disconnected" }));
    }
    this.pending.clear();
    if (this.closedByUser) { this.setState("disconnected"); return; }
    if (code === CLOSE.tokenExpired) {
      // The session ended with its token: log in anew, with a new token.
      this.sessionID = null;
      this.tokenStale = true;
    }
    if (this.upSince && Date.now() - this.upSince >= STABLE_MS) this.attempt = 0;
    this.upSince = 0;
    this.scheduleReconnect(code);
  }

  /** The one reconnect loop: a single timer, armed only while there is no socket. */
  scheduleReconnect(code) {
    if (this.closedByUser || this.ws || this.timer) return;
    const base = Math.min(this.backoff.max, this.backoff.first * 2 ** this.attempt);
    const delay = Math.round(base / 2 + Math.random() * base / 2);
    this.attempt += 1;
    this.timer = setTimeout(() => { this.timer = null; this.reopen(); }, delay);
    this.setState(this.everConnected ? "reconnecting" : "connecting", { attempt: this.attempt, delay, code });
  }

  async reopen() {
    if (this.closedByUser || this.ws) return;
    const wasConnected = this.everConnected;
    this.open();
    const ws = this.ws;
    try {
      await this.opening;
      if (!wasConnected) return;  // the first connect(): the caller logs in
      const resumed = await this.authenticate();
      if (ws !== this.ws) return;
      this.upSince = Date.now();
      this.setState("connected");
      this.emit("reconnected", { type: "reconnected", body: { resumed } });
    } catch (e) {
      if (this.closedByUser || ws !== this.ws) return;  // the close event schedules the next attempt
      // Connected but not authenticated: report, then close; the close event retries later.
      this.emit("error", { type: "error", body: { code: e.code, detail: e.message } });
      ws.close(4000, "retry");
    }
  }

  /** On a new socket: resume the session, else log in again. Returns whether the session was resumed. */
  async authenticate() {
    if (this.sessionID) {
      try {
        await this.request("session:resume", { session_id: this.sessionID, last_event_ids: this.lastEventIDs });
        return true;
      } catch (e) {
        if (e.code !== "invalidSession") throw e;
        this.sessionID = null;
      }
    }
    if (!this.token && !this.tokenProvider) return false;  // nothing to log in with (video sockets)
    if (this.tokenStale && this.tokenProvider) await this.renewToken();
    try {
      await this.login(this.token);
    } catch (e) {
      if (!this.tokenProvider || !["tokenExpired", "invalidToken"].includes(e.code)) throw e;
      await this.renewToken();
      await this.login(this.token);
    }
    // Events before this login were not pushed: the app reloads what it shows.
    this.lastEventIDs = {};
    return false;
  }

  async renewToken() {
    const token = await this.tokenProvider();
    if (!token) throw Object.assign(new Error("No new token."), { code: "invalidToken" });
    this.token = token;
    this.tokenStale = false;
  }

  startHeartbeat(ws) {
    this.stopHeartbeat();
    this.heartbeat = setInterval(() => {
      if (ws !== this.ws || ws.readyState !== WebSocket.OPEN) return;
      this.request("session:ping", {}, HEARTBEAT_TIMEOUT_MS).catch((e) => {
        if (e.code !== "timeout" || ws !== this.ws) return;
        // No answer: the connection is dead even if the browser has not noticed. Give it up now.
        try { ws.close(4000, "no answer"); } catch {}
        this.socketClosed(ws, 4000, "no answer");
      });
    }, HEARTBEAT_MS);
  }

  stopHeartbeat() {
    clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  /** Closes the socket and cancels any pending reconnect; a closed client stays closed. */
  close() {
    this.closedByUser = true;
    clearTimeout(this.timer);
    this.timer = null;
    this.stopHeartbeat();
    if (typeof window !== "undefined") window.removeEventListener("online", this.onOnline);
    const ws = this.ws;
    this.ws = null;
    this.opening = null;
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(Object.assign(new Error("closed"), { code: "closed" }));
    }
    this.pending.clear();
    for (const w of this.waiters.splice(0)) w.reject(Object.assign(new Error("closed"), { code: "closed" }));
    if (ws && ws.readyState < WebSocket.CLOSING) ws.close(1000, "bye");
    this.setState("disconnected");
  }
}

/** Turns an error response into an Error a person can read: the server's JSON `detail`, or else the
 *  status code with the readable part of whatever came (a proxy's HTML page, plain text). */
function httpError(res, text) {
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  const json = data !== null && typeof data === "object";
  const status = `${res.status}${res.statusText ? ` ${res.statusText}` : ""}`;
  let message = json && typeof data.detail === "string" && data.detail ? data.detail : "";
  if (!message) {
    let detail = json ? (data.title || data.message || data.code || "") : plainText(text, res.headers.get("content-type") || "");
    // "502 Bad Gateway", "Service Unavailable: …": say the status once.
    for (const prefix of [status, res.statusText]) {
      if (prefix && detail.toLowerCase().startsWith(prefix.toLowerCase())) {
        detail = detail.slice(prefix.length).replace(/^[\s:.,;–—-]+/, "");
        break;
      }
    }
    message = detail ? `The server answered ${status}: ${detail}` : `The server answered ${status}.`;
  }
  return Object.assign(new Error(message), { status: res.status, code: json ? data.code : undefined, body: text });
}

/** The readable part of an HTML or text body, shortened. */
function plainText(text, contentType) {
  let out = text;
  if (/html/i.test(contentType) || /^\s*</.test(text)) {
    const doc = new DOMParser().parseFromString(text, "text/html");
    out = doc.title || doc.body?.textContent || "";
  }
  out = out.replace(/\s+/g, " ").trim();
  return out.length > 200 ? `${out.slice(0, 200)}…` : out;
}

/**
 * The page's app server: the one at `?app=URL` in the page's address, else the one a development server
 * (`serve --dev`) has built in at `builtIn`. Returns `call(method, path, options)`, `api` at that server. A server
 * in production has no built-in app server, and a page opened without `?app=` is told so instead of "No route".
 */
export function appServer(builtIn) {
  const chosen = new URLSearchParams(location.search).get("app");
  const base = (chosen || builtIn).replace(/\/$/, "");
  return async (method, path, options) => {
    try {
      return await api(method, base + path, options);
    } catch (e) {
      if (chosen || e.status !== 404 || !e.message.startsWith("No route for ")) throw e;
      throw Object.assign(new Error("This server has no built-in app server (it runs without --dev): "
        + "open this page with ?app= and the address of your app server."), { status: 404, code: "no-app-server" });
    }
  };
}

/** A small fetch wrapper: JSON in and out; errors carry the status and a readable message. */
export async function api(method, path, { token, body } = {}) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw Object.assign(new Error("Could not reach the server. Check the connection and try again."), { code: "network" });
  }
  const text = await res.text();
  if (!res.ok) throw httpError(res, text);
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    const type = res.headers.get("content-type") || "no content type";
    throw Object.assign(new Error(`The server answered ${res.status} with something other than JSON (${type}).`),
      { status: res.status, body: text });
  }
}

/**
 * An RTCPeerConnection's configuration: the server's STUN and TURN servers (`iceServers` from the login or
 * `video:connect` reply: a client whose firewall lets only the TURN server through reaches the SFU, or a peer, through
 * it); `?iceTransportPolicy=relay` on the page's address sends everything through TURN.
 */
export function rtcConfiguration(iceServers) {
  const policy = new URLSearchParams(location.search).get("iceTransportPolicy") === "relay" ? "relay" : "all";
  return { iceServers: iceServers || [], iceTransportPolicy: policy };
}
