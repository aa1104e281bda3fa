"""Session monitoring: a video session's application gets the Video API's callbacks — sessionCreated, connectionCreated,
streamCreated, streamDestroyed, connectionDestroyed (with the reason), sessionDestroyed — POSTed as JSON to the
URLs of its `capabilities.video.webhooks`, in order, while clients connect, publish, unpublish, are force
disconnected and leave over the `video:*` protocol."""
from __future__ import annotations

import requests

from accounts_support import bearer, token
from rig import wait_until
from sip_support import api, metric
from video_support import VideoPeer, video_server
from voice_support import Hooks

NAMES = ["session_created", "session_destroyed", "connection_created", "connection_destroyed", "stream_created", "stream_destroyed",
         "archive_status"]


def client_token(app_id, key, sid, data):
    return token(app_id, key, sub="video", ttl=3600, extra={"session_id": sid, "role": "moderator", "scope": "session.connect",
                                                            "connection_data": data, "acl": {"paths": {"/session/**": {}}}})


def test_callbacks_follow_a_session_from_first_connection_to_last():
    hooks = Hooks()
    with video_server() as server:
        webhooks = {name: {"address": f"{hooks.url}/video/{name}"} for name in NAMES}
        webhooks["stream_created"]["active"] = True
        r = api(server, "POST", "/v2/applications", json={"name": "monitored", "capabilities": {"video": {"webhooks": webhooks}}})
        assert r.status_code == 201, r.text
        app_id, key = r.json()["id"], r.json()["keys"]["private_key"]
        app_auth = {"Authorization": bearer(token(app_id, key))}
        r = requests.post(server.http_url + "/session/create", headers=app_auth, data={"p2p.preference": "disabled"}, timeout=10)
        assert r.status_code == 200, r.text
        sid = r.json()[0]["session_id"]

        alice = VideoPeer(server, sid, client_token(app_id, key, sid, "name=alice"))
        bob = VideoPeer(server, sid, client_token(app_id, key, sid, "name=bob"))
        stream_id = bob.publish("bob's camera")
        # An archive's status changes go to `archive_status`, with what the archive records.
        r = requests.post(f"{server.http_url}/v2/project/{app_id}/archive", headers=app_auth, json={"sessionId": sid, "name": "m", "outputMode": "individual"},
                          timeout=10)
        assert r.status_code == 200, r.text
        archive_id = r.json()["id"]
        r = requests.post(f"{server.http_url}/v2/project/{app_id}/archive/{archive_id}/stop", headers=app_auth, timeout=10)
        assert r.status_code == 200 and r.json()["status"] == "available", r.text
        bob.request("video:unpublish", {"streamId": stream_id})
        r = requests.delete(f"{server.http_url}/v2/project/{app_id}/session/{sid}/connection/{bob.connection_id}", headers=app_auth, timeout=10)
        assert r.status_code == 204, r.text
        alice.request("video:disconnect", {})
        alice.close()

        wait_until(lambda: len([e for e in hooks.events if e["event"] == "archive"]) == 2, timeout=10,
                   what=lambda: f"two archive callbacks: {hooks.events}")
        statuses = [e for e in hooks.events if e["event"] == "archive"]
        assert [(e["id"], e["status"], e["sessionId"], e["projectId"], e["hasVideo"], e["outputMode"]) for e in statuses] == [
            (archive_id, "started", sid, app_id, True, "individual"), (archive_id, "available", sid, app_id, True, "individual")]
        expected = ["sessionCreated", "connectionCreated", "connectionCreated", "streamCreated", "streamDestroyed",
                    "connectionDestroyed", "connectionDestroyed", "sessionDestroyed"]
        session_events = lambda: [e for e in hooks.events if e["event"] != "archive"]
        wait_until(lambda: [e["event"] for e in session_events()] == expected, timeout=10,
                   what=lambda: f"the callbacks in order: {[e.get('event') for e in hooks.events]}")
        events = session_events()
        assert all(e["sessionId"] == sid and e["projectId"] == app_id and isinstance(e["timestamp"], int) for e in events)
        assert [e["connection"]["data"] for e in events if e["event"] == "connectionCreated"] == ["name=alice", "name=bob"]
        assert events[1]["connection"]["id"] == alice.connection_id and isinstance(events[1]["connection"]["createdAt"], int)
        created = events[3]["stream"]
        assert (created["id"], created["name"], created["videoType"]) == (stream_id, "bob's camera", "camera")
        assert created["connection"]["id"] == bob.connection_id and created["connection"]["data"] == "name=bob"
        assert events[4]["stream"]["id"] == stream_id and events[4]["reason"] == "clientDisconnected"
        assert (events[5]["connection"]["id"], events[5]["reason"]) == (bob.connection_id, "forceDisconnected")
        assert (events[6]["connection"]["id"], events[6]["reason"]) == (alice.connection_id, "clientDisconnected")
        # Counted once the hook's reply is back, which may be a moment after the hook saw the request.
        wait_until(lambda: metric(server, "switchboard_video_callback_delivered_total") == len(expected) + 2, timeout=5,
                   what=lambda: f"{len(expected) + 2} deliveries counted: {metric(server, 'switchboard_video_callback_delivered_total')}")

        # A webhook turned off (`active: false`) gets nothing; the others go on.
        webhooks["connection_created"]["active"] = False
        r = api(server, "PUT", f"/v2/applications/{app_id}", json={"name": "monitored", "capabilities": {"video": {"webhooks": webhooks}}})
        assert r.status_code == 200, r.text
        carol = VideoPeer(server, sid, client_token(app_id, key, sid, "name=carol"))
        carol.close()  # the socket dropped, no video:disconnect: networkDisconnected
        wait_until(lambda: len(session_events()) == len(expected) + 3, timeout=10, what=lambda: f"{[e.get('event') for e in hooks.events]}")
        later = session_events()[len(expected):]
        assert [e["event"] for e in later] == ["sessionCreated", "connectionDestroyed", "sessionDestroyed"]
        assert later[1]["reason"] == "networkDisconnected" and later[1]["connection"]["data"] == "name=carol"
    hooks.http.shutdown()


