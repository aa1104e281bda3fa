/// Where each of `count` pictures goes on a canvas: the Video API's "best fit" arrangement — one picture fills
/// it, more share a grid of equal cells (2 side by side, 3–4 in 2 × 2, 5–6 in 3 × 2, 7–9 in 3 × 3, up to 16 in
/// 4 × 4), filled row by row in the order given.
public enum CompositeLayout {
    public static let maxPictures = 16

    public static func bestFit(count: Int, width: Int, height: Int) -> [I420Image.Rect] {
        let n = min(max(count, 0), maxPictures)
        guard n > 0 else { return [] }
        let columns = n == 1 ? 1 : n == 2 ? 2 : n <= 4 ? 2 : n <= 6 ? 3 : n <= 9 ? 3 : 4
        let rows = (n + columns - 1) / columns
        let cellW = width / columns & ~1, cellH = height / rows & ~1
        let top = (height - rows * cellH) / 2 & ~1
        return (0..<n).map { i in
            I420Image.Rect(x: (i % columns) * cellW, y: top + (i / columns) * cellH, width: cellW, height: cellH)
        }
    }
}
