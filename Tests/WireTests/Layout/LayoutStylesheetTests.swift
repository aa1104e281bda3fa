import Testing
@testable import Wire

@Suite("Custom layout stylesheets")
struct LayoutStylesheetTests {
    typealias Element = LayoutStylesheet.Element
    static let vga = (0..<3).map { _ in Element(classes: [], width: 640, height: 480) }

    func boxes(_ css: String, _ elements: [Element], width: Int = 640, height: Int = 480) throws -> [[Int]] {
        let sheet = try #require(LayoutStylesheet(css))
        return sheet.place(elements, width: width, height: height).map { [$0.index, $0.x, $0.y, $0.width, $0.height] }
    }

    @Test("absolute boxes by class, in % and px, from any edge; a stream no rule sizes takes its own size")
    func absolute() throws {
        let css = """
            /* the Video API's own example, more or less */
            stream.instructor { position: absolute; width: 100%; height: 50%; }
            stream.student { position: absolute; right: 10px; bottom: 0; width: 160px; height: 120px; }
            """
        let elements = [Element(classes: ["student"], width: 640, height: 480), Element(classes: ["instructor", "x"], width: 640, height: 480),
                        Element(classes: ["other"], width: 320, height: 240)]
        #expect(try boxes(css, elements) == [[0, 470, 360, 160, 120], [1, 0, 0, 640, 240], [2, 0, 0, 320, 240]])
    }

    @Test("floats fill a line left to right and wrap; a block goes below; display none hides")
    func flow() throws {
        let css = "stream { float: left; width: 50%; height: 50%; } stream:nth-child(2) { display: none } stream.banner { float: none; width: 100%; height: 10% }"
        let four = (0..<4).map { _ in Element(classes: [], width: 640, height: 480) } + [Element(classes: ["banner"], width: 640, height: 480)]
        #expect(try boxes(css, four) == [[0, 0, 0, 320, 240], [2, 320, 0, 320, 240], [3, 0, 240, 320, 240], [4, 0, 480, 640, 48]])
        #expect(try boxes("stream { float: right; width: 200px; height: 100px }", Self.vga)
                == [[0, 440, 0, 200, 100], [1, 240, 0, 200, 100], [2, 40, 0, 200, 100]])
    }

    @Test("the more specific rule wins, then the later; positions; z-index orders the drawing; cover; aspect ratio")
    func cascade() throws {
        let css = """
            stream.focus { width: 100% !important; height: 100%; z-index: 0 }
            stream { position: absolute; width: 25%; height: 25%; z-index: 5; object-fit: cover }
            stream:first-child { top: 10px } stream:last-child { left: 20px }
            stream { height: 30% }
            """
        let sheet = try #require(LayoutStylesheet(css))
        let placed = sheet.place([Element(classes: [], width: 640, height: 480), Element(classes: ["focus"], width: 640, height: 480)], width: 640, height: 480)
        #expect(placed.map(\.index) == [1, 0], "the focus stream (z 0) drawn first, under the other (z 5)")
        #expect(placed.map { [$0.x, $0.y, $0.width, $0.height] } == [[20, 0, 640, 480], [0, 10, 160, 144]])
        #expect(placed.allSatisfy { $0.cover })
        // Only a width: the height follows the picture's aspect ratio (16:9 here).
        #expect(try boxes("stream { width: 320px }", [Element(classes: [], width: 1280, height: 720)]) == [[0, 0, 0, 320, 180]])
    }

    @Test("selectors other than stream drop their rule; a stylesheet without a usable rule, or too long, is refused")
    func refusals() throws {
        #expect(try boxes("div { width: 10px } stream, video { width: 5px } stream.a:first-child { width: 50%; height: 50% }",
                          [Element(classes: ["a"], width: 640, height: 480)]) == [[0, 0, 0, 320, 240]])
        for bad in ["", "stream", "div { width: 100% }", "streams { width: 1px }", "stream:hover { width: 1px }", "stream:nth-child(0) { width: 1px }",
                    "@media print { stream { width: 1px } }", "/* stream { width: 1px } */", String(repeating: "stream{}", count: 2_000)] {
            #expect(LayoutStylesheet(bad) == nil, "\(bad.prefix(40))")
        }
        #expect(LayoutStylesheet.length("12.5%", of: 640) == 80 && LayoutStylesheet.length("7px", of: 640) == 7 && LayoutStylesheet.length("1em", of: 640) == nil)
    }
}
