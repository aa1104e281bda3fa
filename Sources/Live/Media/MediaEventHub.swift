import Media
import Synchronization

/// Fans the media engine's events (transport state, active speaker) out to every interested service.
/// Handlers run on worker threads: they must only hand the event on.
public final class MediaEventHub: Sendable {
    private let handlers = Mutex<[@Sendable (MediaEvent) -> Void]>([])

    public init(engine: MediaEngine) {
        engine.onEvent { [weak self] event in self?.publish(event) }
    }

    public func subscribe(_ handler: @escaping @Sendable (MediaEvent) -> Void) {
        handlers.withLock { $0.append(handler) }
    }

    func publish(_ event: MediaEvent) {
        for h in handlers.withLock({ $0 }) { h(event) }
    }
}
