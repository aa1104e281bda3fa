import Foundation

let argv = Array(CommandLine.arguments.dropFirst())
let code = await Main.run(argv)
exit(code)
