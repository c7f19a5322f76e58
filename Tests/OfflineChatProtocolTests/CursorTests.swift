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

    /// `c3`: a group's guid may hold dots; the groups are in guid order, so a cursor has one text.
    @Test func groupLogCursorsRoundTripInOneTextAndStrangersAreRefused() {
        let groups: [String: Int64] = ["team.b": 7, "a@x": 0, "team": 12]
        let cursor = ChangelogCursor.encode(epoch: "3fa9", position: 42, groups: groups)
        #expect(cursor == "c3.3fa9.42.a@x:0,team:12,team.b:7")
        #expect(ChangelogCursor.parse(cursor) == .logs(epoch: "3fa9", position: 42, groups: groups))
        #expect(ChangelogCursor.parse("c3.1.0.") == .logs(epoch: "1", position: 0, groups: [:]))
        for bad in [
            "c3.1.1", "c3.1.1.a", "c3.1.1.a:", "c3.1.1.:4", "c3.1.1.b:1,a:2", "c3.1.1.a:1,", "c3.1.1.a:1,a:2",
            "c3.1.1.a:-1", "c3.1.1.a:1:2", "c3.X.1.a:1", "c3.1.x.a:1"
        ] {
            #expect(ChangelogCursor.parse(bad) == nil, "\(bad)")
        }
    }
}
