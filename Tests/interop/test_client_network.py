"""The SDK's media beyond one loopback server: a client on the far side of a link, clients peer to peer in a relayed
session, and clients whose media goes only through a TURN server (coturn on loopback), all through
`switchboard client` (docs/sdk.md, "Media sockets", "Relayed sessions", "Through TURN")."""
import subprocess
import time

import pytest
import requests

from rig import REPO, client, client_lines as lines, server_binary, start_server, wait_until
from turn_support import allocations, coturn, releases, turn, turn_server  # noqa: F401 (fixtures)
from video_support import NAMESPACES, beyond_loopback_server, linked_namespace, opentok_client

opentok = pytest.importorskip("opentok")
RECORDING = REPO / "Tests" / "Fixtures" / "media" / "vp8-320x240.ivf"
# Each namespace test's own addresses (this side's, the namespace's), apart from other files' (video_support.NEAR), whose
# tests can run at the same time.
LINK_NEAR, LINK_FAR = "10.207.0.1", "10.207.0.2"
TURN_NEAR, TURN_FAR = "10.207.1.1", "10.207.1.2"


@pytest.fixture(scope="module")
def server():
    s = start_server(dev=True, https=False)
    yield s
    s.stop()
    s.cleanup()


@pytest.mark.skipif(not NAMESPACES, reason="needs root, ip and tc for a network namespace")
def test_video_clients_on_either_side_of_a_link_send_each_other_media():
    """The SDK's media does not assume the server is on the same machine: a client in a network namespace of the
    test's own (its only way out a veth link to the server's address) publishes and subscribes, and so does one on
    this side; each receives the other's video."""
    with linked_namespace("sdklink", LINK_NEAR, LINK_FAR) as (namespace, _):
        server = beyond_loopback_server(LINK_NEAR)
        try:
            ot = opentok_client(server)
            sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
            token = lambda name: ot.generate_token(sid, role=opentok.Roles.publisher, data=f"name={name}")
            far = far_client(namespace, f"http://{LINK_NEAR}:{server.http_port}", sid, token("far"))
            near = client(server, "video", "join", sid, "--token", token("near"), "--publish", str(RECORDING), seconds=10)
            f, n = lines(far), lines(near)
            print("far:", f, "\nnear:", n)
            published = {"far": next(l["published"] for l in f if "published" in l),
                         "near": next(l["published"] for l in n if "published" in l)}
            for got, other in ((f, "near"), (n, "far")):
                received = next(l for l in got if l.get("received") == published[other])
                assert received["frames"] > 60 and received["keyframes"] >= 1, received
        finally:
            server.stop()
            server.cleanup()


def test_video_clients_in_a_relayed_session_send_each_other_media_peer_to_peer(server):
    """A session the `opentok` SDK makes by default is relayed: the SDK's clients then connect their media to each
    other (each publisher offers every subscriber a connection of its own through `video:relay`, with its host
    candidates; the other end's trickle in), and each receives the other's video and audio."""
    ot = opentok_client(server)
    sid = ot.create_session().session_id
    token = lambda name: ot.generate_token(sid, role=opentok.Roles.publisher, data=f"name={name}")
    # On loopback only: each offers 127.0.0.1 alone and checks the other's loopback candidates alone.
    alice = client(server, "video", "join", sid, "--token", token("alice"), "--publish", str(RECORDING), "--media-address", "127.0.0.1", seconds=10)
    time.sleep(1)
    bob = client(server, "video", "join", sid, "--token", token("bob"), "--publish", str(RECORDING), "--media-address", "127.0.0.1", seconds=9)
    a, b = lines(alice), lines(bob)
    print("alice:", a, "\nbob:", b)
    published = {"alice": next(l["published"] for l in a if "published" in l), "bob": next(l["published"] for l in b if "published" in l)}
    for got, other in ((a, "bob"), (b, "alice")):
        assert not [l for l in got if l.get("event", "").startswith("error")], got
        received = next(l for l in got if l.get("received") == published[other])
        assert received["frames"] > 60 and received["keyframes"] >= 1 and (received["width"], received["height"]) == (320, 240), received
    offers = [l["event"] for l in b if "description(type: \"offer\"" in l.get("event", "")]
    assert offers and all(c.startswith("a=candidate:1 1 udp ") and " 127.0.0.1 " in c for o in offers
                          for c in o.replace("\\r\\n", "\n").split("\n") if c.startswith("a=candidate")), offers


