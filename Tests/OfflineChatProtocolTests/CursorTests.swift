import OfflineChatProtocol
import Testing

@Suite struct CursorTests {
    @Test func changelogCursorsRoundTripAndStrangersAreRefused() {
        let cursor = ChangelogCursor.encode(epoch: "3fa9", position: 42)
        #expect(cursor == "c2.3fa9.42")
        #expect(ChangelogCursor.parse(cursor) == .position(epoch: "3fa9", position: 42))
        #expect(ChangelogCursor.parse("c1.17") == .legacy(sequence: 17))
        for bad in [
            "", "c1", "c1.", "c1.-1", "c1.+1", "c1.1.2", "c2.3fa9", "c2..4", "c2.3FA9.4", "c2.xyz.4",
            "c2.00000000000000001.4", "c2.3fa9.-4", "c2.3fa9.+4", "c2.3fa9.4.5", "c3.1.1",
            "c2.3fa9.99999999999999999999"
        ] {
            #expect(ChangelogCursor.parse(bad) == nil, "\(bad)")
        }
    }
}
