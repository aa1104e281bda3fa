// Custom layout stylesheets: any text is refused or parsed, and a parsed one places any streams without
// trapping — every placement names one of the streams, at most once, sized, in drawing order.

/// One fuzz input for the LayoutCSS target.
func fuzzLayoutCSS(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let sheet = LayoutStylesheet(text) else { return 0 }
    let classes = ["focus", "full", "a", "b", "host"]
    let elements = (0..<Int(size % 7)).map { i in
        LayoutStylesheet.Element(classes: Set(classes.prefix(i % (classes.count + 1))), width: 160 + 2 * i, height: 120 + i)
    }
    for (width, height) in [(640, 480), (480, 640), (1920, 1080)] {
        let placed = sheet.place(elements, width: width, height: height)
        precondition(placed.count <= elements.count && Set(placed.map(\.index)).count == placed.count, "each stream placed once at most")
        precondition(placed.allSatisfy { elements.indices.contains($0.index) && $0.width > 0 && $0.height > 0 }, "placements name streams and have a size")
        precondition(zip(placed, placed.dropFirst()).allSatisfy { $0.z <= $1.z }, "drawing order follows z-index")
    }
    return 0
}
