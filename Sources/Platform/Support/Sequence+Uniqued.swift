extension Sequence where Element: Hashable {
    /// The elements in their order, each only the first time it comes.
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
