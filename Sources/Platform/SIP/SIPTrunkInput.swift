/// Fields of a trunk create or update; nil leaves a field as it is (or at its default on create).
public struct SIPTrunkInput: Sendable, Equatable {
    public var name: String?
    public var host: String?
    public var port: Int?
    public var transport: String?
    public var username: String??
    public var password: String??
    public var register: Bool?
    public var allow: [String]?
    public var healthInterval: Int?
    public var mediaEncryption: String?
    public var dtmf: String?

    public init(name: String? = nil, host: String? = nil, port: Int? = nil, transport: String? = nil, username: String?? = nil,
                password: String?? = nil, register: Bool? = nil, allow: [String]? = nil, healthInterval: Int? = nil,
                mediaEncryption: String? = nil, dtmf: String? = nil) {
        self.name = name
        self.host = host
        self.port = port
        self.transport = transport
        self.username = username
        self.password = password
        self.register = register
        self.allow = allow
        self.healthInterval = healthInterval
        self.mediaEncryption = mediaEncryption
        self.dtmf = dtmf
    }
}
