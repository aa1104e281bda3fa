// Feeds arbitrary bytes to HTTPRequestParser and HTTPResponseParser, whole and in
// pieces whose sizes come from the input; both runs must agree, and every parsed head
// must survive serialize -> parse unchanged.

fileprivate func merged<E>(_ events: [E], body: (E) -> [UInt8]?, make: ([UInt8]) -> E) -> [E] {
    var out: [E] = []
    var pending: [UInt8]?
    for event in events {
        if let bytes = body(event) {
            pending = (pending ?? []) + bytes
            continue
        }
        if let bytes = pending { out.append(make(bytes)) }
        pending = nil
        out.append(event)
    }
    if let bytes = pending { out.append(make(bytes)) }
    return out
}

fileprivate func runRequests(_ chunks: [ArraySlice<UInt8>], limits: HTTPParserLimits) -> ([HTTPParseEvent], HTTPParseError?) {
    var parser = HTTPRequestParser(limits: limits)
    var events: [HTTPParseEvent] = []
    for chunk in chunks {
        parser.append(contentsOf: chunk)
        do {
            while let event = try parser.next() {
                if case .body(let bytes) = event { precondition(!bytes.isEmpty, "empty body event") }
                events.append(event)
            }
        } catch {
            precondition(error.closesConnection)
            return (events, error)
        }
        precondition(parser.bufferedByteCount >= 0)
    }
    return (events, nil)
}

fileprivate func runResponses(_ chunks: [ArraySlice<UInt8>], limits: HTTPParserLimits, method: HTTPMethod)
    -> ([HTTPResponseParseEvent], HTTPParseError?)
{
    var parser = HTTPResponseParser(limits: limits)
    parser.requestMethod = method
    var events: [HTTPResponseParseEvent] = []
    for chunk in chunks {
        parser.append(contentsOf: chunk)
        do {
            while let event = try parser.next() { events.append(event) }
        } catch {
            return (events, error)
        }
    }
    do {
        if let last = try parser.finish() { events.append(last) }
    } catch {
        return (events, error)
    }
    return (events, nil)
}

/// One fuzz input for the HTTPRequest target.
func fuzzHTTPRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return 0 }
    let all = Array(UnsafeBufferPointer(start: data, count: size))
    let seed = all[0]
    let knobs = all[1]
    let input = all[2...]
    let limits =
        knobs & 1 == 0
        ? HTTPParserLimits()
        : HTTPParserLimits(requestLine: 64, headerBytes: 128, headerCount: 4, maxBody: 32, chunkLine: 16)

    if knobs & 2 == 0 {
        let whole = runRequests([input], limits: limits)
        let split = runRequests(pieces(input, seed: seed, maxPiece: seed & 0x80 != 0 ? 4 : 64), limits: limits)
        let body: (HTTPParseEvent) -> [UInt8]? = { if case .body(let b) = $0 { b } else { nil } }
        let wholeEvents = merged(whole.0, body: body, make: HTTPParseEvent.body)
        precondition(wholeEvents == merged(split.0, body: body, make: HTTPParseEvent.body), "split changed events")
        precondition(whole.1 == split.1, "split changed the error")
        for case .head(let head) in whole.0 {
            var wire: [UInt8] = []
            head.serialize(into: &wire)
            var again = HTTPRequestParser(limits: HTTPParserLimits(requestLine: 1 << 20, headerBytes: 1 << 20, maxBody: Int.max))
            again.append(contentsOf: wire)
            let reparsed = try? again.next()
            precondition(reparsed == .head(head), "head did not round-trip")
        }
    } else {
        let method: HTTPMethod = knobs & 4 == 0 ? .GET : .HEAD
        let whole = runResponses([input], limits: limits, method: method)
        let split = runResponses(pieces(input, seed: seed, maxPiece: seed & 0x80 != 0 ? 4 : 64), limits: limits, method: method)
        let body: (HTTPResponseParseEvent) -> [UInt8]? = { if case .body(let b) = $0 { b } else { nil } }
        precondition(
            merged(whole.0, body: body, make: HTTPResponseParseEvent.body)
                == merged(split.0, body: body, make: HTTPResponseParseEvent.body), "split changed events")
        precondition(whole.1 == split.1, "split changed the error")
    }
    return 0
}
