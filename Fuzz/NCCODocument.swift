// NCCO: any bytes either fail with an NCCOError or give the same document every time they are parsed, its
// actions within the documented bounds (what the engine and media then rely on without checking again).

/// One fuzz input for the NCCO target.
func fuzzNCCODocument(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let ncco = try? NCCO.parse(bytes) else { return 0 }
    precondition(!ncco.actions.isEmpty && ncco.actions.count <= NCCO.Limits.actions, "action count out of bounds")
    precondition((try? NCCO.parse(bytes)) == ncco, "the same bytes parsed to another document")
    for action in ncco.actions { checkBounds(action) }
    return 0
}

private func checkBounds(_ action: NCCOAction) {
    switch action {
    case .talk(let t):
        precondition(!t.text.isEmpty && t.text.count <= NCCO.Limits.textCharacters && (0...100).contains(t.loop) && (-1...1).contains(t.level),
                     "talk out of bounds")
    case .stream(let s):
        precondition((0...100).contains(s.loop) && (-1...1).contains(s.level), "stream out of bounds")
    case .input(let i):
        precondition((0...10).contains(i.timeOut) && (1...20).contains(i.maxDigits), "input dtmf out of bounds")
        precondition(i.dtmf || i.speech != nil, "an input that collects nothing")
        precondition(!i.asynchronous || (i.dtmf && i.speech == nil), "an asynchronous input with speech")
        if let s = i.speech {
            precondition(s.uuid.count <= 1 && (0.4...10).contains(s.endOnSilence) && (1...60).contains(s.startTimeout)
                         && (1...60).contains(s.maxDuration) && (0...100).contains(s.sensitivity)
                         && s.context.count <= NCCO.Limits.speechContext, "speech out of bounds")
        }
    case .record(let r):
        precondition((1...32).contains(r.channels) && (r.split || r.channels == 1) && r.maxDuration <= 7200, "record out of bounds")
    case .conversation(let c):
        precondition(!c.name.isEmpty && c.name.count <= NCCO.Limits.conversationName, "conversation name out of bounds")
        precondition((c.canHear?.count ?? 0) <= NCCO.Limits.legList && (c.canSpeak?.count ?? 0) <= NCCO.Limits.legList, "leg lists out of bounds")
    case .connect(let c):
        precondition((3...7200).contains(c.timeout) && (1...7200).contains(c.limit), "connect out of bounds")
    case .notify:
        break
    case .wait(let w):
        precondition(NCCOAction.Wait.timeouts.contains(w.timeout), "wait out of bounds")
    }
}
