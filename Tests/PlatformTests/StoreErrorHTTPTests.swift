import Testing
@testable import Platform
import Store

@Suite("Store failures in the HTTP error shape")
struct StoreErrorHTTPTests {
    @Test("a full data volume is 507 storage-full, an I/O error 503, busy 503", arguments: [
        (StoreError.sqlite(code: 13, message: "database or disk is full"), 507, "storage-full"),
        (.sqlite(code: 13 | (1 << 8), message: "full"), 507, "storage-full"),
        (.sqlite(code: 10 | (3 << 8), message: "disk I/O error"), 503, "storage-unavailable"),
        (.busy(message: "database is locked"), 503, "storage-busy"),
        (.sqlite(code: 1, message: "no such table: secrets"), 500, "internal-error"),
        (.misuse("bad binding"), 500, "internal-error"),
    ])
    func mapping(error: StoreError, status: Int, code: String) {
        #expect(error.status == status && error.code == code)
    }

    @Test("the detail never carries SQLite's own message")
    func detailHidesInternals() {
        for error in [StoreError.sqlite(code: 1, message: "no such table: secrets"), .sqlite(code: 13, message: "disk full at /data")] {
            #expect(!error.detail.contains("secrets") && !error.detail.contains("/data"))
        }
        #expect(StoreError.sqlite(code: 13, message: "").detail.contains("not saved"))
    }
}
