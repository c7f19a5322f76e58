import Testing

@testable import OfflineChat

/// Which path updates `NetworkMonitor` turns into `networkChanged()`: on Apple platforms the
/// monitor is a thin shell around these rules.
@Suite struct NetworkPathChangesTests {
    let wifi = NetworkPath(satisfied: true, interfaces: ["en0"])
    let cellular = NetworkPath(satisfied: true, interfaces: ["pdp_ip0"])
    let both = NetworkPath(satisfied: true, interfaces: ["pdp_ip0", "en0"])
    let none = NetworkPath(satisfied: false, interfaces: [])

    func changes(_ paths: [NetworkPath]) -> [NetworkPathChanges.Change] {
        var changes = NetworkPathChanges()
        return paths.map { changes.update($0) }
    }

    @Test func theNetworkComingBackOrMovingIsAChangeNothingElseIs() {
        // The start (described, not changed), a repeat, a loss twice (the connection notices a
        // loss by itself), back, moved to cellular, a repeat, Wi-Fi joined.
        #expect(
            changes([wifi, wifi, none, none, wifi, cellular, cellular, both])
                == [.none, .none, .none, .none, .back, .moved, .none, .moved])
    }

    @Test func aStartWithoutANetworkChangesWhenItArrives() {
        #expect(changes([none, cellular]) == [.none, .back])
    }
}
