import Foundation

/// A recording's metadata (kept beside its file as JSON).
public struct RecordingInfo: Sendable, Hashable, Codable {
    public enum Status: String, Sendable, Hashable, Codable { case recording, completed, failed }
    public enum EndReason: String, Sendable, Hashable, Codable { case stopped, silence, timeout, mixerClosed = "mixer-closed", failed }

    public var id: RecordingID
    /// What it records (a conversation id for rooms, a call leg for calls).
    public var source: String
    public var applicationID: String
    public var format: AudioFileKind
    public var channels: Int
    public var sampleRate: Int
    public var status: Status
    public var endReason: EndReason?
    public var startTime: Date
    public var endTime: Date?
    /// Seconds of audio written.
    public var duration: Double
    /// Bytes on disk, once completed.
    public var size: Int
    /// Frames lost because writing fell behind the mixer (should be 0).
    public var droppedFrames: Int
    public var error: String?
}
