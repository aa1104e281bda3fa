// NCCO: any bytes either fail with an NCCOError or give a document whose JSON parses back to the same document.

/// One fuzz input for the NCCO target.
func fuzzNCCODocument(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let ncco = try? NCCO.parse(bytes) else { return 0 }
    precondition(!ncco.actions.isEmpty && ncco.actions.count <= NCCO.Limits.actions, "action count out of bounds")
    let again: NCCO
    do { again = try NCCO.parse(ncco.json) } catch { preconditionFailure("the serialized NCCO is refused: \(error)") }
    precondition(again == ncco, "parse → json → parse changed the document")
    return 0
}
