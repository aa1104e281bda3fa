// switchboard-voice: the reference voice app server of the app-to-phone tutorial.
//
// It is an outside app server: it talks to Switchboard only over HTTP with an application JWT, exactly as it
// would talk to the hosted Vonage APIs. Point the application's voice answer URL at /voice/answer and its
// event URL at /voice/event.
//
//   switchboard-voice --switchboard http://127.0.0.1:8080 --app-id ID --key-file app.key [--listen 127.0.0.1:3001]
//                     [--from-number 15550123 | --api-key KEY --api-secret SECRET] [--inbound-user alice]
//
// Routes: GET /voice/answer (talk + connect to `to`), GET /voice/answer-inbound (connect a phone to the app user
// --inbound-user), GET|POST /voice/event (one JSON line per event on stdout), POST /auth {name} → {name, jwt, user_id}.
import Foundation

let code = await VoiceServer.main(Array(CommandLine.arguments.dropFirst()))
exit(code)
