import Foundation

#if canImport(Testing)
import Testing
#endif
#if canImport(XCTest)
import XCTest
#endif

/// Where a failed check goes: to the test framework that runs the test. A Swift Testing issue recorded in an XCTest
/// test, or an `XCTFail` in a Swift Testing test, is not seen by the framework that runs it, so a helper of one
/// framework called from a test of the other would pass whatever it found.
@usableFromInline
package enum TestFailure {
    #if canImport(Testing)
    /// Records `message` at `sourceLocation`: a Swift Testing issue in a Swift Testing test, and an `XCTFail` naming
    /// the place in any other (an XCTest test).
    @usableFromInline
    static func record(_ message: String, at sourceLocation: SourceLocation) {
        #if canImport(XCTest)
        if Test.current == nil {
            let located = "\(message)\n(checked at \(sourceLocation.filePath):\(sourceLocation.line))"
            XCTFail(located)
            printOutsideTest(located)
            return
        }
        #endif
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    }
    #endif

    /// Prints a failure that no Swift Testing test's task saw, to standard error: `XCTFail` reaches an XCTest test only,
    /// so a check made in a detached task or on a thread of its own, or outside any test, would otherwise pass unseen.
    @usableFromInline
    static func printOutsideTest(_ message: String) {
        let text = """
            ArborTesting: a check failed outside a Swift Testing test's task (in a detached task, on a thread of its \
            own, or outside a test). Only an XCTest test sees it as a failure; call the check from the test itself.
            \(message)

            """
        if let capture = capturedOutsideTest.withLock({ $0 }) {
            capture(text)
        } else {
            FileHandle.standardError.write(Data(text.utf8))
        }
    }

    /// Where ``printOutsideTest(_:)`` writes instead of standard error while set: for ArborTesting's own tests, which
    /// check what it prints without redirecting the process's standard error.
    package static let capturedOutsideTest = LockedValue<(@Sendable (String) -> Void)?>(nil)

    #if canImport(XCTest)
    /// Records `message` at `file` and `line`: an `XCTFail` in an XCTest test, and a Swift Testing issue at the same
    /// place in a Swift Testing test.
    @usableFromInline
    static func record(_ message: String, file: StaticString, line: UInt) {
        #if canImport(Testing)
        if Test.current != nil {
            let path = "\(file)"
            let components = path.split(separator: "/")
            // `Module/File.swift`, as `#fileID` has it: the folder of a package's test target is its module's name.
            let fileID = components.suffix(2).joined(separator: "/")
            let location = SourceLocation(fileID: fileID, filePath: path, line: Int(line), column: 1)
            Issue.record(Comment(rawValue: message), sourceLocation: location)
            return
        }
        #endif
        XCTFail(message, file: file, line: line)
        printOutsideTest("\(message)\n(checked at \(file):\(line))")
    }
    #endif
}
