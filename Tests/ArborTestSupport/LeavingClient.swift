import Foundation

/// A client on a socket of its own that sends a `GET`, reads until a marker has come, and goes away with the rest
/// unread (its socket reset, as when a browser tab closes in the middle of a download).
package enum LeavingClient {
    /// Returns whether the marker came before the server ended the response.
    package static func get(_ path: String, port: Int, leavingAfter marker: String) async -> Bool {
        // On a thread of its own: the socket calls block.
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: getBlocking(path, port: port, marker: marker)) }
        }
    }

    private static func getBlocking(_ path: String, port: Int, marker: String) -> Bool {
        let descriptor = socket(AF_INET, streamSocket, 0)
        guard descriptor >= 0 else { return false }
        // No lingering: closing resets the connection at once.
        var noLinger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &noLinger, socklen_t(MemoryLayout<linger>.size))
        defer { close(descriptor) }
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return false }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard send(descriptor, request, request.count, 0) == request.count else { return false }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { return false }
            received += buffer[..<count]
        }
        return true
    }
}

#if canImport(Glibc)
private let streamSocket = Int32(SOCK_STREAM.rawValue)
#else
private let streamSocket = SOCK_STREAM
#endif
