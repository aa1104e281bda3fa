"""The Video API driven by the official server SDKs: `opentok` (key + secret, plain HTTP) and
`vonage` (application id + private key, HTTPS with the development CA). Clients on the other end
are signaling-only peers of the `video:*` protocol."""
import base64
import time

import pytest
import requests

from accounts_support import token as application_jwt
from video_support import AudioConnectorSink, VideoPeer, VideoRequestError, account, opentok_client, start_video_server

opentok = pytest.importorskip("opentok")


@pytest.fixture(scope="module")
def server():
    s = start_video_server(https=True)
    yield s
    code = s.stop()
    log = s.log()
    s.cleanup()
    assert code == 0, log[-4000:]


def no_push(peer, type_, seconds=0.4):
    with pytest.raises(TimeoutError):
        peer.wait_push(type_, timeout=seconds)


def test_opentok_sdk_session_tokens_streams_signals_moderation(server):
    ot = opentok_client(server)
    session = ot.create_session(media_mode=opentok.MediaModes.routed)
    sid = session.session_id
    assert sid.startswith("1_")
    jwt_token = ot.generate_token(sid, role=opentok.Roles.publisher, data="name=alice")
    t1_token = ot.generate_token(sid, role=opentok.Roles.moderator, data="name=bob", use_jwt=False)
    assert t1_token.startswith("T1==")

    alice = VideoPeer(server, sid, jwt_token)
    bob = VideoPeer(server, sid, t1_token)
    assert alice.wait_push("video:connectionCreated")["connection"]["data"] == "name=bob"
    assert bob.connect_reply["connections"][0]["connectionId"] == alice.connection_id
    assert bob.connect_reply["capabilities"]["forceDisconnect"] is True

    stream_id = alice.publish("alice cam")
    created = bob.wait_push("video:streamCreated")["stream"]
    assert (created["streamId"], created["name"], created["connectionId"]) == (stream_id, "alice cam", alice.connection_id)

    streams = ot.list_streams(sid)
    assert streams.count == 1 and streams.items[0].id == stream_id and streams.items[0].name == "alice cam"
    one = ot.get_stream(sid, stream_id)
    assert one.videoType == "camera" and one.name == "alice cam"

    # Signals: to everyone, then to bob's connection only.
    ot.send_signal(sid, {"type": "chat", "data": "hello all"})
    for peer in (alice, bob):
        body = peer.wait_push("video:signal")
        assert (body["type"], body["data"]) == ("chat", "hello all") and "from" not in body
    ot.send_signal(sid, {"type": "dm", "data": "only bob"}, bob.connection_id)
    assert bob.wait_push("video:signal")["data"] == "only bob"
    no_push(alice, "video:signal")

    # Moderation: mute one stream.
    ot.mute_stream(sid, stream_id)
    assert alice.wait_push("video:muteForced")["streamId"] == stream_id
    changed = bob.wait_push("video:streamPropertyChanged")
    assert (changed["property"], changed["newValue"]) == ("hasAudio", False)

    # Mute all: later streams start muted until it is turned off.
    ot.mute_all(sid, [])
    muted = bob.request("video:publish", {"name": "bob cam"})
    assert muted["stream"]["hasAudio"] is False
    ot.disable_force_mute(sid)
    loud = bob.request("video:publish", {"name": "bob screen", "videoType": "screen"})
    assert loud["stream"]["hasAudio"] is True and loud["stream"]["videoType"] == "screen"
    assert ot.list_streams(sid).count == 3

    # Force disconnect: alice is told, bob sees her stream and connection go.
    ot.force_disconnect(sid, alice.connection_id)
    assert alice.wait_push("video:sessionDisconnected")["reason"] == "forceDisconnected"
    gone = bob.wait_push("video:streamDestroyed", where=lambda b: b["stream"]["streamId"] == stream_id)
    assert gone["reason"] == "forceDisconnected"
    assert bob.wait_push("video:connectionDestroyed")["connection"]["connectionId"] == alice.connection_id
    assert ot.list_streams(sid).count == 2
    # A client-side moderator may do the same over the protocol.
    carol = VideoPeer(server, sid, ot.generate_token(sid, data="name=carol"))
    bob.request("video:forceDisconnect", {"connectionId": carol.connection_id})
    assert carol.wait_push("video:sessionDisconnected")["reason"] == "forceDisconnected"
    # Unknown connection: 404 from the SDK.
    with pytest.raises(opentok.exceptions.OpenTokException):
        ot.force_disconnect(sid, "no-such-connection")
    for peer in (alice, bob, carol):
        peer.close()


