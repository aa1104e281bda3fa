import Testing
@testable import Wire

/// A parser that can be fed bytes and asked for events, so one helper can drive
/// every incremental parser the same three ways.
protocol FeedableParser {
    associatedtype Event: Equatable
    associatedtype Failure: Error & Equatable
    mutating func feed(_ bytes: ArraySlice<UInt8>)
    mutating func nextEvent() throws(Failure) -> Event?
    /// Joins events whose boundaries depend on how input was split (body pieces).
    static func normalize(_ events: [Event]) -> [Event]
}

extension FeedableParser {
    static func normalize(_ events: [Event]) -> [Event] { events }
}

struct FeedResult<Event: Equatable, Failure: Equatable>: Equatable, CustomStringConvertible {
    var events: [Event]
    var error: Failure?

    var description: String { "events: \(events), error: \(error.map { "\($0)" } ?? "none")" }
}

func feed<P: FeedableParser>(_ parser: P, pieces: [ArraySlice<UInt8>]) -> FeedResult<P.Event, P.Failure> {
    var parser = parser
    var events: [P.Event] = []
    for piece in pieces {
        parser.feed(piece)
        do {
            while let event = try parser.nextEvent() { events.append(event) }
        } catch {
            return FeedResult(events: P.normalize(events), error: error)
        }
    }
    return FeedResult(events: P.normalize(events), error: nil)
}

/// Feeds `input` whole, one byte at a time, and split in two at every point (sampled for
/// long inputs), expects every run to agree, and returns the whole-input result.
@discardableResult
func feedAllWays<P: FeedableParser>(
    _ input: [UInt8], _ make: () -> P, sourceLocation: SourceLocation = #_sourceLocation
) -> FeedResult<P.Event, P.Failure> {
    let whole = feed(make(), pieces: [input[...]])
    let bytewise = feed(make(), pieces: input.indices.map { input[$0..<($0 + 1)] })
    #expect(bytewise == whole, "byte by byte differs", sourceLocation: sourceLocation)
    let step = max(1, input.count / 256)
    for split in stride(from: 1, to: input.count, by: step) {
        let result = feed(make(), pieces: [input[..<split], input[split...]])
        if result != whole {
            Issue.record("split at \(split) differs: \(result) vs \(whole)", sourceLocation: sourceLocation)
            break
        }
    }
    return whole
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

extension HTTPRequestParser: FeedableParser {
    mutating func feed(_ bytes: ArraySlice<UInt8>) { append(contentsOf: bytes) }
    mutating func nextEvent() throws(HTTPParseError) -> HTTPParseEvent? { try next() }

    static func normalize(_ events: [HTTPParseEvent]) -> [HTTPParseEvent] {
        var out: [HTTPParseEvent] = []
        for event in events {
            if case .body(let more) = event, case .body(let previous)? = out.last {
                out[out.count - 1] = .body(previous + more)
            } else {
                out.append(event)
            }
        }
        return out
    }
}

extension HTTPResponseParser: FeedableParser {
    mutating func feed(_ bytes: ArraySlice<UInt8>) { append(contentsOf: bytes) }
    mutating func nextEvent() throws(HTTPParseError) -> HTTPResponseParseEvent? { try next() }

    static func normalize(_ events: [HTTPResponseParseEvent]) -> [HTTPResponseParseEvent] {
        var out: [HTTPResponseParseEvent] = []
        for event in events {
            if case .body(let more) = event, case .body(let previous)? = out.last {
                out[out.count - 1] = .body(previous + more)
            } else {
                out.append(event)
            }
        }
        return out
    }
}

extension WebSocketFrameParser: FeedableParser {
    mutating func feed(_ bytes: ArraySlice<UInt8>) { append(contentsOf: bytes) }
    mutating func nextEvent() throws(WebSocketError) -> WebSocketFrame? { try next() }
}
