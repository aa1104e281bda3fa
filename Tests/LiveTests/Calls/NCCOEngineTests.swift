import Foundation
import Testing
import Wire
@testable import Live

/// The NCCO engine driven by hand: time is a `Date` the test moves, media and webhooks are the steps it returns.
@Suite("NCCO engine")
struct NCCOEngineTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func document(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }

    @Test("actions run one at a time, in order, and the leg hangs up after the last")
    func ordering() throws {
        var e = NCCOEngine()
        let steps = e.load(try document(#"[{"action":"talk","text":"one"},{"action":"stream","streamUrl":["http://h/a.mp3"]}]"#), now: t0)
        #expect(steps == [.media(.say(.init(text: "one")))])
        #expect(e.mediaFinished(now: t0) == [.media(.play(.init(url: "http://h/a.mp3")))])
        #expect(e.mediaFinished(now: t0) == [.hangup])
        #expect(e.isFinished)
        #expect(e.mediaFinished(now: t0) == [])
    }

    @Test("wait pauses the NCCO for its timeout (10 s by default; keys pressed meanwhile do nothing), then it goes on")
    func wait() throws {
        var e = NCCOEngine()
        #expect(e.load(try document(#"[{"action":"wait","timeout":2.5},{"action":"wait"},{"action":"talk","text":"after"}]"#), now: t0) == [])
        #expect(e.phase == .waiting && e.deadline == t0.addingTimeInterval(2.5))
        #expect(e.digits("5", now: t0.addingTimeInterval(1)) == [])
        #expect(e.tick(now: t0.addingTimeInterval(2.4)) == [])
        #expect(e.tick(now: t0.addingTimeInterval(2.5)) == [])
        #expect(e.phase == .waiting && e.deadline == t0.addingTimeInterval(12.5))
        #expect(e.tick(now: t0.addingTimeInterval(12.5)) == [.media(.say(.init(text: "after")))])
        // A transfer while waiting replaces the rest at once.
        _ = e.load(try document(#"[{"action":"wait","timeout":60},{"action":"talk","text":"never"}]"#), now: t0)
        #expect(e.load(try document(#"[{"action":"talk","text":"now"}]"#), now: t0.addingTimeInterval(1)) == [.media(.say(.init(text: "now")))])
        #expect(e.tick(now: t0.addingTimeInterval(61)) == [])
    }

    @Test("an asynchronous input: the NCCO goes on at once; each key is sent by itself, to the registered listener while there is one, beside what the running action does with it")
    func asynchronousInput() throws {
        var e = NCCOEngine()
        let keys = NCCOAction.Callback(url: "http://h/keys"), listener = NCCOAction.Callback(url: "http://h/listener")
        func key(_ d: String, _ to: NCCOAction.Callback?) -> NCCOStep {
            .request(to, payload: ["dtmf": ["digits": .string(d), "timed_out": false]], awaitsAnswer: false)
        }
        #expect(e.digits("1", now: t0) == [], "no input yet")
        let steps = e.load(try document(#"[{"action":"input","type":["dtmf"],"mode":"asynchronous","eventUrl":["http://h/keys"]},{"action":"talk","text":"menu"},{"action":"input","type":["dtmf"],"dtmf":{"maxDigits":1},"eventUrl":["http://h/in"]}]"#), now: t0)
        #expect(steps.count == 2 && steps.last == .media(.say(.init(text: "menu"))))
        guard case .media(.collectDigits(let asynchronous)) = steps.first else { Issue.record("no key collection: \(steps)"); return }
        #expect(asynchronous.asynchronous && asynchronous.eventURL == keys)
        #expect(e.digits("12", now: t0) == [key("1", keys), key("2", keys)], "the talk has no bargeIn: nothing else")
        e.listenForKeys(listener)
        #expect(e.digits("3", now: t0) == [key("3", listener)])
        e.listenForKeys(nil)
        _ = e.mediaFinished(now: t0)
        #expect(e.phase == .collecting)
        let both = e.digits("4", now: t0)
        #expect(both.first == key("4", keys))
        #expect(both.last == .request(.init(url: "http://h/in"), payload: ["dtmf": ["digits": "4", "timed_out": false], "speech": ["results": []]], awaitsAnswer: true))
        // The input's answer replaces the NCCO; keys still go out one by one.
        _ = e.callbackAnswered(try document(#"[{"action":"conversation","name":"room"}]"#), now: t0)
        #expect(e.digits("#", now: t0) == [key("#", keys)])
    }

    @Test("a bad document runs nothing: one error naming action and field, then hangup")
    func invalidDocument() throws {
        var e = NCCOEngine()
        let steps = e.load(try document(#"[{"action":"talk","text":"fine"},{"action":"input","dtmf":{"maxDigits":50}}]"#), now: t0)
        #expect(steps == [.error("action 1 (input): dtmf.maxDigits must be between 1 and 20", code: "ncco-out-of-range"), .hangup])
    }

    @Test("input submits at maxDigits; the NCCO its URL answers replaces the rest")
    func inputReplaces() throws {
        var e = NCCOEngine()
        _ = e.load(try document(#"[{"action":"input","dtmf":{"maxDigits":2},"eventUrl":["http://h/in"]},{"action":"talk","text":"never"}]"#), now: t0)
        #expect(e.phase == .collecting)
        #expect(e.digits("1", now: t0) == [])
        let submitted = e.digits("2", now: t0)
        #expect(submitted.last == .request(.init(url: "http://h/in"), payload: ["dtmf": ["digits": "12", "timed_out": false], "speech": ["results": []]],
                                            awaitsAnswer: true))
        let next = e.callbackAnswered(try document(#"[{"action":"talk","text":"you pressed 12"}]"#), now: t0)
        #expect(next == [.media(.say(.init(text: "you pressed 12")))])
        #expect(e.mediaFinished(now: t0) == [.hangup])
    }

    @Test("input times out after timeOut seconds of silence, the clock restarting at each digit")
    func inputTimeout() throws {
        var e = NCCOEngine()
        _ = e.load(try document(#"[{"action":"input","dtmf":{"timeOut":5,"maxDigits":4}},{"action":"talk","text":"after"}]"#), now: t0)
        #expect(e.deadline == t0.addingTimeInterval(5))
        #expect(e.tick(now: t0.addingTimeInterval(4)) == [])
        _ = e.digits("7", now: t0.addingTimeInterval(4))
        #expect(e.tick(now: t0.addingTimeInterval(8)) == [])
        let steps = e.tick(now: t0.addingTimeInterval(9))
        #expect(steps.last == .request(nil, payload: ["dtmf": ["digits": "7", "timed_out": true], "speech": ["results": []]], awaitsAnswer: true))
        // No NCCO in the answer: the rest runs.
        #expect(e.callbackAnswered(nil, now: t0.addingTimeInterval(9)) == [.media(.say(.init(text: "after")))])
    }

    @Test("submitOnHash sends the digits before the hash")
    func submitOnHash() throws {
        var e = NCCOEngine()
        _ = e.load(try document(#"[{"action":"input","dtmf":{"submitOnHash":true,"maxDigits":10}}]"#), now: t0)
        let steps = e.digits("45#9", now: t0)
        #expect(steps.last == .request(nil, payload: ["dtmf": ["digits": "45", "timed_out": false], "speech": ["results": []]], awaitsAnswer: true))
    }

    @Test("barge-in stops the talk and hands the digit to the input after it; without it digits are ignored")
    func bargeIn() throws {
        var e = NCCOEngine()
        _ = e.load(try document(#"[{"action":"talk","text":"menu","bargeIn":true},{"action":"input","dtmf":{"maxDigits":1}}]"#), now: t0)
        let steps = e.digits("3", now: t0)
        #expect(steps.first == .stopMedia)
        #expect(steps.last == .request(nil, payload: ["dtmf": ["digits": "3", "timed_out": false], "speech": ["results": []]], awaitsAnswer: true))
        var quiet = NCCOEngine()
        _ = quiet.load(try document(#"[{"action":"talk","text":"menu"},{"action":"input"}]"#), now: t0)
        #expect(quiet.digits("3", now: t0) == [])
    }

    @Test("speech input: what media heard is sent to the input's URL in the Voice API's shape; keys are not collected")
    func speechInput() throws {
        var e = NCCOEngine()
        let steps = e.load(try document(#"[{"action":"input","type":["speech"],"speech":{"context":["sales"],"startTimeout":5,"maxDuration":20},"eventUrl":["http://h/in"]},{"action":"talk","text":"after"}]"#), now: t0)
        var speech = NCCOAction.Input.Speech()
        speech.context = ["sales"]
        speech.startTimeout = 5
        speech.maxDuration = 20
        #expect(steps == [.media(.collectSpeech(speech))])
        // Its guard: the speech's own limits and the recognition's grace.
        #expect(e.deadline == t0.addingTimeInterval(35))
        #expect(e.digits("1", now: t0) == [])
        let outcome = SpeechOutcome(timeoutReason: "end_on_silence_timeout", results: [.init(text: "sales", confidence: 0.5)])
        let submitted = e.speechFinished(outcome, now: t0.addingTimeInterval(3))
        #expect(submitted == [.stopMedia, .request(.init(url: "http://h/in"), payload: [
            "dtmf": ["digits": "", "timed_out": false],
            "speech": ["timeout_reason": "end_on_silence_timeout", "results": [["text": "sales", "confidence": "0.500000"]]]], awaitsAnswer: true)])
        // A late second report changes nothing.
        #expect(e.speechFinished(outcome, now: t0.addingTimeInterval(4)) == [])
        #expect(e.callbackAnswered(nil, now: t0.addingTimeInterval(4)) == [.media(.say(.init(text: "after")))])
    }

    @Test("dtmf and speech: a key stops the listening and makes it a keyed input; silence from media ends it unkeyed")
    func speechOrKeys() throws {
        var keyed = NCCOEngine()
        let started = keyed.load(try document(#"[{"action":"input","type":["dtmf","speech"],"dtmf":{"maxDigits":2,"timeOut":4}}]"#), now: t0)
        #expect(started.count == 2 && started.first == .media(.collectDigits(NCCOEngineTests.input(maxDigits: 2, timeOut: 4))))
        #expect(keyed.digits("5", now: t0) == [.stopMedia])
        #expect(keyed.deadline == t0.addingTimeInterval(4))
        #expect(keyed.speechFinished(SpeechOutcome(timeoutReason: "start_timeout"), now: t0) == [])
        #expect(keyed.digits("6", now: t0).last == .request(nil, payload: ["dtmf": ["digits": "56", "timed_out": false], "speech": ["results": []]], awaitsAnswer: true))

        var silent = NCCOEngine()
        _ = silent.load(try document(#"[{"action":"input","type":["dtmf","speech"]}]"#), now: t0)
        #expect(silent.speechFinished(SpeechOutcome(timeoutReason: "start_timeout"), now: t0).last
                == .request(nil, payload: ["dtmf": ["digits": "", "timed_out": false], "speech": ["timeout_reason": "start_timeout", "results": []]], awaitsAnswer: true))

        // Media never reports: the guard sends the input with an error.
        var lost = NCCOEngine()
        _ = lost.load(try document(#"[{"action":"input","type":["speech"]}]"#), now: t0)
        #expect(lost.tick(now: t0.addingTimeInterval(79)) == [])
        #expect(lost.tick(now: t0.addingTimeInterval(80)).last == .request(nil, payload: [
            "dtmf": ["digits": "", "timed_out": false], "speech": ["results": [], "error": "no result from speech recognition"]], awaitsAnswer: true))
    }

    @Test("a prompt with bargeIn before a speech input: the input listens from the prompt's start, the caller's words end the prompt")
    func speechBargeIn() throws {
        let ncco = #"[{"action":"talk","text":"Say sales or support","bargeIn":true},{"action":"input","type":["speech"]}]"#
        var e = NCCOEngine()
        let started = e.load(try document(ncco), now: t0)
        var prompt = NCCOAction.Talk(text: "Say sales or support")
        prompt.bargeIn = true
        #expect(started == [.media(.say(prompt)), .media(.collectSpeech(.init(), bargeIn: true))])
        // The caller speaks over the prompt (media stopped it): the input takes over, listening already.
        #expect(e.speechStarted(now: t0.addingTimeInterval(1)) == [])
        #expect(e.phase == .collecting)
        let heard = SpeechOutcome(timeoutReason: "end_on_silence_timeout", results: [.init(text: "sales", confidence: 1)])
        #expect(e.speechFinished(heard, now: t0.addingTimeInterval(3)).last == .request(nil, payload: [
            "dtmf": ["digits": "", "timed_out": false],
            "speech": ["timeout_reason": "end_on_silence_timeout", "results": [["text": "sales", "confidence": "1.000000"]]]], awaitsAnswer: true))

        // The prompt ends first: the input goes on with the listening it has.
        var quiet = NCCOEngine()
        _ = quiet.load(try document(ncco), now: t0)
        #expect(quiet.mediaFinished(now: t0.addingTimeInterval(2)) == [])
        #expect(quiet.phase == .collecting)
        // Nothing said while the prompt played but a start timeout: the input listens afresh.
        var long = NCCOEngine()
        _ = long.load(try document(ncco), now: t0)
        #expect(long.speechFinished(SpeechOutcome(timeoutReason: "start_timeout"), now: t0.addingTimeInterval(10)) == [])
        #expect(long.mediaFinished(now: t0.addingTimeInterval(12)) == [.media(.collectSpeech(.init()))])
        // The utterance's report overtakes its onset's: the input takes it at once.
        var crossed = NCCOEngine()
        _ = crossed.load(try document(ncco), now: t0)
        if case .request? = crossed.speechFinished(heard, now: t0.addingTimeInterval(3)).last {} else { Issue.record("the input was not sent") }
        #expect(crossed.speechStarted(now: t0.addingTimeInterval(3)) == [])
        // A key during the prompt stops it and the listening; the input listens afresh and then collects the key.
        var keyed = NCCOEngine()
        _ = keyed.load(try document(#"[{"action":"talk","text":"Menu","bargeIn":true},{"action":"input","type":["speech","dtmf"]}]"#), now: t0)
        let steps = keyed.digits("1", now: t0)
        #expect(steps.first == .stopMedia && steps.contains(.media(.collectSpeech(.init()))))
        // Without bargeIn nothing listens early.
        var plain = NCCOEngine()
        #expect(plain.load(try document(#"[{"action":"talk","text":"Menu"},{"action":"input","type":["speech"]}]"#), now: t0).count == 1)
    }

    static func input(maxDigits: Int, timeOut: Int) -> NCCOAction.Input {
        var i = NCCOAction.Input()
        i.maxDigits = maxDigits
        i.timeOut = timeOut
        i.speech = NCCOAction.Input.Speech()
        return i
    }

    @Test("notify waits for its answer: an NCCO replaces the rest, an invalid one ends the call")
    func notify() throws {
        var e = NCCOEngine()
        let first = e.load(try document(#"[{"action":"notify","payload":{"n":1},"eventUrl":["http://h/n"]},{"action":"talk","text":"rest"}]"#), now: t0)
        #expect(first == [.request(.init(url: "http://h/n"), payload: ["n": 1], awaitsAnswer: true)])
        #expect(e.mediaFinished(now: t0) == [])
        let bad = e.callbackAnswered(try document(#"[{"action":"talk"}]"#), now: t0)
        #expect(bad == [.error("action 0 (talk): text is required", code: "ncco-missing-field"), .hangup])
    }

    @Test("record runs beside the next action")
    func recordInParallel() throws {
        var e = NCCOEngine()
        let steps = e.load(try document(#"[{"action":"record"},{"action":"talk","text":"go"}]"#), now: t0)
        #expect(steps == [.media(.startRecording(.init())), .media(.say(.init(text: "go")))])
    }

    @Test("a record with a condition that ends it holds the NCCO until the recording ends; its key stops it")
    func recordWithACondition() throws {
        var e = NCCOEngine()
        let doc = try document(##"[{"action":"talk","text":"after the tone"},{"action":"record","endOnKey":"#","beepStart":true},{"action":"talk","text":"thanks"}]"##)
        #expect(e.load(doc, now: t0).count == 1)
        guard case .media(.startRecording(let r))? = e.mediaFinished(now: t0).first else { Issue.record("no record"); return }
        #expect(r.isSynchronous && r.endOnKey == "#" && e.phase == .recording(endOnKey: "#"))
        // Other keys and the end of some other media change nothing; the key asks the recorder to stop.
        #expect(e.digits("12", now: t0) == [])
        #expect(e.mediaFinished(now: t0) == [])
        #expect(e.digits("3#", now: t0) == [.media(.stopRecording)])
        #expect(e.phase == .recording(endOnKey: "#"))
        // The next action starts once the recorder has finished the file.
        #expect(e.recordingFinished(now: t0) == [.media(.say(.init(text: "thanks")))])
        #expect(e.recordingFinished(now: t0) == [])

        // endOnSilence or timeOut alone also hold it; should the recorder never report, the NCCO goes on after its time-out.
        var timed = NCCOEngine()
        #expect(timed.load(try document(#"[{"action":"record","timeOut":5},{"action":"talk","text":"go"}]"#), now: t0).count == 1)
        #expect(timed.tick(now: t0.addingTimeInterval(6)) == [])
        #expect(timed.tick(now: t0.addingTimeInterval(Double(5 + NCCOEngine.recordingGrace))) ==
                [.media(.stopRecording), .media(.say(.init(text: "go")))])

        // A recorder that cannot start: the error, and the NCCO goes on.
        var failing = NCCOEngine()
        _ = failing.load(try document(#"[{"action":"record","endOnSilence":3},{"action":"talk","text":"go"}]"#), now: t0)
        #expect(failing.mediaFailed("record: no mixer", now: t0) ==
                [.error("record: no mixer", code: "media-unavailable"), .media(.say(.init(text: "go")))])

        // A transfer while it records ends the recording first.
        var moved = NCCOEngine()
        _ = moved.load(try document(#"[{"action":"record","endOnSilence":3}]"#), now: t0)
        #expect(moved.load(try document(#"[{"action":"talk","text":"new"}]"#), now: t0) ==
                [.media(.stopRecording), .media(.say(.init(text: "new")))])
    }

    @Test("conversation holds the leg until the conversation ends (endOnExit elsewhere)")
    func conversation() throws {
        var e = NCCOEngine()
        let steps = e.load(try document(#"[{"action":"conversation","name":"room","endOnExit":true}]"#), now: t0)
        guard case .joinConversation(let c) = steps.first else { Issue.record("no join"); return }
        #expect(c.name == "room" && c.endOnExit)
        #expect(e.phase == .inConversation(endOnExit: true))
        #expect(e.tick(now: t0.addingTimeInterval(3600)) == [])
        #expect(e.conversationEnded(now: t0) == [.hangup])
    }

    @Test("connect: a failed dial goes on; an answered one holds until the bridge ends; no answer in time is an error")
    func connect() throws {
        let doc = try document(#"[{"action":"connect","timeout":10,"endpoint":[{"type":"app","user":"bob"}]},{"action":"talk","text":"after"}]"#)
        var failed = NCCOEngine()
        guard case .dial(let c)? = failed.load(doc, now: t0).first else { Issue.record("no dial"); return }
        #expect(c.endpoint == .app(user: "bob") && c.timeout == 10)
        #expect(failed.dialFailed(now: t0) == [.media(.say(.init(text: "after")))])

        var bridged = NCCOEngine()
        _ = bridged.load(doc, now: t0)
        #expect(bridged.dialAnswered(now: t0.addingTimeInterval(2)) == [])
        #expect(bridged.tick(now: t0.addingTimeInterval(60)) == [])
        #expect(bridged.bridgeEnded(now: t0.addingTimeInterval(60)) == [.media(.say(.init(text: "after")))])

        var unanswered = NCCOEngine()
        _ = unanswered.load(doc, now: t0)
        #expect(unanswered.tick(now: t0.addingTimeInterval(9)) == [])
        let late = unanswered.tick(now: t0.addingTimeInterval(10))
        #expect(late.first == .error("connect: no answer within 10 s", code: "connect-timeout"))
        #expect(late.last == .media(.say(.init(text: "after"))))
    }

    @Test("synchronous connect: an NCCO answering the dialled leg's failure, timeout or disconnection replaces the rest; no NCCO goes on")
    func synchronousConnect() throws {
        let doc = try document(#"[{"action":"connect","timeout":10,"eventType":"synchronous","eventUrl":["http://h/e"],"endpoint":[{"type":"websocket","uri":"ws://h/s"}]},{"action":"talk","text":"after"}]"#)
        let fallback: JSONValue = [["action": "talk", "text": "fallback"]]
        var failed = NCCOEngine()
        _ = failed.load(doc, now: t0)
        #expect(failed.phase == .dialing(synchronous: true))
        #expect(failed.dialFailed(now: t0, answer: fallback) == [.media(.say(.init(text: "fallback")))])
        #expect(failed.mediaFinished(now: t0) == [.hangup], "the fallback replaced the rest")

        var plain = NCCOEngine()
        _ = plain.load(doc, now: t0)
        #expect(plain.dialFailed(now: t0, answer: ["status": "ok"]) == [.media(.say(.init(text: "after")))], "not an NCCO: the NCCO goes on")

        // No answer in time: the error, then the NCCO waits for the event URL's answer to the leg's `timeout`.
        var unanswered = NCCOEngine()
        _ = unanswered.load(doc, now: t0)
        #expect(unanswered.tick(now: t0.addingTimeInterval(10)) == [.error("connect: no answer within 10 s", code: "connect-timeout")])
        #expect(unanswered.tick(now: t0.addingTimeInterval(30)) == [])
        #expect(unanswered.dialFailed(now: t0.addingTimeInterval(11), answer: fallback) == [.media(.say(.init(text: "fallback")))])

        var disconnected = NCCOEngine()
        _ = disconnected.load(doc, now: t0)
        _ = disconnected.dialAnswered(now: t0)
        #expect(disconnected.bridgeEnded(now: t0, answer: fallback) == [.media(.say(.init(text: "fallback")))])
        var bad = NCCOEngine()
        _ = bad.load(doc, now: t0)
        _ = bad.dialAnswered(now: t0)
        #expect(bad.bridgeEnded(now: t0, answer: [["action": "dance"]]).last == .hangup, "a bad fallback is refused whole, as any NCCO")
    }

    @Test("connect with onAnswer: its ringbackTone plays until the answered leg joins; its answer stops the connect's timeout")
    func onAnswer() throws {
        let doc = try document(#"[{"action":"connect","timeout":10,"endpoint":[{"type":"phone","number":"14155550100","onAnswer":{"url":"http://h/w","ringbackTone":"http://h/ring.wav"}}]},{"action":"talk","text":"after"}]"#)
        var ringback = NCCOAction.Stream(url: "http://h/ring.wav")
        ringback.loop = 0
        var e = NCCOEngine()
        #expect(e.load(doc, now: t0).first == .media(.play(ringback)))
        e.calleeAnswered()
        #expect(e.tick(now: t0.addingTimeInterval(30)) == [], "answered: no timeout while the whisper runs")
        #expect(e.dialAnswered(now: t0.addingTimeInterval(31)) == [.stopMedia], "joined: the ringback stops")
        #expect(e.bridgeEnded(now: t0.addingTimeInterval(40)) == [.media(.say(.init(text: "after")))])
    }

    @Test("connect with a ringbackTone: the caller hears it on repeat while the endpoint rings, and not after")
    func ringback() throws {
        let doc = try document(#"[{"action":"connect","timeout":10,"ringbackTone":"http://h/ring.wav","endpoint":[{"type":"app","user":"bob"}]},{"action":"talk","text":"after"}]"#)
        var ringback = NCCOAction.Stream(url: "http://h/ring.wav")
        ringback.loop = 0
        var answered = NCCOEngine()
        let steps = answered.load(doc, now: t0)
        #expect(steps.count == 2 && steps.first == .media(.play(ringback)))
        // The tone's own end (it cannot end, it loops) changes nothing; the answer stops it.
        #expect(answered.mediaFinished(now: t0) == [])
        #expect(answered.dialAnswered(now: t0) == [.stopMedia])
        #expect(answered.bridgeEnded(now: t0) == [.media(.say(.init(text: "after")))])

        var failed = NCCOEngine()
        _ = failed.load(doc, now: t0)
        #expect(failed.dialFailed(now: t0) == [.stopMedia, .media(.say(.init(text: "after")))])
        var unanswered = NCCOEngine()
        _ = unanswered.load(doc, now: t0)
        #expect(unanswered.tick(now: t0.addingTimeInterval(10)).first == .stopMedia)
        var hungUp = NCCOEngine()
        _ = hungUp.load(doc, now: t0)
        #expect(hungUp.stop() == [.stopMedia])
    }

    @Test("media that cannot run reports an error and the NCCO goes on")
    func mediaUnavailable() throws {
        var e = NCCOEngine()
        _ = e.load(try document(#"[{"action":"talk","text":"a"},{"action":"notify","payload":{},"eventUrl":["http://h/n"]}]"#), now: t0)
        let steps = e.mediaFailed("talk: no mixer", now: t0)
        #expect(steps == [.error("talk: no mixer", code: "media-unavailable"), .request(.init(url: "http://h/n"), payload: [:], awaitsAnswer: true)])
    }

    @Test("a transfer replaces what runs: the playing talk stops first")
    func transfer() throws {
        var e = NCCOEngine()
        _ = e.load(try document(#"[{"action":"talk","text":"old","loop":0}]"#), now: t0)
        let steps = e.load(try document(#"[{"action":"talk","text":"new"}]"#), now: t0)
        #expect(steps == [.stopMedia, .media(.say(.init(text: "new")))])
    }

    @Test("a hangup from outside stops media and nothing more runs")
    func stop() throws {
        var e = NCCOEngine()
        _ = e.load(try document(#"[{"action":"talk","text":"a"},{"action":"talk","text":"b"}]"#), now: t0)
        #expect(e.stop() == [.stopMedia])
        #expect(e.mediaFinished(now: t0) == [])
        #expect(e.isFinished)
    }
}
