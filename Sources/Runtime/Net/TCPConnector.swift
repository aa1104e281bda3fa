import CShims
import Glibc

/// Opens a non-blocking TCP connection on a loop and reports the connected fd (or an error) there.
final class TCPConnector: Selectable {
    unowned let loop: EventLoop
    let fd: Int32
    private var completion: ((Result<Int32, Error>) -> Void)?
    private var timer: TimerHandle?

    /// Connects to the first of `addresses` that accepts, in order (a name's IPv6 and IPv4 addresses,
    /// say), each given `timeout`; reports the connected fd and its address, or the last address's error.
    static func connect(toFirstOf addresses: ArraySlice<SocketAddress>, on loop: EventLoop, timeout: Duration,
                        completion: @escaping (Result<(Int32, SocketAddress), Error>) -> Void) {
        guard let address = addresses.first else { return completion(.failure(SocketError.unresolved("", "no address"))) }
        connect(to: address, on: loop, timeout: timeout) { result in
            switch result {
            case .success(let fd): completion(.success((fd, address)))
            case .failure(let error) where addresses.count == 1: completion(.failure(error))
            case .failure: connect(toFirstOf: addresses.dropFirst(), on: loop, timeout: timeout, completion: completion)
            }
        }
    }

    /// Starts connecting to `address`; `completion` runs exactly once on the loop.
    static func connect(to address: SocketAddress, on loop: EventLoop, timeout: Duration,
                        completion: @escaping (Result<Int32, Error>) -> Void) {
        let domain = address.family == .v6 ? AF_INET6 : AF_INET
        let fd = socket(domain, Int32(SOCK_STREAM.rawValue) | SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC, 0)
        guard fd >= 0 else { completion(.failure(SocketError.system("socket", errno))); return }
        let rc: Int32
        do {
            rc = try address.withSockAddr { Glibc.connect(fd, $0, $1) }
        } catch {
            close(fd)
            completion(.failure(error))
            return
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if rc == 0 { completion(.success(fd)); return }
        guard errno == EINPROGRESS else {
            let e = errno
            close(fd)
            completion(.failure(SocketError.system("connect \(address)", e)))
            return
        }
        let c = TCPConnector(loop: loop, fd: fd, completion: completion)
        loop.register(fd: fd, events: SB_EPOLLOUT, handler: c)
        c.timer = loop.schedule(after: timeout) { [weak c] in c?.finish(.failure(SocketError.timeout), closeFD: true) }
    }

    private init(loop: EventLoop, fd: Int32, completion: @escaping (Result<Int32, Error>) -> Void) {
        self.loop = loop
        self.fd = fd
        self.completion = completion
    }

    func handle(events: UInt32) {
        var err: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
        if err == 0 {
            finish(.success(fd), closeFD: false)
        } else {
            finish(.failure(SocketError.system("connect", err)), closeFD: true)
        }
    }

    private func finish(_ result: Result<Int32, Error>, closeFD: Bool) {
        guard let completion else { return }
        self.completion = nil
        loop.cancel(timer)
        loop.unregister(fd: fd)
        if closeFD { close(fd) }
        completion(result)
    }
}
