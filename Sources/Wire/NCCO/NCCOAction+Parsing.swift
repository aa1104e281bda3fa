extension NCCOAction {
    /// Reads and validates one action; `index` is its place in the document, for errors.
    public static func parse(_ value: JSONValue, index: Int) throws(NCCOError) -> NCCOAction {
        guard case .object(let o) = value else { throw NCCOError(index: index, .notAnObject) }
        guard let nameValue = o["action"] else { throw NCCOError(index: index, field: "action", .missing) }
        guard let nameText = nameValue.stringValue else { throw NCCOError(index: index, field: "action", .wrongType(expected: "a string")) }
        guard let name = Name(rawValue: nameText) else { throw NCCOError(index: index, field: "action", .unknownAction(nameText)) }
        var r = Fields(object: o, index: index, action: name.rawValue)
        let action: NCCOAction
        switch name {
        case .talk:
            guard let text = try r.string("text", required: true, max: NCCO.Limits.textCharacters), !text.isEmpty else {
                throw r.fail("text", .outOfRange("1 to \(NCCO.Limits.textCharacters) characters"))
            }
            var t = Talk(text: text)
            if let language = try r.string("language", max: 16) {
                guard isLanguageTag(language) else { throw r.fail("language", .invalid("must be a language tag such as en-US")) }
                t.language = language
            }
            if let style = try r.int("style", 0...100) { t.style = style }
            if let premium = try r.bool("premium") { t.premium = premium }
            if let loop = try r.int("loop", 0...100) { t.loop = loop }
            if let level = try r.double("level", -1...1) { t.level = level }
            if let bargeIn = try r.bool("bargeIn") { t.bargeIn = bargeIn }
            try r.unsupported(["ssml", "queue"])
            action = .talk(t)
        case .stream:
            guard let url = try r.url("streamUrl", required: true) else { throw r.fail("streamUrl", .missing) }
            var s = Stream(url: url)
            if let loop = try r.int("loop", 0...100) { s.loop = loop }
            if let level = try r.double("level", -1...1) { s.level = level }
            if let bargeIn = try r.bool("bargeIn") { s.bargeIn = bargeIn }
            action = .stream(s)
        case .input:
            var input = Input()
            var types: Set<String> = r.object["speech"] == nil ? ["dtmf"] : ["dtmf", "speech"]
            if let given = r.object["type"] {
                guard case .array(let a) = given, !a.isEmpty, a.count <= 2 else {
                    throw r.fail("type", .wrongType(expected: "an array of dtmf and speech"))
                }
                types = []
                for (i, t) in a.enumerated() {
                    guard let s = t.stringValue, s == "dtmf" || s == "speech" else {
                        throw r.fail("type[\(i)]", .invalid("must be dtmf or speech"))
                    }
                    types.insert(s)
                }
                r.seen.insert("type")
            }
            input.dtmf = types.contains("dtmf")
            if types.contains("speech") {
                input.speech = try speech(r.object["speech"], index: index)
                if r.object["speech"] != nil { r.seen.insert("speech") }
            } else if r.object["speech"] != nil {
                throw r.fail("speech", .invalid("needs type speech"))
            }
            // The older form keeps the dtmf options at the top level.
            var d = r
            if let nested = r.object["dtmf"] {
                guard case .object(let dto) = nested else { throw r.fail("dtmf", .wrongType(expected: "an object")) }
                r.seen.insert("dtmf")
                d = Fields(object: dto, index: index, action: name.rawValue, prefix: "dtmf.")
            }
            if let t = try d.int("timeOut", 0...10) { input.timeOut = t }
            if let m = try d.int("maxDigits", 1...20) { input.maxDigits = m }
            if let s = try d.bool("submitOnHash") { input.submitOnHash = s }
            if d.prefix == "dtmf." {
                try d.finish()
                for key in ["timeOut", "maxDigits", "submitOnHash"] where r.object[key] != nil { r.seen.insert(key) }
            } else {
                r.seen = r.seen.union(d.seen)
            }
            input.eventURL = try r.callback()
            if let mode = try r.string("mode", max: 16) {
                guard mode == "synchronous" || mode == "asynchronous" else { throw r.fail("mode", .invalid("must be synchronous or asynchronous")) }
                input.asynchronous = mode == "asynchronous"
            }
            if input.asynchronous {
                guard input.speech == nil else { throw r.fail("type", .invalid("an asynchronous input collects dtmf only")) }
                if let key = ["dtmf", "timeOut", "maxDigits", "submitOnHash"].first(where: { r.object[$0] != nil }) {
                    throw r.fail(key, .invalid("an asynchronous input takes no dtmf settings"))
                }
            }
            action = .input(input)
        case .record:
            var rec = Record()
            if let f = try r.string("format", max: 8) {
                guard let format = Record.Format(rawValue: f) else { throw r.fail("format", .invalid("must be mp3, wav or ogg")) }
                rec.format = format
            }
            if let split = try r.string("split", max: 32) {
                guard split == "conversation" else { throw r.fail("split", .invalid("must be conversation")) }
                rec.split = true
            }
            if let channels = try r.int("channels", 1...32) {
                guard rec.split || channels == 1 else { throw r.fail("channels", .invalid("needs split: conversation")) }
                rec.channels = channels
            }
            rec.endOnSilence = try r.int("endOnSilence", 3...10)
            if let key = try r.string("endOnKey", max: 1) {
                guard let c = key.first, key.count == 1, "0123456789*#".contains(c) else {
                    throw r.fail("endOnKey", .invalid("must be one of 0-9, * or #"))
                }
                rec.endOnKey = c
            }
            if let t = try r.int("timeOut", 3...7200) { rec.timeOut = t }
            if let b = try r.bool("beepStart") { rec.beepStart = b }
            rec.eventURL = try r.callback()
            try r.unsupported(["transcription"])
            action = .record(rec)
        case .conversation:
            guard let cname = try r.string("name", required: true, max: NCCO.Limits.conversationName), !cname.isEmpty else {
                throw r.fail("name", .outOfRange("1 to \(NCCO.Limits.conversationName) characters"))
            }
            var c = Conversation(name: cname)
            c.musicOnHoldURL = try r.url("musicOnHoldUrl")
            if let b = try r.bool("startOnEnter") { c.startOnEnter = b }
            if let b = try r.bool("endOnExit") { c.endOnExit = b }
            if let b = try r.bool("record") { c.record = b }
            if let b = try r.bool("mute") { c.mute = b }
            c.canSpeak = try r.legList("canSpeak")
            c.canHear = try r.legList("canHear")
            if c.mute && c.canSpeak != nil { throw r.fail("mute", .invalid("cannot be combined with canSpeak")) }
            c.eventURL = try r.callback()
            try r.unsupported(["transcription"])
            action = .conversation(c)
        case .connect:
            guard let endpoints = r.object["endpoint"] else { throw r.fail("endpoint", .missing) }
            guard case .array(let list) = endpoints else { throw r.fail("endpoint", .wrongType(expected: "an array of one endpoint")) }
            guard list.count == 1 else { throw r.fail("endpoint", .outOfRange("an array of exactly one endpoint")) }
            r.seen.insert("endpoint")
            // A phone endpoint's `onAnswer` belongs to the connect (a REST call's `to` has none).
            var endpoint = list[0]
            var onAnswer: OnAnswer?
            if case .object(var o) = endpoint, o["type"]?.stringValue == "phone", let value = o.removeValue(forKey: "onAnswer") {
                guard case .object(let fields) = value else { throw r.fail("endpoint[0].onAnswer", .wrongType(expected: "an object")) }
                var f = Fields(object: fields, index: index, action: name.rawValue, prefix: "endpoint[0].onAnswer.")
                guard let url = try f.url("url", required: true) else { throw f.fail("url", .missing) }
                let tone = try f.url("ringbackTone"), older = try f.url("ringback")  // `ringback`: the older name
                try f.finish()
                onAnswer = OnAnswer(url: url, ringbackTone: tone ?? older)
                endpoint = .object(o)
            }
            var c = Connect(endpoint: try CallEndpoint.parse(endpoint, field: "endpoint[0]", index: index, action: name.rawValue))
            c.onAnswer = onAnswer
            if let from = try r.string("from", max: 64) {
                guard let n = CallEndpoint.normalizedNumber(from) else { throw r.fail("from", .invalid("must be an E.164 number (6 to 15 digits)")) }
                c.from = n
            }
            if let random = try r.bool("randomFromNumber") {
                if random && c.from != nil { throw r.fail("randomFromNumber", .invalid("cannot be combined with from")) }
                c.randomFromNumber = random
            }
            if let t = try r.string("eventType", max: 32) {
                guard t == "synchronous" else { throw r.fail("eventType", .invalid("must be synchronous")) }
                c.synchronous = true
            }
            if let t = try r.int("timeout", 3...7200) { c.timeout = t }
            if let l = try r.int("limit", 1...7200) { c.limit = l }
            c.ringbackTone = try r.url("ringbackTone")
            c.eventURL = try r.callback()
            do {
                c.machineDetection = try MachineDetection.parse(standard: r.object["machineDetection"], standardName: "machineDetection",
                                                                advanced: r.object["advancedMachineDetection"], advancedName: "advancedMachineDetection")
            } catch {
                throw r.fail(error.field, .invalid(error.reason))
            }
            r.seen.formUnion(["machineDetection", "advancedMachineDetection"])
            if c.machineDetection != nil, c.endpoint.kind != .phone, c.endpoint.kind != .sip {
                throw r.fail("machineDetection", .invalid("listens to a phone or sip endpoint's audio"))
            }
            action = .connect(c)
        case .notify:
            guard let payload = r.object["payload"] else { throw r.fail("payload", .missing) }
            guard case .object(let p) = payload else { throw r.fail("payload", .wrongType(expected: "an object")) }
            guard JSONSize.estimate(payload, limit: NCCO.Limits.payloadBytes) <= NCCO.Limits.payloadBytes else {
                throw r.fail("payload", .outOfRange("at most \(NCCO.Limits.payloadBytes) bytes"))
            }
            r.seen.insert("payload")
            guard let cb = try r.callback() else { throw r.fail("eventUrl", .missing) }
            action = .notify(Notify(payload: p, eventURL: cb))
        case .wait:
            var w = Wait()
            if let t = try r.number("timeout") { w.timeout = min(max(t, Wait.timeouts.lowerBound), Wait.timeouts.upperBound) }
            action = .wait(w)
        }
        try r.finish()
        return action
    }

    /// `en-US`, `cmn-CN`, `es-419`: letters and digits in up to four dash-separated parts.
    static func isLanguageTag(_ s: String) -> Bool {
        let parts = s.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...4).contains(parts.count) else { return false }
        return parts.allSatisfy { p in (2...8).contains(p.count) && p.utf8.allSatisfy { ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A || ($0 >= 0x30 && $0 <= 0x39) } }
    }
}

