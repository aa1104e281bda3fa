extension AsyncStream.Continuation {
    /// Runs `remove` (the owner dropping this continuation from its table) when the stream's consumer goes
    /// away, from a task of its own: a cancelled consumer's termination handler runs under the runtime's lock
    /// for the stream, and a `yield` made while holding the owner's lock takes that lock too, so taking the
    /// owner's lock in the handler itself could deadlock against it.
    func removeOnTermination(_ remove: @escaping @Sendable () -> Void) {
        onTermination = { _ in Task { remove() } }
    }
}
