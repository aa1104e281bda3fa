/// Where each picture goes on a composed archive's canvas, for the Video API's predefined layouts. Pictures
/// come in the order the caller puts them: focus first (the streams whose layout classes say `focus`, else the
/// first published), then the rest as published.
///
/// ```
///  bestFit                 pip                     verticalPresentation    horizontalPresentation
///  ┌─────┬─────┐           ┌───────────┐           ┌─────────┬──┐          ┌───────────┐
///  │  1  │  2  │           │     1     │           │         │ 2│          │     1     │
///  ├─────┼─────┤           │       ┌──┐│           │    1    │ 3│          │           │
///  │  3  │  4  │           │       │ 2││           │         │ 4│          ├──┬──┬──┬──┤
///  └─────┴─────┘           └───────┴──┘┘           └─────────┴──┘          │2 │3 │4 │  │
///                                                                          └──┴──┴──┴──┘
/// ```
/// bestFit: one picture fills the canvas, more share a grid of equal cells (2 side by side, 3–4 in 2 × 2, 5–6
/// in 3 × 2, 7–9 in 3 × 3, up to 16 in 4 × 4; on a portrait canvas the grid turned: 2 one above the other,
/// 5–6 in 2 × 3), row by row. pip: the first fills it, the second is a quarter-size
/// picture in the bottom-right corner, others are not shown. The presentations: the first takes four fifths of
/// the canvas, the others share the last fifth, a column on the right or a row along the bottom.
public enum CompositeLayout {
    public enum Kind: String, Sendable, CaseIterable {
        case bestFit, pip, verticalPresentation, horizontalPresentation
    }

    public static let maxPictures = 16

    public static func rects(_ kind: Kind, count: Int, width: Int, height: Int) -> [I420Image.Rect] {
        let n = min(max(count, 0), maxPictures)
        guard n > 0 else { return [] }
        let full = I420Image.Rect(x: 0, y: 0, width: width, height: height)
        switch kind {
        case .bestFit:
            return bestFit(count: n, width: width, height: height)
        case .pip:
            guard n > 1 else { return [full] }
            let w = width / 4 & ~1, h = height / 4 & ~1, margin = 8
            return [full, I420Image.Rect(x: width - w - margin, y: height - h - margin, width: w, height: h)]
        case .verticalPresentation:
            guard n > 1 else { return [full] }
            let side = width / 5 & ~1, cell = height / (n - 1) & ~1
            return [I420Image.Rect(x: 0, y: 0, width: width - side, height: height)]
                + (1..<n).map { I420Image.Rect(x: width - side, y: ($0 - 1) * cell, width: side, height: cell) }
        case .horizontalPresentation:
            guard n > 1 else { return [full] }
            let strip = height / 5 & ~1, cell = width / (n - 1) & ~1
            return [I420Image.Rect(x: 0, y: 0, width: width, height: height - strip)]
                + (1..<n).map { I420Image.Rect(x: ($0 - 1) * cell, y: height - strip, width: cell, height: strip) }
        }
    }

    public static func bestFit(count: Int, width: Int, height: Int) -> [I420Image.Rect] {
        let n = min(max(count, 0), maxPictures)
        guard n > 0 else { return [] }
        // Along the longer side: a portrait canvas stacks two pictures, and turns each grid on its side.
        let long = n == 1 ? 1 : n <= 4 ? 2 : n <= 9 ? 3 : 4
        let short = (n + long - 1) / long
        let (columns, rows) = height > width ? (short, long) : (long, short)
        let cellW = width / columns & ~1, cellH = height / rows & ~1
        let top = (height - rows * cellH) / 2 & ~1
        return (0..<n).map { i in
            I420Image.Rect(x: (i % columns) * cellW, y: top + (i / columns) * cellH, width: cellW, height: cellH)
        }
    }
}