def sdk_connection(printed):
    return next(l["event"].split()[1] for l in printed if l.get("event", "").startswith("connected "))


def test_an_sdk_client_told_to_use_only_turn_reaches_the_server_through_it(turn, turn_server):
    """`switchboard client video join --ice-transport relay` (the SDK's `iceTransportPolicy: .relay`) sends and receives
    all its media through the TURN server the server hands it, in a routed session: a client on its own addresses and it
    receive each other's video through the SFU, and coturn granted the relay-only client an allocation."""
    ot = opentok_client(turn_server)
    sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
    join_args = lambda name: ["video", "join", sid, "--token", ot.generate_token(sid, data=f"name={name}"), "--publish", str(RECORDING),
                              "--name", name]
    relayed = client(turn_server, *join_args("relayed"), "--ice-transport", "relay", seconds=10)
    time.sleep(1)
    direct = client(turn_server, *join_args("direct"), seconds=9)
    r, d = lines(relayed, timeout=40), lines(direct, timeout=40)
    published = {"relayed": next(l["published"] for l in r if "published" in l), "direct": next(l["published"] for l in d if "published" in l)}
    for got, other in ((r, "direct"), (d, "relayed")):
        received = next(l for l in got if l.get("received") == published[other])
        assert received["frames"] > 60 and received["keyframes"] >= 1, (other, received)
        # The other client (by default) has a relayed candidate too, but its own address answers first.
        assert received["through_turn"] == (got is r), (other, received)
    assert allocations(turn, sdk_connection(r)), "no TURN allocation for the relay-only client"
    # Leaving, each client deleted its allocations rather than leave them to lapse (ten minutes).
    for printed in (r, d):
        wait_until(lambda: len(releases(turn, sdk_connection(printed))) == len(allocations(turn, sdk_connection(printed))) > 0,
                   timeout=5, what="the allocations released")


def test_a_room_client_told_to_use_only_turn_is_heard_through_it(turn, turn_server, tmp_path):
    """`switchboard client room join --ice-transport relay` (the SDK's `Session.Options.iceTransportPolicy = .relay`):
    a conversation's audio, both its connections, through the TURN server of its login's `ice_servers`; a client on
    its own addresses in the same room hears its tone and it hears the other's."""
    room = requests.post(turn_server.http_url + "/rooms/api/rooms", json={"display_name": "relay-room"}, timeout=10).json()["id"]
    before, released_before = len(allocations(turn, ":SES-")), len(releases(turn, ":SES-"))
    relayed = client(turn_server, "room", "join", room, "--as", "rita", "--play", "tone:440", "--ice-transport", "relay", seconds=9)
    time.sleep(1)
    direct = client(turn_server, "room", "join", room, "--as", "dan", "--play", "tone:880", seconds=8)
    r, d = lines(relayed, timeout=40), lines(direct, timeout=40)
    r_member = next(l["member"] for l in r if "joined" in l)
    d_member = next(l["member"] for l in d if "joined" in l)
    heard_by_dan = next(l for l in d if l.get("heard") == r_member)
    heard_by_rita = next(l for l in r if l.get("heard") == d_member)
    assert abs(heard_by_dan["frequency"] - 440) < 40 and heard_by_dan["frames"] > 50, heard_by_dan
    assert abs(heard_by_rita["frequency"] - 880) < 60 and heard_by_rita["frames"] > 50, heard_by_rita
    # Its publishing and its receiving connections through the relay, the other client's on its own address (each of
    # the four has an allocation: the default gathers a relayed candidate too).
    assert next(l for l in r if "through_turn" in l)["through_turn"] == {"sending": True, "receiving": True}, r
    assert next(l for l in d if "through_turn" in l)["through_turn"] == {"sending": False, "receiving": False}, d
    assert len(allocations(turn, ":SES-")) - before == 4, open(turn["log"]).read()[-3000:]
    wait_until(lambda: len(releases(turn, ":SES-")) - released_before == 4, timeout=5, what="the four allocations released")


