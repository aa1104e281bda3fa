import Wire

/// One side of a SIP dialog (RFC 3261 §12): identity, sequence numbers, remote target and route
/// set, as a value. Built from the INVITE and the response that established it, either as UAC
/// (route set from Record-Route reversed) or as UAS (Record-Route in order).
public struct Dialog: Hashable, Sendable {
    public enum State: Hashable, Sendable { case early, confirmed, terminated }

    public var id: DialogID
    public var state: State
    public var localAddress: SIPAddress
    public var remoteAddress: SIPAddress
    /// Where in-dialog requests go: the peer's Contact, updated by target refreshes.
    public var remoteTarget: SIPURI
    public var routeSet: [SIPAddress]
    public var localSequence: UInt32
    public var remoteSequence: UInt32?
    public let isCaller: Bool

    /// The UAC's dialog from its request and a 1xx-with-tag or 2xx response (§12.1.2).
    public static func uac(request: SIPMessage, response: SIPMessage) throws(DialogError) -> Dialog {
        do {
            let to = try response.to()
            guard let remoteTag = to.tag, !remoteTag.isEmpty else { throw DialogError.missingTag }
            let from = try request.from()
            guard let localTag = from.tag else { throw DialogError.missingTag }
            guard let contact = try response.contacts().first else { throw DialogError.missingContact }
            let status = response.status ?? 0
            return Dialog(id: DialogID(callID: request.callID ?? "", localTag: localTag, remoteTag: remoteTag),
                          state: status < 200 ? .early : .confirmed, localAddress: from, remoteAddress: to,
                          remoteTarget: contact.uri, routeSet: try response.recordRoutes().reversed(),
                          localSequence: try request.cseq().sequence, remoteSequence: nil, isCaller: true)
        } catch let error as SIPParseError {
            throw .malformed(error)
        } catch let error as DialogError {
            throw error
        } catch {
            throw .missingContact
        }
    }

    /// The UAS's dialog from the request and the tag it puts in its response (§12.1.1).
    public static func uas(request: SIPMessage, localTag: String, confirmed: Bool) throws(DialogError) -> Dialog {
        do {
            let from = try request.from()
            guard let remoteTag = from.tag else { throw DialogError.missingTag }
            var to = try request.to()
            to.tag = localTag
            guard let contact = try request.contacts().first else { throw DialogError.missingContact }
            return Dialog(id: DialogID(callID: request.callID ?? "", localTag: localTag, remoteTag: remoteTag),
                          state: confirmed ? .confirmed : .early, localAddress: to, remoteAddress: from,
                          remoteTarget: contact.uri, routeSet: try request.recordRoutes(), localSequence: 0,
                          remoteSequence: try request.cseq().sequence, isCaller: false)
        } catch let error as SIPParseError {
            throw .malformed(error)
        } catch let error as DialogError {
            throw error
        } catch {
            throw .missingContact
        }
    }

    /// The dialog a message belongs to, seen from our side (`local` is our tag).
    public static func id(of message: SIPMessage, asUAS: Bool) -> DialogID? {
        guard let callID = message.callID, let from = try? message.from(), let to = try? message.to(),
              let fromTag = from.tag, let toTag = to.tag else { return nil }
        // Requests from the peer: our tag is in To. Responses to our requests: our tag is in From.
        return message.isRequest ? DialogID(callID: callID, localTag: toTag, remoteTag: fromTag)
                                 : DialogID(callID: callID, localTag: fromTag, remoteTag: toTag)
    }

    /// Checks and records an in-dialog request's CSeq, and refreshes the target on re-INVITE,
    /// UPDATE (§12.2.2, RFC 3311 §5.2). ACK and CANCEL carry the sequence of what they answer.
    public mutating func receive(_ request: SIPMessage) throws(DialogError) {
        let cseq: SIPCSeq
        do { cseq = try request.cseq() } catch { throw .malformed(error) }
        if request.method != .ack && request.method != .cancel {
            if let last = remoteSequence, cseq.sequence <= last {
                throw .sequenceOutOfOrder(received: cseq.sequence, last: last)
            }
            remoteSequence = cseq.sequence
        }
        if request.method == .invite || request.method == .update, let contact = try? request.contacts().first {
            remoteTarget = contact.uri
        }
        if request.method == .bye { state = .terminated }
    }

    /// Updates the target and route state from a response to our in-dialog or initial request.
    public mutating func update(with response: SIPMessage) {
        guard let status = response.status else { return }
        if status >= 200 && status < 300 {
            if state == .early { state = .confirmed }
            if let method = try? response.cseq().method, method == .invite || method == .update,
               let contact = try? response.contacts().first {
                remoteTarget = contact.uri
            }
        }
    }

    /// A new in-dialog request (§12.2.1.1): next CSeq, Request-URI and Route per loose or strict
    /// routing. The caller adds Via (with a fresh branch), Contact and the body.
    public mutating func makeRequest(_ method: SIPMethod, body: [UInt8] = [], contentType: String? = nil) -> SIPMessage {
        var sequence = localSequence
        if method != .ack && method != .cancel {
            localSequence += 1
            sequence = localSequence
        }
        return request(method, sequence: sequence, body: body, contentType: contentType)
    }

    /// The ACK for a 2xx to the INVITE with `sequence` (§13.2.2.4).
    public func ack(sequence: UInt32, body: [UInt8] = [], contentType: String? = nil) -> SIPMessage {
        request(.ack, sequence: sequence, body: body, contentType: contentType)
    }

    private func request(_ method: SIPMethod, sequence: UInt32, body: [UInt8], contentType: String?) -> SIPMessage {
        var h = SIPHeaders()
        var uri = remoteTarget
        var routes = routeSet
        if let first = routes.first, !first.uri.parameters.contains("lr") {
            // Strict routing (§12.2.1.1): the first route becomes the Request-URI, the target goes last.
            uri = first.uri
            uri.parameters["method"] = nil
            routes.removeFirst()
            routes.append(SIPAddress(uri: remoteTarget))
        }
        for route in routes { h.add(SIPHeaderName.route, route.description) }
        h.add(SIPHeaderName.maxForwards, "70")
        h.add(SIPHeaderName.from, localAddress.description)
        h.add(SIPHeaderName.to, remoteAddress.description)
        h.add(SIPHeaderName.callID, id.callID)
        h.add(SIPHeaderName.cseq, SIPCSeq(sequence, method).description)
        if let contentType, !body.isEmpty { h.add(SIPHeaderName.contentType, contentType) }
        return .request(method, uri, headers: h, body: body)
    }
}
