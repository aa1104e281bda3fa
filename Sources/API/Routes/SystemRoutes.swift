import Runtime

/// `/health` and `/metrics`.
struct SystemRoutes {
    let metrics: Metrics

    func register(on router: inout Router) {
        router.get("/health", onLoop: true) { _ in
            .json(["status": "ok", "version": SwitchboardServer.version])
        }
        router.get("/metrics", onLoop: true) { [metrics] _ in
            .text(metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
    }
}

/// The web client under `Web/`: `/` is the index, everything else by path.
struct WebRoutes {
    let files: StaticFiles

    init(root: String) { files = StaticFiles(root: root) }

    func register(on router: inout Router) {
        for prefix in ["/", "/web/*", "/rooms", "/rooms/*", "/video", "/video/*", "/phone", "/phone/*", "/dialer", "/dialer/*", "/assets/*"] {
            router.get(prefix) { [files] request in
                var rel = request.path
                if rel.hasPrefix("/web/") { rel = String(rel.dropFirst(5)) } else { rel = String(rel.dropFirst()) }
                if !rel.isEmpty && !rel.contains(".") && !rel.hasSuffix("/") { rel += "/" }
                guard let r = files.response(for: rel, request: request) else { throw APIError.notFound() }
                return r
            }
        }
    }
}

/// `GET /v1/diagnostics/echo`: a WebSocket that echoes every message, so clients and operators can check
/// that WebSockets get through their proxies before debugging the realtime gateway.
struct DiagnosticsRoutes {
    func register(on router: inout Router) {
        router.get("/v1/diagnostics/echo", onLoop: true) { request in
            var callbacks = WebSocketCallbacks()
            callbacks.onText = { ws, text in ws.send(text: text) }
            callbacks.onBinary = { ws, bytes in ws.send(binary: bytes) }
            return try .webSocket(request, callbacks: callbacks)
        }
    }
}
