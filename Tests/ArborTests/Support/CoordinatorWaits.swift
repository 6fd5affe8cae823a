import Foundation

@testable import Arbor

/// Waits, polling, until some thread waits for the instance `storage` will hold — that is, for a build another thread
/// runs — or `timeout` seconds passed; whether one did. It asks about this storage only: tests running alongside have
/// threads waiting for instances of their own. `nil` (a storage the test could not find) returns `false`.
func waitUntilAThreadWaits(on storage: InstanceStorage?, timeout: TimeInterval = 10) -> Bool {
    guard let storage else { return false }
    let deadline = Date().addingTimeInterval(timeout)
    while !CreationCoordinator.shared.isWaited(on: storage) {
        if Date() > deadline { return false }
        usleep(500)
    }
    return true
}