/// Typed field reads over one action object, remembering which keys were read so unknown ones are refused.
struct Fields {
    let object: [String: JSONValue]
    let index: Int
    let action: String
    var prefix = ""
    var seen: Set<String> = ["action"]

    init(object: [String: JSONValue], index: Int, action: String, prefix: String = "") {
        self.object = object
        self.index = index
        self.action = action
        self.prefix = prefix
        if !prefix.isEmpty { seen = [] }
    }

    func fail(_ field: String, _ reason: NCCOError.Reason) -> NCCOError {
        NCCOError(index: index, action: action, field: prefix + field, reason)
    }

    mutating func bool(_ key: String) throws(NCCOError) -> Bool? {
        guard let v = object[key] else { return nil }
        seen.insert(key)
        guard let b = v.boolValue else { throw fail(key, .wrongType(expected: "true or false")) }
        return b
    }

    mutating func string(_ key: String, required: Bool = false, max: Int) throws(NCCOError) -> String? {
        guard let v = object[key] else {
            if required { throw fail(key, .missing) }
            return nil
        }
        seen.insert(key)
        guard let s = v.stringValue else { throw fail(key, .wrongType(expected: "a string")) }
        guard s.count <= max else { throw fail(key, .outOfRange("at most \(max) characters")) }
        return s
    }

