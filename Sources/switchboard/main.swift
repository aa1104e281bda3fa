import Foundation

let argv = Array(CommandLine.arguments.dropFirst())
let code = await Entry.run(argv)
exit(code)
