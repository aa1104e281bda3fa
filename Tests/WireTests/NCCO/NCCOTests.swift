import Testing
@testable import Wire

@Suite("NCCO documents")
struct NCCOTests {
    func parse(_ text: String) throws(NCCOError) -> NCCO { try NCCO.parse(Array(text.utf8)) }

    @Test("every action with every option reads back to the values given")
    func allOptions() throws {
        let ncco = try parse("""
            [{"action":"talk","text":"Hello","language":"en-GB","style":2,"premium":true,"loop":3,"level":-0.5,"bargeIn":true},
             {"action":"stream","streamUrl":["https://a.test/x.mp3"],"loop":0,"level":1,"bargeIn":true},
             {"action":"input","type":["dtmf"],"dtmf":{"timeOut":7,"maxDigits":12,"submitOnHash":true},"eventUrl":["http://127.0.0.1/i"],"eventMethod":"GET"},
             {"action":"record","format":"wav","split":"conversation","channels":2,"endOnSilence":5,"endOnKey":"#","timeOut":60,"beepStart":true,"eventUrl":["http://h.test/r"]},
             {"action":"conversation","name":"room","musicOnHoldUrl":["http://h.test/m.mp3"],"startOnEnter":false,"endOnExit":true,"record":true,"canHear":["leg-1"],"eventUrl":["http://h.test/cr"]},
             {"action":"connect","endpoint":[{"type":"sip","uri":"sip:bob@127.0.0.1","headers":{"X-Id":"7"},"standardHeaders":{"User-to-User":"00ff;encoding=hex"}}],"from":"+14155550100","eventType":"synchronous","timeout":30,"limit":600,"ringbackTone":"http://h.test/r.mp3","eventUrl":["http://h.test/c"]},
             {"action":"notify","payload":{"step":1},"eventUrl":["http://h.test/n"]}]
            """)
        #expect(ncco.actions.count == 7)
        guard case .talk(let t) = ncco.actions[0], case .stream(let s) = ncco.actions[1], case .input(let i) = ncco.actions[2],
              case .record(let r) = ncco.actions[3], case .conversation(let c) = ncco.actions[4], case .connect(let k) = ncco.actions[5],
              case .notify(let n) = ncco.actions[6] else { Issue.record("wrong actions"); return }
        #expect(t.text == "Hello" && t.language == "en-GB" && t.style == 2 && t.premium && t.loop == 3 && t.level == -0.5 && t.bargeIn)
        #expect(s.url == "https://a.test/x.mp3" && s.loop == 0 && s.level == 1 && s.bargeIn)
        #expect(i.timeOut == 7 && i.maxDigits == 12 && i.submitOnHash && i.eventURL == .init(url: "http://127.0.0.1/i", method: .get))
        #expect(r.format == .wav && r.split && r.channels == 2 && r.endOnSilence == 5 && r.endOnKey == "#" && r.timeOut == 60 && r.beepStart && r.isSynchronous)
        #expect(c.name == "room" && !c.startOnEnter && c.endOnExit && c.record && c.canHear == ["leg-1"] && c.musicOnHoldURL == "http://h.test/m.mp3" && c.eventURL?.url == "http://h.test/cr")
        #expect(k.endpoint == .sip(uri: "sip:bob@127.0.0.1", headers: ["X-Id": "7"], userToUser: "00ff;encoding=hex") && k.from == "14155550100" && k.synchronous)
        #expect(k.timeout == 30 && k.limit == 600 && k.ringbackTone == "http://h.test/r.mp3")
        #expect(n.payload == ["step": 1] && n.eventURL.url == "http://h.test/n")
    }

