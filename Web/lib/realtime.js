// Realtime gateway client: one WebSocket to /v1/realtime, request/reply by `cid`, pushes by type,
// login, heartbeat and resume after a network blip. No dependencies.
//
//   const rt = new Realtime();
//   rt.on("member:joined", (msg) => ...);
//   await rt.connect();
//   const { body } = await rt.request("session:login", { token });
export class Realtime {
  constructor(url = Realtime.defaultURL()) {
    this.url = url;
    this.handlers = new Map();
    this.pending = new Map();
    this.nextID = 1;
    this.sessionID = null;
    this.lastEventIDs = {};
    this.token = null;
    this.closedByUser = false;
    this.state = "disconnected";
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

  connect() {
    this.closedByUser = false;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url);
      this.ws = ws;
      ws.onopen = () => { this.setState("connected"); resolve(); };
      ws.onerror = () => reject(new Error("could not reach the realtime gateway"));
      ws.onmessage = (ev) => this.received(ev.data);
      ws.onclose = () => this.closed(ws);
    });
  }

  setState(s) {
    this.state = s;
    this.emit("state", { type: "state", body: { state: s } });
  }

  received(text) {
    let msg;
    try { msg = JSON.parse(text); } catch { return; }
    if (msg.rid !== undefined && this.pending.has(msg.rid)) {
      const { resolve, reject, timer } = this.pending.get(msg.rid);
      this.pending.delete(msg.rid);
      clearTimeout(timer);
      if (msg.type.endsWith(":error")) {
        const err = new Error(msg.body?.detail || msg.body?.code || "request failed");
        err.code = msg.body?.code;
        reject(err);
      } else {
        resolve(msg);
      }
      return;
    }
    if (msg.cid && typeof msg.id === "number") {
      this.lastEventIDs[msg.cid] = Math.max(this.lastEventIDs[msg.cid] || 0, msg.id);
    }
    this.emit(msg.type, msg);
  }

  /** Sends a message and waits for its `:success` (resolves) or `:error` (rejects with err.code). */
  request(type, body = {}, timeoutMs = 10000) {
    const cid = String(this.nextID++);
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        reject(new Error("not connected"));
        return;
      }
      const timer = setTimeout(() => {
        this.pending.delete(cid);
        reject(new Error(`${type} timed out`));
      }, timeoutMs);
      this.pending.set(cid, { resolve, reject, timer });
      this.ws.send(JSON.stringify({ type, cid, body }));
    });
  }

  async login(token) {
    this.token = token;
    const reply = await this.request("session:login", { token });
    this.sessionID = reply.body.session_id;
    this.user = reply.body.user;
    return reply.body;
  }

  closed(ws) {
    if (ws !== this.ws) return;
    for (const { reject, timer } of this.pending.values()) { clearTimeout(timer); reject(new Error("connection lost")); }
    this.pending.clear();
    if (this.closedByUser) { this.setState("disconnected"); return; }
    this.setState("reconnecting");
    this.reconnect(1);
  }

  /** Reconnects with backoff and resumes the session, so no event is missed. */
  async reconnect(attempt) {
    const delay = Math.min(8000, 250 * 2 ** attempt);
    await new Promise((r) => setTimeout(r, delay));
    if (this.closedByUser) return;
    try {
      await this.connect();
      if (this.sessionID) {
        try {
          await this.request("session:resume", { session_id: this.sessionID, last_event_ids: this.lastEventIDs });
        } catch {
          await this.login(this.token);
        }
      }
      this.setState("connected");
      this.emit("reconnected", { type: "reconnected", body: {} });
    } catch {
      this.reconnect(attempt + 1);
    }
  }

  close() {
    this.closedByUser = true;
    if (this.ws) this.ws.close(1000, "bye");
  }
}

/** A small fetch wrapper that throws the server's JSON error detail. */
export async function api(method, path, { token, body } = {}) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const err = new Error(data?.detail || `${res.status} ${res.statusText}`);
    err.status = res.status;
    err.code = data?.code;
    throw err;
  }
  return data;
}