def test_a_broadcast_s_status_changes_go_to_broadcast_status():
    """`broadcast_status` gets the broadcast object, as `GET …/broadcast/{id}` answers it then, each time the broadcast
    starts, one of its outputs' statuses changes, and it stops."""
    hooks = Hooks()
    with video_server() as server:
        webhooks = {"broadcast_status": {"address": f"{hooks.url}/video/broadcast"}}
        r = api(server, "POST", "/v2/applications", json={"name": "broadcasting", "capabilities": {"video": {"webhooks": webhooks}}})
        assert r.status_code == 201, r.text
        app_id, key = r.json()["id"], r.json()["keys"]["private_key"]
        app_auth = {"Authorization": bearer(token(app_id, key))}
        r = requests.post(server.http_url + "/session/create", headers=app_auth, data={"p2p.preference": "disabled"}, timeout=10)
        sid = r.json()[0]["session_id"]
        alice = VideoPeer(server, sid, client_token(app_id, key, sid, "name=alice"))
        # HLS, and an RTMP server that is not there: it goes offline while the playlist goes live.
        gone = {"id": "gone", "serverUrl": "rtmp://127.0.0.1:9/live", "streamName": "s"}
        r = requests.post(f"{server.http_url}/v2/project/{app_id}/broadcast", headers=app_auth,
                          json={"sessionId": sid, "outputs": {"hls": {}, "rtmp": [gone]}}, timeout=10)
        assert r.status_code == 200, r.text
        broadcast_id = r.json()["id"]

        def reported():
            return [e for e in hooks.events if e.get("event") == "broadcast"]

        def outputs(e):
            return e["broadcastUrls"]["hlsStatus"], e["broadcastUrls"]["rtmp"][0]["status"]

        wait_until(lambda: ("live", "offline") in [outputs(e) for e in reported()], timeout=30,
                   what=lambda: f"the playlist live and the RTMP server offline: {[outputs(e) for e in reported()]}")
        r = requests.post(f"{server.http_url}/v2/project/{app_id}/broadcast/{broadcast_id}/stop", headers=app_auth, timeout=10)
        assert r.status_code == 200 and r.json()["status"] == "stopped", r.text
        wait_until(lambda: reported()[-1]["status"] == "stopped", timeout=10, what=lambda: f"the stop reported: {reported()}")
        alice.close()

        events = reported()
        assert all((e["id"], e["sessionId"], e["projectId"]) == (broadcast_id, sid, app_id) for e in events)
        assert [e["status"] for e in events] == ["started"] * (len(events) - 1) + ["stopped"]
        assert outputs(events[0]) == ("connecting", "connecting") and outputs(events[-1]) == ("ended", "ended")
        # Each report while it runs is a change.
        running = [outputs(e) for e in events[:-1]]
        assert all(a != b for a, b in zip(running, running[1:])), running
        assert events[0]["broadcastUrls"]["hls"] == f"{server.http_url}/broadcast/{broadcast_id}/hls/live.m3u8"
        assert events[-1]["updatedAt"] >= events[0]["createdAt"] and events[0]["streamMode"] == "auto"
        assert events[-1] == {**requests.get(f"{server.http_url}/v2/project/{app_id}/broadcast/{broadcast_id}", headers=app_auth,
                                             timeout=10).json(), "event": "broadcast"}
    hooks.http.shutdown()
