import CShims
import Glibc
import Crypto
import Runtime

/// One media worker: an OS thread with its own epoll loop and UDP socket.
///
/// The control plane talks to it only through `run`, which posts a job to the loop's
/// mailbox (a `Mutex`-guarded queue plus an eventfd) and resumes the caller's continuation
/// with the reply. Everything the job touches lives on the worker thread.
public final class MediaWorker: Sendable {
    public let index: Int
    public let port: UInt16
    let loop: EventLoop
    private let core: CoreBox

    /// Invariant: `core` is dereferenced only inside jobs that run on `loop`'s thread.
    private struct CoreBox: @unchecked Sendable { let core: WorkerCore }

    init(index: Int, configuration: MediaConfiguration, certificate: DTLSCertificate,
         events: @escaping @Sendable (MediaEvent) -> Void) throws(MediaError) {
        let requested: UInt16 = configuration.port == 0 ? 0 : configuration.port &+ UInt16(index)
        let socket: UDPSocket
        do { socket = try UDPSocket(host: configuration.bindHost, port: requested) } catch {
            if error.code == EADDRINUSE {
                throw .socket("media port \(requested) on \(configuration.bindHost) is in use (another server?); "
                              + "choose one with --media-port, or 0 for any free port")
            }
            throw .socket(error.description)
        }
        // Output leaves through a socket of its own on the same port, which saves a wake-up per datagram;
        // where the kernel cannot steer the port's input to one of two sockets, the one socket does both.
        let sender = try? socket.openSender()
        let loop = EventLoop(index: index)
        let core = WorkerCore(index: index, loop: loop, socket: socket, sender: sender, certificate: certificate,
                              configuration: configuration, events: events)
        self.index = index
        self.port = socket.localPort
        self.loop = loop
        self.core = CoreBox(core: core)
        let box = self.core
        let nice = configuration.threadNice
        loop.execute {
            if let nice {
                let error = sb_thread_set_nice(nice)
                box.core.threadPriority = ThreadPriority(requested: nice, nice: sb_thread_nice(), error: error)
            }
            box.core.loop.register(fd: box.core.socket.fd, events: SB_EPOLLIN, handler: box.core)
            box.core.startTicking()
        }
        loop.startThread(name: "media-\(index)")
    }

    /// Runs `body` on the worker thread and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable (WorkerCore) throws(MediaError) -> T) async throws(MediaError) -> T {
        let box = core
        let result: Result<T, MediaError> = await withCheckedContinuation { continuation in
            loop.execute {
                do throws(MediaError) {
                    continuation.resume(returning: .success(try body(box.core)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    func stop() {
        let box = core
        loop.execute {
            box.core.loop.unregister(fd: box.core.socket.fd)
            for id in Array(box.core.routers.keys) { box.core.closeRouter(id) }
        }
        loop.stop()
    }
}
