import Foundation
import OfflineChat

/// `chat`: the OfflineChat command-line client, built on the SDK's public API only.
@main
struct ChatCLI {
    static func main() async {
        let invocation: Invocation
        do {
            invocation = try Invocation.parse(
                Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("chat: \(error)\n\(Invocation.usage)\n".utf8))
            exit(2)
        }
        let output = Output(json: invocation.json)
        do {
            let session = try CLISession(invocation)
            leave(try await session.run())
        } catch let error as ChatException {
            output.fail(error.errorDescription, code: error.errorCode)
            leave(1)
        } catch {
            output.fail("\(error)")
            leave(1)
        }
    }

    /// Ends the process without running exit-time destructors: the SDK's connection and
    /// cache threads are still running, and tearing globals down under them crashed at exit.
    /// Output is written unbuffered and the cache's writes are committed, so nothing is lost.
    static func leave(_ status: Int32) -> Never {
        _exit(status)
    }
}