def far_client(namespace, server_url, session_id, token, *extra, seconds=10):
    """`switchboard client video join` inside `namespace`, publishing the recording."""
    return subprocess.Popen(["ip", "netns", "exec", namespace, str(server_binary()), "client", "video", "join", session_id,
                             "--token", token, "--publish", str(RECORDING), "--server", server_url, "--seconds", str(seconds),
                             "--json", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.skipif(not NAMESPACES, reason="needs root, ip and tc for a network namespace")
def test_an_sdk_client_that_cannot_reach_the_servers_media_address_goes_through_turn():
    """By default (`iceTransportPolicy: .all`) the SDK's media connection also gathers a relayed candidate on the TURN
    server the server hands out, and checks the server's candidate both ways: a client in a network namespace whose
    signaling reaches the server but whose packets cannot reach the address the server's media announces (the server's
    loopback) is connected through coturn, and it and a client on this side receive each other's video. coturn, on the
    same machine, relays from the link's address to the server's loopback one: the server, listening on every address,
    binds its media to the address it announces, so its answers come from the address coturn sent to (which coturn's
    permission names; from a socket on every address they came from the link's, and coturn dropped them)."""
    with linked_namespace("sdkturn", TURN_NEAR, TURN_FAR) as (namespace, _), coturn(TURN_NEAR) as relay:
        server = start_server(["--media-port", "0", "--media-announce", "127.0.0.1", "--log-level", "warn",
                               "--ice-servers", relay["url"], "--turn-secret", relay["secret"]], https=False, host="0.0.0.0")
        try:
            ot = opentok_client(server)
            sid = ot.create_session(media_mode=opentok.MediaModes.routed).session_id
            token = lambda name: ot.generate_token(sid, role=opentok.Roles.publisher, data=f"name={name}")
            far = far_client(namespace, f"http://{TURN_NEAR}:{server.http_port}", sid, token("far"))
            near = client(server, "video", "join", sid, "--token", token("near"), "--publish", str(RECORDING), seconds=10)
            f, n = lines(far, timeout=40), lines(near, timeout=40)
            print("far:", f, "\nnear:", n)
            published = {"far": next(l["published"] for l in f if "published" in l),
                         "near": next(l["published"] for l in n if "published" in l)}
            for got, other in ((f, "near"), (n, "far")):
                received = next(l for l in got if l.get("received") == published[other])
                assert received["frames"] > 60 and received["keyframes"] >= 1, (other, received)
                assert received["through_turn"] == (got is f), (other, received)
        finally:
            server.stop()
            server.cleanup()


@pytest.mark.skipif(not NAMESPACES, reason="needs root, ip and tc for a network namespace")
def test_sdk_clients_on_networks_that_cannot_reach_each_other_meet_at_a_turn_relay():
    """Peer to peer (a relayed session), two SDK clients in two network namespaces with no route between them, each
    reaching the server and coturn on this side: their host candidates cannot connect, their relayed ones can, and each
    receives the other's video through the relay."""
    a_near, a_far, b_near, b_far = "10.207.2.1", "10.207.2.2", "10.207.3.1", "10.207.3.2"
    with linked_namespace("p2a", a_near, a_far) as (a_ns, _), linked_namespace("p2b", b_near, b_far) as (b_ns, _), \
            coturn(a_near) as relay:
        # b reaches coturn (on a's link) through this namespace, which it can without this one forwarding anything.
        subprocess.run(["ip", "netns", "exec", b_ns, "ip", "route", "add", f"{a_near}/32", "via", b_near], check=True)
        server = start_server(["--media-port", "0", "--log-level", "warn", "--ice-servers", relay["url"],
                               "--turn-secret", relay["secret"]], https=False, host="0.0.0.0")
        try:
            ot = opentok_client(server)
            sid = ot.create_session().session_id
            token = lambda name: ot.generate_token(sid, role=opentok.Roles.publisher, data=f"name={name}")
            alice = far_client(a_ns, f"http://{a_near}:{server.http_port}", sid, token("alice"), seconds=12)
            time.sleep(1)
            bob = far_client(b_ns, f"http://{b_near}:{server.http_port}", sid, token("bob"), seconds=11)
            a, b = lines(alice, timeout=40), lines(bob, timeout=40)
            print("alice:", a, "\nbob:", b)
            for ns, other in ((a_ns, b_far), (b_ns, a_far)):
                route = subprocess.run(["ip", "netns", "exec", ns, "ip", "route", "get", other], capture_output=True, text=True)
                assert route.returncode != 0, f"the namespaces reach each other ({route.stdout}): the test shows nothing"
            published = {"alice": next(l["published"] for l in a if "published" in l),
                         "bob": next(l["published"] for l in b if "published" in l)}
            for got, other in ((a, "bob"), (b, "alice")):
                received = next(l for l in got if l.get("received") == published[other])
                assert received["frames"] > 60 and received["keyframes"] >= 1, (other, received)
        finally:
            server.stop()
            server.cleanup()
