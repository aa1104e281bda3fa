// switchboard-dropin: the reference app server of the drop-in audio rooms app.
//
// It is an outside app server: it talks to Switchboard only over HTTP with an application JWT, exactly as it
// would talk to the hosted Vonage APIs, and keeps its own small SQLite table of the users it created.
//
//   switchboard-dropin --switchboard http://127.0.0.1:8080 --app-id ID --key-file app.key [--listen 127.0.0.1:3000]
//
// Routes: POST /auth {name} → {name, jwt}; GET /rooms → [{id, display_name}]; POST /rooms {display_name} → {id}.
import Foundation

let code = await DropIn.main(Array(CommandLine.arguments.dropFirst()))
exit(code)
