import Media

extension MediaEngine {
    /// The router a room already has, or a new one: the one place where rooms, video sessions and the
    /// media bench get theirs. `existing` reads the owner's record; `keep` stores a new router unless
    /// the owner has one by then, and returns the one the owner keeps. When two first uses race, the
    /// first one stored wins and the other's router is closed.
    ///
    /// The closures run in the caller's isolation (an actor's state, or state under a lock).
    func findOrCreateRouter(existing: () -> RouterID?, keep: (RouterID) -> RouterID,
                            isolation: isolated (any Actor)? = #isolation) async throws(MediaError) -> RouterID {
        if let id = existing() { return id }
        let id = try await createRouter()
        let winner = keep(id)
        if winner != id { _ = try? await closeRouter(id) }
        return winner
    }
}
