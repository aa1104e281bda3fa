/// A picture in I420 (YUV 4:2:0, planar): a full-resolution luma plane and two half-resolution chroma planes,
/// each tightly packed (stride = width). Even sizes only, as VP8 codes them.
///
/// ```
///  Y: width × height        U: (width/2) × (height/2)        V: (width/2) × (height/2)
/// ```
public struct I420Image: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public var y: [UInt8]
    public var u: [UInt8]
    public var v: [UInt8]

    /// A picture of one colour (black by default: Y 16, U and V 128, video range).
    public init(width: Int, height: Int, y: UInt8 = 16, u: UInt8 = 128, v: UInt8 = 128) {
        precondition(width > 0 && height > 0 && width % 2 == 0 && height % 2 == 0, "I420 needs even, positive sizes")
        self.width = width
        self.height = height
        self.y = [UInt8](repeating: y, count: width * height)
        self.u = [UInt8](repeating: u, count: width / 2 * height / 2)
        self.v = [UInt8](repeating: v, count: width / 2 * height / 2)
    }

    /// A copy of a decoder's picture, its planes `strides` bytes apart row to row; odd sizes are cropped to even
    /// ones, and nil for a picture smaller than 2 × 2.
    public init?(copying planes: (y: UnsafeMutablePointer<UInt8>, u: UnsafeMutablePointer<UInt8>, v: UnsafeMutablePointer<UInt8>), strides: (Int, Int, Int),
                 width: Int, height: Int) {
        let w = width & ~1, h = height & ~1
        guard w >= 2, h >= 2 else { return nil }
        self.init(width: w, height: h)
        func copy(_ source: UnsafeMutablePointer<UInt8>, _ stride: Int, _ pw: Int, _ ph: Int, into plane: inout [UInt8]) {
            plane.withUnsafeMutableBufferPointer { d in
                for row in 0..<ph { (d.baseAddress! + row * pw).update(from: source + row * stride, count: pw) }
            }
        }
        copy(planes.y, strides.0, w, h, into: &y)
        copy(planes.u, strides.1, w / 2, h / 2, into: &u)
        copy(planes.v, strides.2, w / 2, h / 2, into: &v)
    }

    /// A rectangle of a picture, in luma pixels.
    public struct Rect: Sendable, Equatable {
        public var x, y, width, height: Int
        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    /// Draws `source` scaled (nearest neighbour) to fit inside `rect`, keeping its aspect ratio and centring it;
    /// the rest of `rect` is left as it was. Rectangles are clipped to this picture.
    public mutating func draw(_ source: I420Image, fitting rect: Rect) {
        guard rect.width >= 2, rect.height >= 2 else { return }
        // The largest even size with the source's aspect ratio that fits.
        var w = rect.width, h = rect.width * source.height / source.width
        if h > rect.height {
            h = rect.height
            w = rect.height * source.width / source.height
        }
        w &= ~1
        h &= ~1
        guard w >= 2, h >= 2 else { return }
        let x0 = (rect.x + (rect.width - w) / 2) & ~1, y0 = (rect.y + (rect.height - h) / 2) & ~1
        place(source, at: Rect(x: x0, y: y0, width: w, height: h), within: Rect(x: 0, y: 0, width: width, height: height))
    }

    /// Draws `source` scaled (nearest neighbour) to cover all of `rect`, keeping its aspect ratio and centring
    /// it: what goes beyond `rect` is cropped (CSS's `object-fit: cover`).
    public mutating func draw(_ source: I420Image, covering rect: Rect) {
        guard rect.width >= 2, rect.height >= 2 else { return }
        // The smallest even size with the source's aspect ratio that covers.
        var w = rect.width, h = (rect.width * source.height + source.width - 1) / source.width
        if h < rect.height {
            h = rect.height
            w = (rect.height * source.width + source.height - 1) / source.height
        }
        w = (w + 1) & ~1
        h = (h + 1) & ~1
        let x0 = (rect.x + (rect.width - w) / 2) & ~1, y0 = (rect.y + (rect.height - h) / 2) & ~1
        place(source, at: Rect(x: x0, y: y0, width: w, height: h), within: rect)
    }

    /// Draws `source` scaled to `target`, only the part inside `clip` (and this picture).
    private mutating func place(_ source: I420Image, at target: Rect, within clip: Rect) {
        let x1 = max(clip.x, 0) & ~1, y1 = max(clip.y, 0) & ~1
        let x2 = min(clip.x + clip.width, width) & ~1, y2 = min(clip.y + clip.height, height) & ~1
        guard x2 > x1, y2 > y1 else { return }
        let luma = (x1, y1, x2, y2), chroma = (x1 / 2, y1 / 2, x2 / 2, y2 / 2)
        Self.scale(source.y, source.width, source.height, into: &y, width, target.x, target.y, target.width, target.height, clip: luma)
        Self.scale(source.u, source.width / 2, source.height / 2, into: &u, width / 2, target.x / 2, target.y / 2, target.width / 2,
                   target.height / 2, clip: chroma)
        Self.scale(source.v, source.width / 2, source.height / 2, into: &v, width / 2, target.x / 2, target.y / 2, target.width / 2,
                   target.height / 2, clip: chroma)
    }

    private static func scale(_ src: [UInt8], _ sw: Int, _ sh: Int, into dst: inout [UInt8], _ dw: Int,
                              _ x0: Int, _ y0: Int, _ w: Int, _ h: Int, clip: (Int, Int, Int, Int)) {
        // The source column of each target column, worked out once per picture rather than once per pixel.
        let columns = (0..<w).filter { x0 + $0 >= clip.0 && x0 + $0 < clip.2 }
        let from = columns.map { $0 * sw / w }
        src.withUnsafeBufferPointer { s in
            dst.withUnsafeMutableBufferPointer { d in
                for row in 0..<h {
                    let ty = y0 + row
                    guard ty >= clip.1, ty < clip.3 else { continue }
                    let source = (row * sh / h) * sw, target = ty * dw + x0
                    for (col, sx) in zip(columns, from) { d[target + col] = s[source + sx] }
                }
            }
        }
    }
}
