// switchboard-video: the reference app server of the video chat app.
//
// It is an outside app server: it talks to Switchboard only over HTTP with an application JWT, exactly as it
// would talk to the hosted Vonage Video API, and mints the clients' tokens itself with the application's key.
//
//   switchboard-video --switchboard http://127.0.0.1:8080 --app-id ID --key-file app.key [--listen 127.0.0.1:3002]
//
// Routes: GET /room/:name → {applicationId, sessionId, token} (a session per room name, made on first use);
// POST /session {mediaMode} → {sessionId, applicationId, mediaMode}; POST /token {sessionId, role, data, ttl} →
// {token, role, expiresAt}; POST /broadcast {sessionId} → {id, hls}, POST /broadcast/stop {id}; POST /captions
// {sessionId} → {captionsId}, POST /captions/stop {id}; POST /render {sessionId, url} → {id}, POST /render/stop {id}.
// The video web app opened with ?app=http://host:3002 uses these routes.
import Foundation

let code = await VideoServer.main(Array(CommandLine.arguments.dropFirst()))
exit(code)
