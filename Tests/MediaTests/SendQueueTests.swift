import CShims
import Glibc
import Testing
@testable import Media

/// The worker's send queue over real loopback sockets: runs of datagrams for one destination leave as
/// one segmented message (UDP GSO) and still arrive as the datagrams they were, in order.
@Suite("Send queue")
struct SendQueueTests {
    /// A receiver and its address prepared the way a transport keeps its destination.
    final class Receiver {
        let socket: UDPSocket
        let address: UnsafeMutablePointer<sockaddr_storage>

        /// `ipv6Socket`: the address as a dual-stack sender names it (IPv4-mapped).
        init(ipv6Socket: Bool = false) throws {
            socket = try UDPSocket(host: "127.0.0.1", port: 0)
            address = .allocate(capacity: 1)
            address.initialize(to: sockaddr_storage())
            PeerAddress(host: "127.0.0.1", port: socket.localPort)!.write(to: address, ipv6Socket: ipv6Socket)
        }

        deinit { address.deallocate() }

        /// The datagrams waiting, waiting up to 2 s for `count` of them.
        func drain(awaiting count: Int) -> [[UInt8]] { UDPSocketTests.drain(socket, awaiting: count, size: 65_536) }
    }

    /// A datagram of `length` bytes, each its `tag` (so order and boundaries show).
    static func queue(_ queue: SendQueue, _ tag: UInt8, length: Int, to receiver: Receiver) {
        let slot = queue.reserve()
        slot.initializeMemory(as: UInt8.self, repeating: tag, count: length)
        queue.commitSegment(length: length, to: receiver.address)
    }

    /// What the test queues: four equal datagrams and a shorter one to `a` (one run, closed by the
    /// shorter), a longer one to `a` (a new message), one to `b`, then two more to `a`.
    static func queueMixed(_ queue: SendQueue, a: Receiver, b: Receiver) {
        for tag: UInt8 in 1...4 { Self.queue(queue, tag, length: 1_100, to: a) }
        Self.queue(queue, 5, length: 700, to: a)
        Self.queue(queue, 6, length: 1_100, to: a)
        Self.queue(queue, 7, length: 300, to: b)
        Self.queue(queue, 8, length: 900, to: a)
        Self.queue(queue, 9, length: 900, to: a)
    }

    static func expectMixedArrived(a: Receiver, b: Receiver) {
        let atA = a.drain(awaiting: 8)
        #expect(atA.map(\.count) == [1_100, 1_100, 1_100, 1_100, 700, 1_100, 900, 900])
        #expect(atA.map { $0.first ?? 0 } == [1, 2, 3, 4, 5, 6, 8, 9])
        #expect(atA.allSatisfy { d in d.allSatisfy { $0 == d[0] } }, "each datagram whole, nothing of its neighbours")
        let atB = b.drain(awaiting: 1)
        #expect(atB.map(\.count) == [300])
        #expect(atB.first?.first == 7)
    }

    @Test("a run of datagrams to one subscriber leaves in one segmented send and arrives as those datagrams, in order",
          arguments: ["127.0.0.1", "::"])
    func runsArriveAsDatagrams(host: String) throws {
        let socket = try UDPSocket(host: host, port: 0)
        let queue = SendQueue(socket: socket)
        let (a, b) = (try Receiver(ipv6Socket: socket.isIPv6), try Receiver(ipv6Socket: socket.isIPv6))
        Self.queueMixed(queue, a: a, b: b)
        queue.flush()
        #expect(queue.sent == 9)
        #expect(queue.dropped == 0)
        #expect(queue.segmentation)
        // Slots 2-5 rode with slot 1, slot 9 with slot 8: five passes through the output path saved.
        #expect(queue.segmentsCoalesced == 5)
        Self.expectMixedArrived(a: a, b: b)
    }

    /// `SO_NO_CHECK` (no UDP checksum) makes the kernel refuse segmentation with EINVAL, as a path
    /// without checksum offload refuses it with EIO: the queue sends one datagram per message from
    /// then on, and nothing queued is lost.
    @Test("where the kernel refuses segmentation, the queue falls back to one datagram per message and loses nothing")
    func refusedSegmentationFallsBack() throws {
        let socket = try UDPSocket(host: "127.0.0.1", port: 0)
        #expect(sb_udp_disable_checksums(socket.fd) == 0)
        let queue = SendQueue(socket: socket)
        let (a, b) = (try Receiver(), try Receiver())
        Self.queueMixed(queue, a: a, b: b)
        queue.flush()
        #expect(!queue.segmentation)
        #expect(queue.segmentationRefusals == 1)
        #expect(queue.sent == 9)
        #expect(queue.dropped == 0)
        #expect(queue.segmentsCoalesced == 0)
        Self.expectMixedArrived(a: a, b: b)

        // And after: no runs are formed at all.
        Self.queueMixed(queue, a: a, b: b)
        queue.flush()
        #expect(queue.segmentationRefusals == 1)
        #expect(queue.sent == 18)
        Self.expectMixedArrived(a: a, b: b)
    }

    @Test("a run stops at the queue's capacity and at a flush; control packets never join one")
    func runBoundaries() throws {
        let queue = SendQueue(socket: try UDPSocket(host: "127.0.0.1", port: 0), capacity: 4)
        let a = try Receiver()
        // Six to `a` through a four-slot queue: a run of four, flushed by the fifth's reserve, then a run of two.
        for tag: UInt8 in 1...6 { Self.queue(queue, tag, length: 500, to: a) }
        queue.flush()
        #expect(queue.segmentsCoalesced == 4)
        // Control packets (`enqueue`) go alone even to the same address.
        let control: [UInt8] = [0x80, 0xC8, 0, 1]
        control.withUnsafeBytes { queue.enqueue($0, to: a.address) }
        control.withUnsafeBytes { queue.enqueue($0, to: a.address) }
        queue.flush()
        #expect(queue.segmentsCoalesced == 4)
        let got = a.drain(awaiting: 8)
        #expect(got.map { $0.first ?? 0 } == [1, 2, 3, 4, 5, 6, 0x80, 0x80])
        #expect(got.map(\.count) == [500, 500, 500, 500, 500, 500, 4, 4])
    }
}