    @Test("a phone endpoint's onAnswer and a websocket's authorization read back")
    func onAnswerAndAuthorization() throws {
        let ncco = try parse(#"""
            [{"action":"connect","endpoint":[{"type":"phone","number":"14155550100","onAnswer":{"url":"https://h.test/whisper","ringbackTone":"https://h.test/ring.wav"}}]},
             {"action":"connect","endpoint":[{"type":"phone","number":"14155550100","onAnswer":{"url":"https://h.test/whisper","ringback":"https://h.test/old.wav"}}],"ringbackTone":"https://h.test/own.wav"},
             {"action":"connect","endpoint":[{"type":"websocket","uri":"wss://h.test/s","authorization":{"type":"custom","value":"Bearer abc"}}]},
             {"action":"connect","endpoint":[{"type":"websocket","uri":"wss://h.test/s","authorization":{"type":"vonage"}}]}]
            """#)
        guard case .connect(let a) = ncco.actions[0], case .connect(let b) = ncco.actions[1], case .connect(let c) = ncco.actions[2],
              case .connect(let d) = ncco.actions[3] else { Issue.record("not connects"); return }
        #expect(a.onAnswer == .init(url: "https://h.test/whisper", ringbackTone: "https://h.test/ring.wav") && a.ringback == "https://h.test/ring.wav")
        #expect(a.endpoint == .phone(number: "14155550100", dtmfAnswer: nil))
        // A STIR/SHAKEN identity goes with the phone endpoint (the INVITE's Identity header), not in what is shown.
        let shaken = try parse(#"[{"action":"connect","endpoint":[{"type":"phone","number":"14155550100","shaken":"eyJ0.eyJ1.c2ln;info=<https://c.test/a.pem>;alg=ES256;ppt=shaken"}]}]"#)
        guard case .connect(let s) = shaken.actions[0] else { Issue.record("not a connect"); return }
        #expect(s.endpoint == .phone(number: "14155550100", dtmfAnswer: nil, shaken: "eyJ0.eyJ1.c2ln;info=<https://c.test/a.pem>;alg=ES256;ppt=shaken"))
        #expect(s.endpoint.shown == ["type": "phone", "number": "14155550100"])
        #expect(b.onAnswer?.ringbackTone == "https://h.test/old.wav" && b.ringback == "https://h.test/own.wav", "the connect's own tone first")
        #expect(c.endpoint == .websocket(uri: "wss://h.test/s", contentType: "audio/l16;rate=16000", headers: [:], authorization: .custom("Bearer abc")))
        #expect(d.endpoint == .websocket(uri: "wss://h.test/s", contentType: "audio/l16;rate=16000", headers: [:], authorization: .vonage))
        // What events and stored legs show leaves the credential out.
        #expect(c.endpoint.shown == ["type": "websocket", "uri": "wss://h.test/s", "content-type": "audio/l16;rate=16000"])
    }

    @Test("wait: its timeout in seconds, 10 by default, a shorter or longer one taken as 0.1 or 7200 (as the Voice API's)")
    func wait() throws {
        let ncco = try parse(#"[{"action":"wait"},{"action":"wait","timeout":2.5},{"action":"wait","timeout":0.01},{"action":"wait","timeout":90000}]"#)
        #expect(ncco.actions == [.wait(.init(timeout: 10)), .wait(.init(timeout: 2.5)), .wait(.init(timeout: 0.1)), .wait(.init(timeout: 7200))])
    }

    @Test("an asynchronous input: keys only, no dtmf settings")
    func asynchronousInput() throws {
        let ncco = try parse(#"[{"action":"input","type":["dtmf"],"mode":"asynchronous","eventUrl":["http://h.test/keys"]},{"action":"input","type":["dtmf"],"mode":"synchronous"}]"#)
        guard case .input(let a) = ncco.actions[0], case .input(let b) = ncco.actions[1] else { Issue.record("not inputs"); return }
        #expect(a.asynchronous && a.dtmf && a.speech == nil && a.eventURL?.url == "http://h.test/keys")
        #expect(!b.asynchronous)
    }

    @Test("defaults are the documented ones")
    func defaults() throws {
        let ncco = try parse(#"[{"action":"talk","text":"x"},{"action":"input"},{"action":"record"},{"action":"connect","endpoint":[{"type":"app","user":"bob"}]}]"#)
        guard case .talk(let t) = ncco.actions[0], case .input(let i) = ncco.actions[1], case .record(let r) = ncco.actions[2],
              case .connect(let c) = ncco.actions[3] else { Issue.record("wrong actions"); return }
        #expect(t.language == "en-US" && t.loop == 1 && t.level == 0 && !t.bargeIn)
        #expect(i.timeOut == 3 && i.maxDigits == 4 && !i.submitOnHash && i.eventURL == nil)
        #expect(r.format == .mp3 && r.timeOut == nil && r.maxDuration == 7200 && !r.isSynchronous && r.channels == 1)
        #expect(c.timeout == 60 && c.limit == 7200 && !c.synchronous)
    }

    @Test("speech input: its settings, their defaults, and which types an input collects")
    func speechInput() throws {
        let ncco = try parse(#"""
            [{"action":"input","type":["speech"],"speech":{"uuid":["leg-1"],"endOnSilence":1.5,"language":"en-GB",
              "context":["sales","support"],"startTimeout":5,"maxDuration":30,"sensitivity":70,"saveAudio":false}},
             {"action":"input","type":["dtmf","speech"]},
             {"action":"input","speech":{}},
             {"action":"input"}]
            """#)
        guard case .input(let a) = ncco.actions[0], case .input(let b) = ncco.actions[1], case .input(let c) = ncco.actions[2],
              case .input(let d) = ncco.actions[3], let s = a.speech else { Issue.record("not inputs"); return }
        #expect(!a.dtmf && s.uuid == ["leg-1"] && s.endOnSilence == 1.5 && s.language == "en-GB" && s.context == ["sales", "support"])
        #expect(s.startTimeout == 5 && s.maxDuration == 30 && s.sensitivity == 70 && !s.saveAudio)
        #expect(b.dtmf && b.speech == NCCOAction.Input.Speech())
        #expect(b.speech?.endOnSilence == 2 && b.speech?.startTimeout == 10 && b.speech?.maxDuration == 60 && b.speech?.language == "en-US")
        #expect(c.dtmf && c.speech != nil)
        #expect(d.dtmf && d.speech == nil)
    }

    @Test("the older input form keeps dtmf options at the top level")
    func legacyInput() throws {
        let ncco = try parse(#"[{"action":"input","maxDigits":2,"timeOut":1,"submitOnHash":true}]"#)
        guard case .input(let i) = ncco.actions[0] else { Issue.record("not input"); return }
        #expect(i.maxDigits == 2 && i.timeOut == 1 && i.submitOnHash)
    }

    @Test("invalid documents are refused with the action index, the field and the reason", arguments: [
        (#"{"action":"talk"}"#, nil, nil, "ncco-not-an-array"),
        ("[]", nil, nil, "ncco-empty"),
        ("[1]", 0, nil, "ncco-action-not-an-object"),
        (#"[{"text":"x"}]"#, 0, "action", "ncco-missing-field"),
        (#"[{"action":"dance"}]"#, 0, "action", "ncco-unknown-action"),
        (#"[{"action":"talk","text":"a"},{"action":"talk"}]"#, 1, "text", "ncco-missing-field"),
        (#"[{"action":"talk","text":5}]"#, 0, "text", "ncco-wrong-type"),
        (#"[{"action":"talk","text":"a","loop":101}]"#, 0, "loop", "ncco-out-of-range"),
        (#"[{"action":"talk","text":"a","level":1.5}]"#, 0, "level", "ncco-out-of-range"),
        (#"[{"action":"talk","text":"a","bargeIn":"yes"}]"#, 0, "bargeIn", "ncco-wrong-type"),
        (#"[{"action":"talk","text":"a","langauge":"en-US"}]"#, 0, "langauge", "ncco-unknown-field"),
        (#"[{"action":"stream"}]"#, 0, "streamUrl", "ncco-missing-field"),
        (#"[{"action":"stream","streamUrl":["ftp://x/y"]}]"#, 0, "streamUrl", "ncco-invalid-value"),
        (#"[{"action":"input","dtmf":{"maxDigits":21}}]"#, 0, "dtmf.maxDigits", "ncco-out-of-range"),
        (#"[{"action":"input","dtmf":{"timeOut":11}}]"#, 0, "dtmf.timeOut", "ncco-out-of-range"),
        (#"[{"action":"input","speech":{"saveAudio":"yes"}}]"#, 0, "speech.saveAudio", "ncco-wrong-type"),
        (#"[{"action":"input","type":["speech"],"speech":{"endOnSilence":0.2}}]"#, 0, "speech.endOnSilence", "ncco-out-of-range"),
        (#"[{"action":"input","type":["speech"],"speech":{"startTimeout":61}}]"#, 0, "speech.startTimeout", "ncco-out-of-range"),
        (#"[{"action":"input","type":["speech"],"speech":{"context":"sales"}}]"#, 0, "speech.context", "ncco-wrong-type"),
        (#"[{"action":"input","type":["speech"],"speech":{"uuid":["leg-1","leg-2"]}}]"#, 0, "speech.uuid", "ncco-wrong-type"),
        (#"[{"action":"wait","timeout":"5"}]"#, 0, "timeout", "ncco-wrong-type"),
        (#"[{"action":"connect","endpoint":[{"type":"phone","number":"14155550100","shaken":"a\r\nVia: x"}]}]"#, 0, "endpoint[0].shaken", "ncco-invalid-value"),
        (#"[{"action":"input","type":["dtmf"],"mode":"later"}]"#, 0, "mode", "ncco-invalid-value"),
        (#"[{"action":"input","type":["dtmf","speech"],"mode":"asynchronous"}]"#, 0, "type", "ncco-invalid-value"),
        (#"[{"action":"input","type":["dtmf"],"mode":"asynchronous","dtmf":{"maxDigits":3}}]"#, 0, "dtmf", "ncco-invalid-value"),
        (#"[{"action":"input","type":["dtmf"],"mode":"asynchronous","timeOut":3}]"#, 0, "timeOut", "ncco-invalid-value"),
        (#"[{"action":"wait","timeout":5,"bargeIn":true}]"#, 0, "bargeIn", "ncco-unknown-field"),
        (#"[{"action":"input","type":["speech"],"speech":{"context":[""]}}]"#, 0, "speech.context[0]", "ncco-wrong-type"),
        (#"[{"action":"input","type":["speech"],"speech":{"langauge":"en-US"}}]"#, 0, "speech.langauge", "ncco-unknown-field"),
        (#"[{"action":"input","type":["speech"],"speech":[]}]"#, 0, "speech", "ncco-wrong-type"),
        (#"[{"action":"input","type":["dtmf"],"speech":{}}]"#, 0, "speech", "ncco-invalid-value"),
        (#"[{"action":"input","eventMethod":"PUT","eventUrl":["http://h/x"]}]"#, 0, "eventMethod", "ncco-invalid-value"),
        (#"[{"action":"record","format":"flac"}]"#, 0, "format", "ncco-invalid-value"),
        (#"[{"action":"record","channels":2}]"#, 0, "channels", "ncco-invalid-value"),
        (#"[{"action":"record","endOnKey":"x"}]"#, 0, "endOnKey", "ncco-invalid-value"),
        (#"[{"action":"record","timeOut":2}]"#, 0, "timeOut", "ncco-out-of-range"),
        (#"[{"action":"conversation"}]"#, 0, "name", "ncco-missing-field"),
        (#"[{"action":"conversation","name":"r","canSpeak":"all"}]"#, 0, "canSpeak", "ncco-wrong-type"),
        (#"[{"action":"connect"}]"#, 0, "endpoint", "ncco-missing-field"),
        (#"[{"action":"connect","endpoint":[]}]"#, 0, "endpoint", "ncco-out-of-range"),
        (#"[{"action":"connect","endpoint":[{"type":"fax"}]}]"#, 0, "endpoint[0].type", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"phone","number":"12"}]}]"#, 0, "endpoint[0].number", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"sip","uri":"http://x"}]}]"#, 0, "endpoint[0].uri", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"sip","uri":"sip:@"}]}]"#, 0, "endpoint[0].uri", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"sip","uri":"sip:pbx@10.0.0.1","standardHeaders":{"Diversion":"x"}}]}]"#, 0, "endpoint[0].standardHeaders.Diversion", "ncco-unsupported-option"),
        (#"[{"action":"connect","endpoint":[{"type":"sip","uri":"sip:pbx@10.0.0.1","standardHeaders":{"User-to-User":7}}]}]"#, 0, "endpoint[0].standardHeaders.User-to-User", "ncco-wrong-type"),
        (#"[{"action":"connect","endpoint":[{"type":"sip","uri":"sip:pbx@10.0.0.1;transport=sctp"}]}]"#, 0, "endpoint[0].uri", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"sip","uri":"sip:pbx@10.0.0.1","headers":{"a b":"1"}}]}]"#, 0, "endpoint[0].headers.a b", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"sip","uri":"sip:pbx@10.0.0.1","headers":{"Note":"a\r\nVia: x"}}]}]"#, 0, "endpoint[0].headers.Note", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"app"}]}]"#, 0, "endpoint[0].user", "ncco-missing-field"),
        (#"[{"action":"connect","endpoint":[{"type":"phone","number":"14155550100","onAnswer":"http://h/w"}]}]"#, 0, "endpoint[0].onAnswer", "ncco-wrong-type"),
        (#"[{"action":"connect","endpoint":[{"type":"phone","number":"14155550100","onAnswer":{}}]}]"#, 0, "endpoint[0].onAnswer.url", "ncco-missing-field"),
        (#"[{"action":"connect","endpoint":[{"type":"phone","number":"14155550100","onAnswer":{"url":"ftp://h/w"}}]}]"#, 0, "endpoint[0].onAnswer.url", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"phone","number":"14155550100","onAnswer":{"url":"http://h/w","tone":"x"}}]}]"#, 0, "endpoint[0].onAnswer.tone", "ncco-unknown-field"),
        (#"[{"action":"connect","endpoint":[{"type":"sip","uri":"sip:a@h","onAnswer":{"url":"http://h/w"}}]}]"#, 0, "endpoint[0].onAnswer", "ncco-unknown-field"),
        (#"[{"action":"connect","endpoint":[{"type":"websocket","uri":"ws://h/x","authorization":{"type":"basic"}}]}]"#, 0, "endpoint[0].authorization.type", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"websocket","uri":"ws://h/x","authorization":{"type":"custom"}}]}]"#, 0, "endpoint[0].authorization.value", "ncco-missing-field"),
        (#"[{"action":"connect","endpoint":[{"type":"websocket","uri":"ws://h/x","content-type":"audio/pcm"}]}]"#, 0, "endpoint[0].content-type", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"app","user":"a"}],"timeout":2}]"#, 0, "timeout", "ncco-out-of-range"),
        (#"[{"action":"connect","endpoint":[{"type":"app","user":"a"}],"limit":7201}]"#, 0, "limit", "ncco-out-of-range"),
        (#"[{"action":"connect","endpoint":[{"type":"app","user":"a"}],"eventType":"async"}]"#, 0, "eventType", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"app","user":"a"}],"machineDetection":"hangup"}]"#, 0, "machineDetection", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"phone","number":"14155550100"}],"machineDetection":"drop"}]"#, 0, "machineDetection", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"phone","number":"14155550100"}],"advancedMachineDetection":{"mode":"x"}}]"#, 0,
         "advancedMachineDetection.mode", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"phone","number":"14155550100"}],"advancedMachineDetection":{"beep_timeout":44}}]"#, 0,
         "advancedMachineDetection.beep_timeout", "ncco-invalid-value"),
        (#"[{"action":"connect","endpoint":[{"type":"app","user":"a"}],"from":"1415555","randomFromNumber":true}]"#, 0, "randomFromNumber", "ncco-invalid-value"),
        (#"[{"action":"notify","eventUrl":["http://h/x"]}]"#, 0, "payload", "ncco-missing-field"),
        (#"[{"action":"notify","payload":{}}]"#, 0, "eventUrl", "ncco-missing-field"),
        (#"[{"action":"notify","payload":[1],"eventUrl":["http://h/x"]}]"#, 0, "payload", "ncco-wrong-type"),
    ] as [(String, Int?, String?, String)])
    func invalid(document: String, index: Int?, field: String?, code: String) {
        do {
            _ = try parse(document)
            Issue.record("accepted: \(document)")
        } catch {
            #expect(error.index == index, "\(error)")
            #expect(error.field == field, "\(error)")
            #expect(error.code == code, "\(error)")
        }
    }

    @Test("connect's machine detection: the standard option, the advanced object with its defaults, the advanced one winning")
    func machineDetection() throws {
        func detection(_ options: String) throws -> MachineDetection? {
            let ncco = try NCCO.parse(Array((#"[{"action":"connect","endpoint":[{"type":"phone","number":"14155550100"}]"# + options + "}]").utf8))
            guard case .connect(let c) = ncco.actions[0] else { return nil }
            return c.machineDetection
        }
        #expect(try detection("") == nil)
        #expect(try detection(#","machineDetection":"hangup""#) == MachineDetection(behavior: .hangup, mode: .standard))
        #expect(try detection(#","advancedMachineDetection":{}"#) == MachineDetection(behavior: .continue, mode: .default, beepTimeout: 45))
        #expect(try detection(#","machineDetection":"continue","advancedMachineDetection":{"behavior":"hangup","mode":"detect_beep","beep_timeout":60}"#)
            == MachineDetection(behavior: .hangup, mode: .detectBeep, beepTimeout: 60))
    }

    @Test("the error text says where and what")
    func errorText() {
        #expect(throws: NCCOError(index: 1, action: "input", field: "dtmf.maxDigits", .outOfRange("between 1 and 20"))) {
            try parse(#"[{"action":"talk","text":"a"},{"action":"input","dtmf":{"maxDigits":0}}]"#)
        }
        let e = NCCOError(index: 1, action: "input", field: "dtmf.maxDigits", .outOfRange("between 1 and 20"))
        #expect(e.description == "action 1 (input): dtmf.maxDigits must be between 1 and 20")
    }

    @Test("size limits: too many actions, too long a text, too large a payload")
    func limits() {
        let many = "[" + Array(repeating: #"{"action":"talk","text":"a"}"#, count: 101).joined(separator: ",") + "]"
        #expect(throws: NCCOError(.tooManyActions(limit: 100))) { try parse(many) }
        let long = #"[{"action":"talk","text":""# + String(repeating: "a", count: 1501) + #""}]"#
        #expect((try? parse(long)) == nil)
        let big = #"[{"action":"notify","eventUrl":["http://h/x"],"payload":{"k":""# + String(repeating: "a", count: 9000) + #""}}]"#
        #expect((try? parse(big)) == nil)
    }

    @Test("truncations of a valid document never crash and are refused or parse")
    func truncations() {
        let text = Array(#"[{"action":"connect","endpoint":[{"type":"phone","number":"14155550100"}]},{"action":"talk","text":"hi"}]"#.utf8)
        for n in 0..<text.count { _ = try? NCCO.parse(Array(text[..<n])) }
    }
}
