import Foundation
import Testing

@testable import OfflineChat

/// The Linux HTTP client accepts only complete answers.
@Suite struct HTTPTransportTests {
    func parse(_ text: String) throws -> (status: Int, body: String, headers: [String: String]) {
        let answer = try POSIXHTTPTransport.parse(Array(text.utf8))
        return (answer.status, String(decoding: answer.body, as: UTF8.self), answer.headers)
    }

    @Test func aCompleteAnswerParses() throws {
        let answer = try parse(
            "HTTP/1.1 201 Created\r\nContent-Length: 2\r\nContent-Type: application/json\r\nRetry-After:  7\r\n\r\n{}")
        #expect(answer.status == 201 && answer.body == "{}")
        #expect(answer.headers["retry-after"] == "7" && answer.headers["content-type"] == "application/json")
        let chunked = try parse(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n")
        #expect(chunked.status == 200 && chunked.body == "abcde")
    }

    @Test func aCutAnswerIsANetworkFailureNotAHalfMessage() {
        for cut in [
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{\"a\":", "HTTP/1.1 200 OK\r\nContent-Le",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "", "garbage\r\n\r\n"
        ] {
            #expect(throws: ChatException.self, "\(cut)") { try parse(cut) }
        }
    }
}