    mutating func int(_ key: String, _ range: ClosedRange<Int>) throws(NCCOError) -> Int? {
        guard let v = object[key] else { return nil }
        seen.insert(key)
        guard case .number = v else { throw fail(key, .wrongType(expected: "a number")) }
        guard let n = v.intValue else { throw fail(key, .wrongType(expected: "a whole number")) }
        guard range.contains(n) else { throw fail(key, .outOfRange("between \(range.lowerBound) and \(range.upperBound)")) }
        return n
    }

    mutating func double(_ key: String, _ range: ClosedRange<Double>) throws(NCCOError) -> Double? {
        guard let n = try number(key) else { return nil }
        guard range.contains(n) else { throw fail(key, .outOfRange("between \(range.lowerBound) and \(range.upperBound)")) }
        return n
    }

    /// Any finite number.
    mutating func number(_ key: String) throws(NCCOError) -> Double? {
        guard let v = object[key] else { return nil }
        seen.insert(key)
        guard let n = v.doubleValue, n.isFinite else { throw fail(key, .wrongType(expected: "a number")) }
        return n
    }

    /// A URL given as the API does, an array of one http(s) URL; a bare string is accepted too.
    mutating func url(_ key: String, required: Bool = false) throws(NCCOError) -> String? {
        guard let v = object[key] else {
            if required { throw fail(key, .missing) }
            return nil
        }
        seen.insert(key)
        let text: String
        switch v {
        case .string(let s): text = s
        case .array(let a):
            guard a.count == 1, let s = a[0].stringValue else { throw fail(key, .wrongType(expected: "an array of one URL")) }
            text = s
        default: throw fail(key, .wrongType(expected: "an array of one URL"))
        }
        guard text.hasPrefix("http://") || text.hasPrefix("https://"), CallEndpoint.isPlainURL(text) else {
            throw fail(key, .invalid("must be an http or https URL"))
        }
        return text
    }

