// Audio of one conversation over the realtime gateway's rtc:* messages (docs/protocol.md,
// "Media (rtc:*)"): one peer connection publishes the microphone, one receives everyone else.
// The server offers on the receiving connection (rtc:subscribe, then rtc:offer pushes when the set
// of publishers changes); the page hands those pushes to offer(). Shared by the rooms page and
// the dialer.
//
//   const media = new ConversationAudio(rt, conversationID, { onFailed: () => restart() });
//   rt.on("rtc:offer", (m) => { if (m.body.conversation_id === conversationID) media.offer(m.body.offer, m.body.tracks); });
//   await media.publish(micStream);   // optional: listen-only without it
//   await media.subscribe();
//   ...
//   media.close();

import { rtcConfiguration } from "/web/lib/realtime.js";

export class ConversationAudio {
  /**
   * `options.onFailed`: called when either peer connection fails (ICE or DTLS gave up); the page
   * usually starts the media again after a short delay.
   */
  constructor(rt, conversationID, options = {}) {
    this.rt = rt;
    this.conversationID = conversationID;
    this.onFailed = options.onFailed || (() => {});
    this.pub = null;             // publishing RTCPeerConnection
    this.sub = null;             // subscribing RTCPeerConnection
    this.tracks = new Map();     // mid -> {member_id, name, ...} from the server's offers
    this.audio = new Map();      // mid -> <audio>
    this.negotiation = Promise.resolve();
    this.closed = false;
  }

  /** Sends the microphone (`stream`'s first audio track); the server's answer completes it. */
  async publish(stream, { muted = false } = {}) {
    const pc = new RTCPeerConnection(rtcConfiguration(this.rt.iceServers));
    this.pub = pc;
    const track = stream.getAudioTracks()[0];
    track.enabled = !muted;
    pc.addTransceiver(track, { direction: "sendonly", streams: [stream] });
    pc.onconnectionstatechange = () => { if (pc.connectionState === "failed" && this.pub === pc) this.onFailed(); };
    await pc.setLocalDescription(await pc.createOffer());
    const reply = await this.rt.request("rtc:publish", { conversation_id: this.conversationID, offer: pc.localDescription.sdp });
    if (this.pub !== pc) return reply;
    await pc.setRemoteDescription({ type: "answer", sdp: reply.body.answer });
    return reply;
  }

  /** Receives every other member's audio; the offer may come later as an rtc:offer push. */
  async subscribe() {
    const pc = new RTCPeerConnection(rtcConfiguration(this.rt.iceServers));
    this.sub = pc;
    this.tracks.clear();
    this.negotiation = Promise.resolve();
    pc.ontrack = (ev) => this.attach(ev.transceiver);
    pc.onconnectionstatechange = () => { if (pc.connectionState === "failed" && this.sub === pc) this.onFailed(); };
    const reply = await this.rt.request("rtc:subscribe", { conversation_id: this.conversationID });
    if (reply.body.offer) await this.offer(reply.body.offer, reply.body.tracks);
  }

  /** Applies a server offer and answers it; offers are handled one at a time, in order. */
  offer(sdp, tracks) {
    const pc = this.sub;
    this.negotiation = this.negotiation.then(async () => {
      if (!pc || pc !== this.sub) return;
      for (const t of tracks || []) this.tracks.set(t.mid, t);
      await pc.setRemoteDescription({ type: "offer", sdp });
      await pc.setLocalDescription(await pc.createAnswer());
      await this.rt.request("rtc:answer", { conversation_id: this.conversationID, answer: pc.localDescription.sdp });
      const live = new Set((tracks || []).map((t) => t.mid));
      for (const t of pc.getTransceivers()) {
        if (live.has(t.mid)) this.attach(t);
        else this.detach(t.mid);
      }
    }).catch((e) => console.error("renegotiation failed", e));
    return this.negotiation;
  }

  attach(transceiver) {
    const mid = transceiver.mid;
    if (mid == null || this.closed) return;
    let el = this.audio.get(mid);
    if (!el) {
      el = document.createElement("audio");
      el.autoplay = true;
      document.body.append(el);
      this.audio.set(mid, el);
    }
    if (el.srcObject?.getTracks()[0] !== transceiver.receiver.track) {
      el.srcObject = new MediaStream([transceiver.receiver.track]);
      el.play().catch(() => {});
    }
  }

  detach(mid) {
    const el = this.audio.get(mid);
    if (el) { el.srcObject = null; el.remove(); this.audio.delete(mid); }
    this.tracks.delete(mid);
  }

  /** Closes both connections and removes the audio elements (the microphone stays the page's). */
  close() {
    this.closed = true;
    for (const pc of [this.pub, this.sub]) if (pc) pc.close();
    this.pub = null;
    this.sub = null;
    for (const mid of [...this.audio.keys()]) this.detach(mid);
  }

  /** Inbound audio per sender from getStats, keyed by the sender's name (for tests and debugging). */
  async inbound() {
    const out = {};
    if (!this.sub) return out;
    for (const t of this.sub.getTransceivers()) {
      const info = this.tracks.get(t.mid);
      if (!info) continue;
      // A reused m-line may have had earlier streams (SSRCs): add them up.
      const sum = { packetsReceived: 0, bytesReceived: 0, audioLevel: 0, totalAudioEnergy: 0, totalSamplesReceived: 0, concealedSamples: 0, mid: t.mid };
      (await t.receiver.getStats()).forEach((s) => {
        if (s.type !== "inbound-rtp") return;
        sum.packetsReceived += s.packetsReceived || 0;
        sum.bytesReceived += s.bytesReceived || 0;
        sum.totalSamplesReceived += s.totalSamplesReceived || 0;
        sum.concealedSamples += s.concealedSamples || 0;
        sum.totalAudioEnergy += s.totalAudioEnergy || 0;
        sum.audioLevel = Math.max(sum.audioLevel, s.audioLevel || 0);
      });
      out[info.name] = sum;
    }
    return out;
  }

  /** Bytes and packets the microphone sent so far. */
  async outbound() {
    const out = { packetsSent: 0, bytesSent: 0 };
    if (!this.pub) return out;
    (await this.pub.getStats()).forEach((s) => {
      if (s.type !== "outbound-rtp") return;
      out.packetsSent += s.packetsSent || 0;
      out.bytesSent += s.bytesSent || 0;
    });
    return out;
  }
}

/** The microphone, or an Error whose message says in words why not (refused, missing, busy). */
export async function openMicrophone() {
  try {
    return await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
  } catch (e) {
    const refused = e.name === "NotAllowedError" || e.name === "SecurityError";
    const message = refused
      ? "Microphone access was refused. Allow the microphone for this site (the icon in the address bar), then try again."
      : e.name === "NotFoundError" ? "No microphone was found. Connect one and try again."
      : `The microphone could not be opened (${e.message || e.name}).`;
    throw Object.assign(new Error(message), { code: refused ? "micRefused" : "micUnavailable", cause: e });
  }
}
