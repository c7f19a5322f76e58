import Foundation
import OfflineChat

/// `chat`: the OfflineChat command-line client, built on the SDK's public API only.
@main
struct ChatCLI {
    static func main() async {
        let invocation: Invocation
        do {
            invocation = try Invocation.parse(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("chat: \(error)\n\(Invocation.usage)\n".utf8))
            exit(2)
        }
        let output = Output(json: invocation.json)
        do {
            let session = try CLISession(invocation)
            exit(try await session.run())
        } catch let error as ChatException {
            output.fail(error.errorDescription, code: error.errorCode)
            exit(1)
        } catch {
            output.fail("\(error)")
            exit(1)
        }
    }
}