    /// `eventUrl` and `eventMethod`.
    mutating func callback() throws(NCCOError) -> NCCOAction.Callback? {
        let url = try url("eventUrl")
        var method = NCCOAction.Method.post
        if let m = try string("eventMethod", max: 8) {
            guard let parsed = NCCOAction.Method(rawValue: m.uppercased()) else { throw fail("eventMethod", .invalid("must be GET or POST")) }
            method = parsed
        }
        return url.map { NCCOAction.Callback(url: $0, method: method) }
    }

    mutating func legList(_ key: String, max: Int = NCCO.Limits.legList) throws(NCCOError) -> [String]? {
        guard let v = object[key] else { return nil }
        seen.insert(key)
        guard case .array(let a) = v, a.count <= max else {
            throw fail(key, .wrongType(expected: max == 1 ? "an array of one leg id" : "an array of at most \(max) leg ids"))
        }
        var out: [String] = []
        for (i, item) in a.enumerated() {
            guard let s = item.stringValue, !s.isEmpty, s.count <= 64 else { throw fail("\(key)[\(i)]", .wrongType(expected: "a leg id")) }
            out.append(s)
        }
        return out
    }

    func unsupported(_ keys: [String]) throws(NCCOError) {
        for key in keys where object[key] != nil { throw fail(key, .unsupported) }
    }

    /// Refuses any key no read asked for (a misspelt option must not be silently dropped).
    func finish() throws(NCCOError) {
        for key in object.keys.sorted() where !seen.contains(key) { throw fail(key, .unknownField) }
    }
}

/// A bound on a JSON value's encoded size, computed without encoding it.
enum JSONSize {
    static func estimate(_ v: JSONValue, limit: Int) -> Int {
        var total = 0
        func walk(_ v: JSONValue) {
            guard total <= limit else { return }
            switch v {
            case .null, .bool: total += 5
            case .number: total += 24
            case .string(let s): total += s.utf8.count + 2
            case .array(let a): total += 2; for x in a { walk(x); total += 1 }
            case .object(let o): total += 2; for (k, x) in o { total += k.utf8.count + 4; walk(x) }
            }
        }
        walk(v)
        return total
    }
}

extension NCCOAction {
    /// An input's `speech` settings (defaults when absent).
    static func speech(_ value: JSONValue?, index: Int) throws(NCCOError) -> Input.Speech {
        var speech = Input.Speech()
        guard let value else { return speech }
        guard case .object(let o) = value else {
            throw NCCOError(index: index, action: Name.input.rawValue, field: "speech", .wrongType(expected: "an object"))
        }
        var f = Fields(object: o, index: index, action: Name.input.rawValue, prefix: "speech.")
        // As the Voice API's: one leg, whose voice the input listens to.
        if let legs = try f.legList("uuid", max: 1) { speech.uuid = legs }
        if let s = try f.double("endOnSilence", 0.4...10) { speech.endOnSilence = s }
        if let language = try f.string("language", max: 16) {
            guard isLanguageTag(language) else { throw f.fail("language", .invalid("must be a language tag such as en-US")) }
            speech.language = language
        }
        if let context = f.object["context"] {
            f.seen.insert("context")
            guard case .array(let a) = context, a.count <= NCCO.Limits.speechContext else {
                throw f.fail("context", .wrongType(expected: "an array of at most \(NCCO.Limits.speechContext) phrases"))
            }
            for (i, item) in a.enumerated() {
                guard let phrase = item.stringValue, !phrase.isEmpty, phrase.count <= 100 else {
                    throw f.fail("context[\(i)]", .wrongType(expected: "a phrase of 1 to 100 characters"))
                }
                speech.context.append(phrase)
            }
        }
        if let t = try f.int("startTimeout", 1...60) { speech.startTimeout = t }
        if let d = try f.int("maxDuration", 1...60) { speech.maxDuration = d }
        if let s = try f.int("sensitivity", 0...100) { speech.sensitivity = s }
        if let s = try f.bool("saveAudio") { speech.saveAudio = s }
        try f.finish()
        return speech
    }
}
