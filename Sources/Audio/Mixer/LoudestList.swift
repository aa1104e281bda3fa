/// The indices of the loudest items offered, loudest first, at most `capacity` of them, in storage
/// allocated once: a mixer's pick of its speakers each tick. Ties keep the item offered first, so items
/// of equal loudness keep their places from one tick to the next.
public struct LoudestList {
    private var indices: [Int]
    public private(set) var count = 0

    public init(capacity: Int) { indices = [Int](repeating: -1, count: max(1, capacity)) }

    public var capacity: Int { indices.count }

    public subscript(k: Int) -> Int { indices[k] }

    public mutating func removeAll() { count = 0 }

    /// Offers item `index`; `louder(a, b)` says whether item `a` is strictly louder than item `b`.
    @inline(__always)
    public mutating func offer(_ index: Int, louder: (Int, Int) -> Bool) {
        var k = count
        if k == indices.count {
            guard louder(index, indices[k - 1]) else { return }
            k -= 1
        } else {
            count += 1
        }
        while k > 0 && louder(index, indices[k - 1]) {
            indices[k] = indices[k - 1]
            k -= 1
        }
        indices[k] = index
    }
}