def test_layout_classes_come_from_the_token_and_change_through_the_sdk(server):
    import requests
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    # The OpenTok SDK writes the classes space-separated, in a JWT and in a T1 token alike.
    ann = VideoPeer(server, sid, ot.generate_token(sid, initial_layout_class_list=["focus", "main"]))
    bob = VideoPeer(server, sid, ot.generate_token(sid, initial_layout_class_list=["side"], use_jwt=False))
    cam, side = ann.publish("ann cam"), bob.publish("bob cam")
    assert ot.get_stream(sid, cam).layoutClassList == ["focus", "main"]
    assert ot.get_stream(sid, side).layoutClassList == ["side"]

    ot.set_stream_class_lists(sid, [{"id": cam, "layoutClassList": []}, {"id": side, "layoutClassList": ["full", "focus"]}])
    assert {s.id: s.layoutClassList for s in ot.list_streams(sid).items} == {cam: [], side: ["full", "focus"]}

    # All or none: an unknown stream is a 404 naming it, and nothing changes; bad lists are 400s.
    with pytest.raises(opentok.exceptions.RequestError):
        ot.set_stream_class_lists(sid, [{"id": cam, "layoutClassList": ["full"]}, {"id": "no-such-stream", "layoutClassList": []}])
    assert ot.get_stream(sid, cam).layoutClassList == []
    url, headers = ot.endpoints.set_stream_class_lists_url(sid), ot.get_json_headers()
    for body, field in [({"items": []}, "items"), ({"items": [{"id": cam, "layoutClassList": "full"}]}, "items[0].layoutClassList"),
                        ({"items": [{"id": cam, "layoutClassList": ["two words"]}]}, "items[0].layoutClassList"),
                        ({"items": [{"layoutClassList": ["full"]}]}, "items[0].id")]:
        r = requests.put(url, json=body, headers=headers, timeout=5)
        assert r.status_code == 400 and r.json()["detail"].startswith(field), (body, r.status_code, r.text)
    r = requests.put(url, json={"items": [{"id": "gone", "layoutClassList": []}]}, headers=headers, timeout=5)
    assert r.status_code == 404 and "gone" in r.json()["detail"], r.text
    with pytest.raises(opentok.exceptions.SetStreamClassError):
        ot.set_stream_class_lists(sid, [{"id": cam, "layoutClassList": [7]}])
    assert ot.get_stream(sid, side).layoutClassList == ["full", "focus"]
    ann.close()
    bob.close()


