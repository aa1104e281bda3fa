import CAV

/// What every user of libavcodec and libavformat here shares.
enum LibAV {
    /// libav reports a corrupt unit or a refused connection on standard error as well as by its result: the
    /// result is enough (the server's log says what failed).
    static let quiet: Void = av_log_set_level(AV_LOG_QUIET)
}
