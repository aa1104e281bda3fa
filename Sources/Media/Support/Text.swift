extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and CR (SDP lines end in CRLF).
    var trimmedSpaces: Substring {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" || c == "\r" || c == "\n" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" || c == "\r" || c == "\n" { s.removeLast() }
        return s
    }
}
