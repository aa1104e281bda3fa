extension NCCOAction {
    /// The action as JSON, every option written at its resolved value (parsing it again gives the same action).
    public var json: JSONValue {
        var o: [String: JSONValue] = ["action": .string(name.rawValue)]
        func callback(_ cb: Callback?) {
            guard let cb else { return }
            o["eventUrl"] = [.string(cb.url)]
            o["eventMethod"] = .string(cb.method.rawValue)
        }
        switch self {
        case .talk(let t):
            o["text"] = .string(t.text)
            o["language"] = .string(t.language)
            o["style"] = .number(Double(t.style))
            o["premium"] = .bool(t.premium)
            o["loop"] = .number(Double(t.loop))
            o["level"] = .number(t.level)
            o["bargeIn"] = .bool(t.bargeIn)
        case .stream(let s):
            o["streamUrl"] = [.string(s.url)]
            o["loop"] = .number(Double(s.loop))
            o["level"] = .number(s.level)
            o["bargeIn"] = .bool(s.bargeIn)
        case .input(let i):
            o["type"] = ["dtmf"]
            o["dtmf"] = ["timeOut": .number(Double(i.timeOut)), "maxDigits": .number(Double(i.maxDigits)), "submitOnHash": .bool(i.submitOnHash)]
            callback(i.eventURL)
        case .record(let r):
            o["format"] = .string(r.format.rawValue)
            if r.split { o["split"] = "conversation" }
            o["channels"] = .number(Double(r.channels))
            if let s = r.endOnSilence { o["endOnSilence"] = .number(Double(s)) }
            if let k = r.endOnKey { o["endOnKey"] = .string(String(k)) }
            if let t = r.timeOut { o["timeOut"] = .number(Double(t)) }
            o["beepStart"] = .bool(r.beepStart)
            callback(r.eventURL)
        case .conversation(let c):
            o["name"] = .string(c.name)
            if let m = c.musicOnHoldURL { o["musicOnHoldUrl"] = [.string(m)] }
            o["startOnEnter"] = .bool(c.startOnEnter)
            o["endOnExit"] = .bool(c.endOnExit)
            o["record"] = .bool(c.record)
            o["mute"] = .bool(c.mute)
            if let s = c.canSpeak { o["canSpeak"] = .array(s.map(JSONValue.string)) }
            if let h = c.canHear { o["canHear"] = .array(h.map(JSONValue.string)) }
            callback(c.eventURL)
        case .connect(let c):
            var endpoint = c.endpoint.json
            if let onAnswer = c.onAnswer, case .object(var e) = endpoint {
                e["onAnswer"] = onAnswer.json
                endpoint = .object(e)
            }
            o["endpoint"] = [endpoint]
            if let f = c.from { o["from"] = .string(f) }
            if c.randomFromNumber { o["randomFromNumber"] = true }
            if c.synchronous { o["eventType"] = "synchronous" }
            o["timeout"] = .number(Double(c.timeout))
            o["limit"] = .number(Double(c.limit))
            if let r = c.ringbackTone { o["ringbackTone"] = [.string(r)] }
            callback(c.eventURL)
        case .notify(let n):
            o["payload"] = .object(n.payload)
            callback(n.eventURL)
        }
        return .object(o)
    }
}
