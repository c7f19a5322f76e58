import Testing

@testable import OfflineChat

/// Every list request's page size stays within chatd's bounds, whatever a caller asks.
struct PageLimitTests {
    @Test func aLimitOutsideOneToAHundredIsMovedInside() {
        #expect(PageLimit.clamped(-5) == 1)
        #expect(PageLimit.clamped(0) == 1)
        #expect(PageLimit.clamped(42) == 42)
        #expect(PageLimit.clamped(1_000) == 100)
    }

    @Test func buildersKeepTheirLimitsInBounds() {
        #expect(ConversationRequest.ConversationRequestBuilder(limit: 500).limit == 100)
        #expect(GroupsRequest.GroupsRequestBuilder(limit: 0).limit == 1)
        #expect(UsersRequest.UsersRequestBuilder().set(limit: 101).limit == 100)
        #expect(MessagesRequest.MessageRequestBuilder().set(limit: -1).settings.limit == 1)
        #expect(ThreadsRequest.ThreadsRequestBuilder(parentMessageId: 1).limit == PageLimit.standard)
    }
}
