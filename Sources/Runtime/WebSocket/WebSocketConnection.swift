import Crypto
import Foundation
import Wire

/// The RFC 6455 engine for one connection, in either role, on its channel's loop.
///
/// Confined to that loop: the `WebSocket` handle reaches it only from the loop thread, which makes the
/// unchecked Sendable conformance sound.
final class WebSocketConnection: @unchecked Sendable {
    enum Role { case server, client }

    let channel: Channel
    let role: Role
    let callbacks: WebSocketCallbacks
    let handle: WebSocket
    let maxQueued: Int
    let metrics: Metrics
    private var parser: WebSocketFrameParser
    private var assembler: WebSocketMessageAssembler
    private var closeSent = false
    private var finished = false
    private var closeTimer: TimerHandle?

    init(channel: Channel, role: Role, upgrade: WebSocketUpgrade, maxMessage: Int, maxQueued: Int, metrics: Metrics) {
        self.channel = channel
        self.role = role
        callbacks = upgrade.callbacks
        self.maxQueued = maxQueued
        self.metrics = metrics
        parser = WebSocketFrameParser(role: role == .server ? .server : .client, maxFrameSize: maxMessage)
        assembler = WebSocketMessageAssembler(maxMessageSize: maxMessage)
        handle = WebSocket(loop: channel.loop, remoteAddress: channel.remote)
    }

    func open() {
        handle.attach(self)
        metrics.openWebSockets.wrappingAdd(1, ordering: .relaxed)
        callbacks.onOpen(handle)
    }

    func receive(_ bytes: UnsafeRawBufferPointer) {
        guard !finished else { return }
        parser.append(bytes)
        while !finished {
            let event: WebSocketMessage?
            do {
                guard let frame = try parser.next() else { return }
                event = try assembler.push(frame)
            } catch {
                fail(code: error.closeCode.rawValue, reason: error.reason)
                return
            }
            guard let event else { continue }
            switch event {
            case .text(let s): callbacks.onText(handle, s)
            case .binary(let b): callbacks.onBinary(handle, b)
            case .ping(let p): send(opcode: .pong, payload: p)
            case .pong(let p): callbacks.onPong(handle, p)
            case .close(let code, let reason):
                if !closeSent {
                    // Echo the peer's code (RFC 6455 section 5.5.1), then the server drops TCP.
                    writeFrame(WebSocketFrame.close(code: code, reason: ""))
                    closeSent = true
                }
                finish(code: code?.rawValue ?? 1005, reason: reason)
                channel.closeWhenFlushed()
                return
            }
        }
    }

    func send(opcode: WebSocketOpcode, payload: [UInt8]) {
        guard !closeSent, !finished, channel.isOpen else { return }
        writeFrame(WebSocketFrame(fin: true, opcode: opcode, payload: payload))
        dropIfBacklogged()
    }

    func send(texts: [String]) {
        guard !texts.isEmpty, !closeSent, !finished, channel.isOpen else { return }
        var bytes: [UInt8] = []
        for t in texts { bytes += WebSocketFrame(fin: true, opcode: .text, payload: Array(t.utf8)).serialized(maskingKey: maskingKey()) }
        channel.write(bytes)
        dropIfBacklogged()
    }

    private func dropIfBacklogged() {
        if channel.pendingOutboundBytes > maxQueued {
            // A consumer that stops reading is dropped rather than buffered forever.
            metrics.increment("switchboard_websocket_slow_consumers_total", help: "WebSockets closed because the peer stopped reading.")
            finish(code: 1008, reason: "send queue full")
            channel.close()
        }
    }

    private func maskingKey() -> UInt32? {
        role == .client ? SecureRandom.bytes(4).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } : nil
    }

    private func writeFrame(_ frame: WebSocketFrame) {
        channel.write(frame.serialized(maskingKey: maskingKey()))
    }

    func close(code: UInt16, reason: String) {
        guard !closeSent, !finished, channel.isOpen else { return }
        closeSent = true
        writeFrame(WebSocketFrame.close(code: WebSocketCloseCode(code), reason: reason))
        // Wait briefly for the peer's close frame, then drop the connection regardless.
        closeTimer = channel.loop.schedule(after: .seconds(5)) { [weak self] in
            guard let self else { return }
            self.finish(code: code, reason: reason)
            self.channel.close()
        }
    }

    private func fail(code: UInt16, reason: String) {
        if !closeSent {
            closeSent = true
            writeFrame(WebSocketFrame.close(code: WebSocketCloseCode(code), reason: reason))
        }
        finish(code: code, reason: reason)
        // The peer may still be sending the frame that broke the rules: drain it rather than reset the
        // connection under the close frame.
        channel.closeLingering()
    }

    func writable() {}

    /// The TCP connection is gone.
    func closed() {
        finish(code: 1006, reason: "connection lost")
    }

    private func finish(code: UInt16, reason: String) {
        guard !finished else { return }
        finished = true
        channel.loop.cancel(closeTimer)
        metrics.openWebSockets.wrappingSubtract(1, ordering: .relaxed)
        callbacks.onClose(handle, code, reason)
        handle.attach(nil)
    }
}