def test_protocol_errors_have_codes(server):
    ot = opentok_client(server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    viewer = VideoPeer(server, sid, ot.generate_token(sid, role=opentok.Roles.subscriber))
    with pytest.raises(VideoRequestError) as e:
        viewer.publish("nope")
    assert e.value.code == "notAllowedToPublish"
    with pytest.raises(VideoRequestError) as e:
        viewer.request("video:forceDisconnect", {"connectionId": viewer.connection_id})
    assert e.value.code == "notAllowed"
    viewer.close()

    with pytest.raises(VideoRequestError) as e:
        VideoPeer(server, sid, "T1==garbage")
    assert e.value.code == "invalidToken"
    # A well-formed session id of this project that was never created.
    key = account(server)["api_key"]
    ghost = "1_" + base64.urlsafe_b64encode(f"1~{key}~~{int(time.time() * 1000)}~ghost~P~~".encode()).decode().rstrip("=")
    with pytest.raises(VideoRequestError) as e:
        VideoPeer(server, ghost, ot.generate_token(ghost))
    assert e.value.code == "sessionNotFound"
    # A token for another session.
    other = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    with pytest.raises(VideoRequestError) as e:
        VideoPeer(server, sid, ot.generate_token(other))
    assert e.value.code == "invalidToken"
    # Expired (a T1 token signed like the SDK does, with an expiry in the past).
    import hashlib
    import hmac
    from urllib.parse import urlencode
    now = int(time.time())
    data = urlencode({"session_id": sid, "create_time": now - 100, "expire_time": now - 10, "role": "publisher",
                      "nonce": 1, "initial_layout_class_list": ""})
    sig = hmac.new(account(server)["api_secret"].encode(), data.encode(), hashlib.sha1).hexdigest()
    expired = "T1==" + base64.b64encode(f"partner_id={key}&sig={sig}:{data}".encode()).decode()
    with pytest.raises(VideoRequestError) as e:
        VideoPeer(server, sid, expired)
    assert e.value.code == "tokenExpired"


@pytest.fixture(scope="module")
def vonage_app(server):
    """A Vonage application made with the account credentials through the SDK (HTTPS)."""
    vonage = pytest.importorskip("vonage")
    from vonage_application import ApplicationConfig
    mp = pytest.MonkeyPatch()
    mp.setenv("REQUESTS_CA_BUNDLE", str(server.ca_file))
    host = f"127.0.0.1:{server.https_port}"
    acc = account(server)
    client = vonage.Vonage(vonage.Auth(api_key=acc["api_key"], api_secret=acc["api_secret"]),
                           vonage.HttpClientOptions(api_host=host, rest_host=host, video_host=host))
    app = client.application.create_application(ApplicationConfig(name="video sdk test"))
    yield app.id, app.keys.private_key, host
    mp.undo()


@pytest.fixture
def app_video(vonage_app):
    """The `vonage` SDK's Video client signed as that application (HTTPS, the server's CA trusted by `vonage_app`)."""
    vonage = pytest.importorskip("vonage")
    app_id, private_key, host = vonage_app
    return vonage.Vonage(vonage.Auth(application_id=app_id, private_key=private_key),
                         vonage.HttpClientOptions(api_host=host, video_host=host)).video


def test_vonage_sdk_video_over_https(server, app_video):
    from vonage_video import SessionOptions, SignalData, StreamLayout, StreamLayoutOptions, TokenOptions
    from vonage_video.models.enums import MediaMode, TokenRole
    video = app_video
    session = video.create_session(SessionOptions(media_mode=MediaMode.ROUTED))
    sid = session.session_id
    assert sid.startswith("1_")
    token = video.generate_client_token(TokenOptions(session_id=sid, role=TokenRole.PUBLISHER, connection_data="name=ann"))
    token = token.decode() if isinstance(token, bytes) else token
    mod_token = video.generate_client_token(TokenOptions(session_id=sid, role=TokenRole.MODERATOR))
    mod_token = mod_token.decode() if isinstance(mod_token, bytes) else mod_token

    ann = VideoPeer(server, sid, token)
    mod = VideoPeer(server, sid, mod_token)
    stream_id = ann.publish("ann cam")
    assert mod.wait_push("video:streamCreated")["stream"]["streamId"] == stream_id

    streams = video.list_streams(sid)
    assert [(s.id, s.name, s.video_type) for s in streams] == [(stream_id, "ann cam", "camera")]
    assert video.get_stream(sid, stream_id).name == "ann cam"

    video.send_signal(sid, SignalData(type="chat", data="hi all"))
    assert ann.wait_push("video:signal")["data"] == "hi all"
    assert mod.wait_push("video:signal")["data"] == "hi all"
    video.send_signal(sid, SignalData(type="chat", data="hi ann"), connection_id=ann.connection_id)
    assert ann.wait_push("video:signal")["data"] == "hi ann"
    no_push(mod, "video:signal")

    # Layout classes: the Vonage SDK sends a token's as an array; its change returns the session's streams.
    lead_token = video.generate_client_token(
        TokenOptions(session_id=sid, role=TokenRole.PUBLISHER, initial_layout_class_list=["focus", "main"]))
    lead = VideoPeer(server, sid, lead_token.decode() if isinstance(lead_token, bytes) else lead_token)
    lead_stream = lead.publish("lead cam")
    assert video.get_stream(sid, lead_stream).layout_class_list == ["focus", "main"]
    changed = video.change_stream_layout(sid, StreamLayoutOptions(items=[StreamLayout(id=stream_id, layout_class_list=["full"])]))
    assert {s.id: s.layout_class_list for s in changed} == {stream_id: ["full"], lead_stream: ["focus", "main"]}
    lead.close()
    mod.wait_push("video:streamDestroyed", where=lambda b: b["stream"]["streamId"] == lead_stream)

    video.mute_stream(sid, stream_id)
    assert ann.wait_push("video:muteForced")["streamId"] == stream_id
    video.mute_all_streams(sid, excluded_stream_ids=[stream_id])
    video.disable_mute_all_streams(sid)

    video.disconnect_client(sid, ann.connection_id)
    assert ann.wait_push("video:sessionDisconnected")["reason"] == "forceDisconnected"
    assert mod.wait_push("video:streamDestroyed")["reason"] == "forceDisconnected"
    assert video.list_streams(sid) == []
    ann.close()
    mod.close()


def test_vonage_sdk_audio_connector(server, app_video):
    """The `vonage` SDK's Audio Connector options (a stream list, 8 kHz, the binary transport as an object) reach
    the socket as the Video API sends them; disconnecting the client ends it."""
    from vonage_video import AudioConnectorOptions, AudioConnectorWebSocket, SessionOptions, TokenOptions
    from vonage_video.models.audio_connector import AudioTransportConfiguration
    from vonage_video.models.enums import AudioSampleRate, MediaMode
    video = app_video
    sink = AudioConnectorSink()
    sid = video.create_session(SessionOptions(media_mode=MediaMode.ROUTED)).session_id

    def token(data=None):
        t = video.generate_client_token(TokenOptions(session_id=sid, connection_data=data))
        return t.decode() if isinstance(t, bytes) else t

    ann = VideoPeer(server, sid, token("name=ann"))
    stream_id = ann.publish("ann cam")
    started = video.start_audio_connector(AudioConnectorOptions(
        session_id=sid, token=token("name=captions"),
        websocket=AudioConnectorWebSocket(uri=sink.uri("/captions"), streams=[stream_id], headers={"room": "a"},
                                          audio_rate=AudioSampleRate.KHZ_8,
                                          audio_transport=AudioTransportConfiguration(transport="binary"))))
    assert started.id and started.connection_id
    joined = ann.wait_push("video:connectionCreated")["connection"]
    assert (joined["connectionId"], joined["data"]) == (started.connection_id, "name=captions")
    deadline = time.monotonic() + 5
    while len(sink.frames.get("/captions", [])) < 10 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sink.first["/captions"] == {"content-type": "audio/l16;rate=8000", "room": "a"}
    assert {len(f) for f in sink.frames["/captions"]} == {320}  # 20 ms at 8 kHz (silence: no media was sent)
    video.disconnect_client(sid, started.connection_id)
    assert sink.closed["/captions"].wait(5)
    assert ann.wait_push("video:connectionDestroyed")["reason"] == "forceDisconnected"
    ann.close()


def test_vonage_sdk_audio_archive(server, vonage_app, app_video):
    """The `vonage` SDK's archive calls over HTTPS with an application: an audio-only archive starts, is listed,
    stops available with a download URL that serves Ogg, and is deleted; one in manual stream mode records the
    streams added to it."""
    from vonage_video import CreateArchiveRequest, ListArchivesFilter, SessionOptions, TokenOptions
    from vonage_video.models.enums import MediaMode
    app_id, private_key, host = vonage_app
    video = app_video
    sid = video.create_session(SessionOptions(media_mode=MediaMode.ROUTED)).session_id
    token = video.generate_client_token(TokenOptions(session_id=sid))
    peer = VideoPeer(server, sid, token.decode() if isinstance(token, bytes) else token)
    stream = peer.publish("sdk")  # someone publishing: the archive records (it is paused while nobody does)
    archive = video.start_archive(CreateArchiveRequest(session_id=sid, has_video=False, name="sdk"))
    assert archive.status == "started" and archive.has_video is False and archive.name == "sdk"
    archives, count, _ = video.list_archives(ListArchivesFilter(session_id=sid))
    assert count == 1 and archives[0].id == archive.id
    time.sleep(1.2)
    stopped = video.stop_archive(archive.id)
    assert stopped.status == "available"
    got = video.get_archive(archive.id)
    assert got.url and got.duration >= 1
    auth = {"Authorization": "Bearer " + application_jwt(app_id, private_key)}
    r = requests.get(got.url.replace(server.http_url, f"https://{host}"), headers=auth, timeout=10, verify=str(server.ca_file))
    assert r.status_code == 200 and r.content[4:8] == b"ftyp"
    video.delete_archive(archive.id)
    assert video.list_archives(ListArchivesFilter(session_id=sid))[1] == 0
    # Manual stream mode: the streams the SDK chooses, listed while it records.
    from vonage_video.models.common import AddStreamRequest
    from vonage_video.models.enums import StreamMode
    archive = video.start_archive(CreateArchiveRequest(session_id=sid, has_video=False, stream_mode=StreamMode.MANUAL))
    assert archive.stream_mode == StreamMode.MANUAL and not archive.streams
    video.add_stream_to_archive(archive.id, AddStreamRequest(stream_id=stream, has_video=False))
    chosen = video.get_archive(archive.id).streams
    assert [(s.stream_id, s.has_audio, s.has_video) for s in chosen] == [(stream, True, False)]
    video.remove_stream_from_archive(archive.id, stream)
    assert not video.get_archive(archive.id).streams
    assert video.stop_archive(archive.id).status == "available"
    peer.close()


def test_sessions_belong_to_one_project(server, app_video):
    """The account key (`opentok`) and an application (`vonage`) are two projects: neither reaches the
    other's sessions over REST (404, which `opentok` reads as an empty stream list), and a client token
    either signs for the other's session finds no session."""
    from vonage_http_client.errors import NotFoundError
    from vonage_video import SessionOptions, SignalData, TokenOptions
    from vonage_video.models.enums import MediaMode, TokenRole
    video = app_video
    ot = opentok_client(server)

    def app_token(sid, role=TokenRole.PUBLISHER):
        t = video.generate_client_token(TokenOptions(session_id=sid, role=role))
        return t.decode() if isinstance(t, bytes) else t

    app_sid = video.create_session(SessionOptions(media_mode=MediaMode.ROUTED)).session_id
    key_sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    ann = VideoPeer(server, app_sid, app_token(app_sid))
    stream_id = ann.publish("ann cam")
    ken = VideoPeer(server, key_sid, ot.generate_token(key_sid))

    # The account key on the application's session.
    assert ot.list_streams(app_sid).count == 0
    with pytest.raises(opentok.exceptions.OpenTokException):
        ot.get_stream(app_sid, stream_id)
    # (`send_signal` tests the response's truth, so a 404 comes out as RequestError(…, 404).)
    with pytest.raises(opentok.exceptions.RequestError) as e:
        ot.send_signal(app_sid, {"type": "chat", "data": "not yours"})
    assert 404 in e.value.args
    with pytest.raises(opentok.exceptions.OpenTokException):
        ot.mute_stream(app_sid, stream_id)
    with pytest.raises(opentok.exceptions.OpenTokException):
        ot.mute_all(app_sid, [])
    with pytest.raises(opentok.exceptions.ForceDisconnectError):
        ot.force_disconnect(app_sid, ann.connection_id)
    # The SDK itself will not sign for a session id that names another project.
    with pytest.raises(opentok.exceptions.OpenTokException):
        ot.generate_token(app_sid)

    # The application on the account key's session.
    for call in (lambda: video.list_streams(key_sid),
                 lambda: video.send_signal(key_sid, SignalData(type="chat", data="not yours")),
                 lambda: video.disconnect_client(key_sid, ken.connection_id)):
        with pytest.raises(NotFoundError):
            call()

    # Client tokens for the other project's session: the application's JWT, and a T1 token signed
    # with the account secret the way the SDK would if it did not check the session id.
    import hashlib
    import hmac
    from urllib.parse import urlencode
    acc = account(server)
    now = int(time.time())
    data = urlencode({"session_id": app_sid, "create_time": now, "expire_time": now + 600, "role": "moderator",
                      "nonce": 1, "initial_layout_class_list": ""})
    sig = hmac.new(acc["api_secret"].encode(), data.encode(), hashlib.sha1).hexdigest()
    t1 = "T1==" + base64.b64encode(f"partner_id={acc['api_key']}&sig={sig}:{data}".encode()).decode()
    for sid, foreign in ((key_sid, app_token(key_sid, TokenRole.MODERATOR)), (app_sid, t1)):
        with pytest.raises(VideoRequestError) as e:
            VideoPeer(server, sid, foreign)
        assert e.value.code == "sessionNotFound"

    # Nothing reached either session.
    for peer in (ann, ken):
        no_push(peer, "video:signal", seconds=0.2)
        no_push(peer, "video:sessionDisconnected", seconds=0.1)
        no_push(peer, "video:connectionCreated", seconds=0.1)
    no_push(ann, "video:muteForced", seconds=0.1)
    assert ann.request("video:signal", {"type": "t", "data": "still here"}) == {}
    ann.close()
    ken.close()


def test_vonage_sdk_broadcast(server, app_video):
    """The `vonage` SDK's broadcast calls over HTTPS with an application: a broadcast to HLS (with DVR) in manual
    stream mode starts, is listed, changes layout and streams, and stops."""
    from vonage_video import CreateBroadcastRequest, ListBroadcastsFilter, SessionOptions, TokenOptions
    from vonage_video.models.broadcast import BroadcastHls, BroadcastOutputSettings
    from vonage_video.models.common import AddStreamRequest, ComposedLayout
    from vonage_video.models.enums import LayoutType, MediaMode, StreamMode, VideoResolution
    video = app_video
    sid = video.create_session(SessionOptions(media_mode=MediaMode.ROUTED)).session_id
    token = video.generate_client_token(TokenOptions(session_id=sid))
    peer = VideoPeer(server, sid, token.decode() if isinstance(token, bytes) else token)
    stream = peer.publish("sdk")
    broadcast = video.start_broadcast(CreateBroadcastRequest(
        session_id=sid, outputs=BroadcastOutputSettings(hls=BroadcastHls(dvr=True)), resolution=VideoResolution.RES_1280x720,
        stream_mode=StreamMode.MANUAL, max_duration=600, multi_broadcast_tag="sdk", max_bitrate=2_000_000))
    assert (broadcast.status, broadcast.resolution, broadcast.max_duration, broadcast.max_bitrate, broadcast.multi_broadcast_tag) == (
        "started", "1280x720", 600, 2_000_000, "sdk")
    assert broadcast.broadcast_urls.hls.endswith(f"/broadcast/{broadcast.id}/hls/live.m3u8") and broadcast.settings.hls.dvr is True
    broadcasts, count, _ = video.list_broadcasts(ListBroadcastsFilter(session_id=sid))
    assert count == 1 and broadcasts[0].id == broadcast.id
    assert video.change_broadcast_layout(broadcast.id, ComposedLayout(type=LayoutType.PIP)).id == broadcast.id
    video.add_stream_to_broadcast(broadcast.id, AddStreamRequest(stream_id=stream, has_audio=False))
    chosen = video.get_broadcast(broadcast.id).streams
    assert [(s.stream_id, s.has_audio, s.has_video) for s in chosen] == [(stream, False, True)]
    video.remove_stream_from_broadcast(broadcast.id, stream)
    assert not video.get_broadcast(broadcast.id).streams
    assert video.stop_broadcast(broadcast.id).status == "stopped"
    peer.close()


def test_vonage_sdk_captions(server, vonage_app, app_video):
    """`start_captions` / `stop_captions` with an application: its `captions_status` webhook and the start's status
    callback URL both hear `started` then `stopped`; a publisher's token may not start them."""
    from sip_support import api
    from vonage_video import CaptionsOptions, SessionOptions, TokenOptions
    from vonage_video.models.enums import MediaMode, TokenRole
    from vonage_http_client.errors import HttpRequestError
    from voice_support import Hooks
    hooks = Hooks()
    app_id = vonage_app[0]
    r = api(server, "PUT", f"/v2/applications/{app_id}", json={"name": "video sdk test", "capabilities": {"video": {"webhooks": {
        "captions_status": {"address": f"{hooks.url}/video/captions_status"}}}}})
    assert r.status_code == 200, r.text
    video = app_video
    sid = video.create_session(SessionOptions(media_mode=MediaMode.ROUTED)).session_id

    def token(role):
        t = video.generate_client_token(TokenOptions(session_id=sid, role=role))
        return t.decode() if isinstance(t, bytes) else t

    with pytest.raises(HttpRequestError):
        video.start_captions(CaptionsOptions(session_id=sid, token=token(TokenRole.PUBLISHER)))
    started = video.start_captions(CaptionsOptions(session_id=sid, token=token(TokenRole.MODERATOR), max_duration=300,
                                                   partial_captions=False, status_callback_url=f"{hooks.url}/captions/mine"))
    assert started.captions_id
    video.stop_captions(started)
    deadline = time.monotonic() + 5
    while len(hooks.events) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    seen = sorted((e["status"], e["captionId"], e["applicationId"], e["sessionId"]) for e in hooks.events)
    assert seen == sorted([(status, started.captions_id, app_id, sid) for status in ("started", "started", "stopped", "stopped")]), hooks.events


def test_vonage_sdk_experience_composer(server, app_video):
    """`start_experience_composer`, `get_…`, `list_…`, `stop_…` as an application: a page rendered into its session."""
    from video_support import serve_page
    from vonage_video import ExperienceComposerOptions, SessionOptions, TokenOptions
    from vonage_video.models.enums import MediaMode, TokenRole
    video = app_video
    sid = video.create_session(SessionOptions(media_mode=MediaMode.ROUTED)).session_id
    token = video.generate_client_token(TokenOptions(session_id=sid, role=TokenRole.PUBLISHER))
    token = token.decode() if isinstance(token, bytes) else token
    keep = VideoPeer(server, sid, token)
    with serve_page("<!doctype html><body style='background: rgb(0, 0, 200)'>composed</body>", "/page") as url:
        try:
            composer = video.start_experience_composer(ExperienceComposerOptions(
                session_id=sid, token=token, url=url, max_duration=120, resolution="640x480"))
            assert composer.status == "starting" and composer.session_id == sid
            deadline = time.monotonic() + 30
            while video.get_experience_composer(composer.id).status == "starting" and time.monotonic() < deadline:
                time.sleep(0.2)
            started = video.get_experience_composer(composer.id)
            assert started.status == "started" and started.stream_id, started
            assert keep.wait_push("video:streamCreated", timeout=5)["stream"]["streamId"] == started.stream_id
            composers, count, _ = video.list_experience_composers()
            assert count == 1 and composers[0].id == composer.id and composers[0].application_id
            video.stop_experience_composer(composer.id)
            assert keep.wait_push("video:streamDestroyed", timeout=10)["stream"]["streamId"] == started.stream_id
            deadline = time.monotonic() + 10
            while video.get_experience_composer(composer.id).status != "stopped" and time.monotonic() < deadline:
                time.sleep(0.2)
            assert video.get_experience_composer(composer.id).status == "stopped"
        finally:
            keep.close()
