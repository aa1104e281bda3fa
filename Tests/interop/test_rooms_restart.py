"""Members that were live in a room when the server died: after the restart each leaves after the leave
grace (reason `disconnected`), as a dropped connection would, unless its user comes back in time."""
import asyncio
import shutil
import tempfile

from rig import start_server
from rooms_support import AudioMember, Realtime, auth, create_room, loopback_ice, sine_track, wait_for

GRACE = 3.0


def test_members_live_at_a_crash_leave_after_the_grace_unless_they_return():
    loopback_ice()
    data = tempfile.mkdtemp(prefix="switchboard-restart-")
    env = {"SWITCHBOARD_ROOM_LEAVE_GRACE": str(GRACE)}
    server = start_server(["--threads", "1"], https=False, dev=True, data_dir=data, env=env)
    try:
        api = server.http_url + "/rooms/api"
        room = create_room(api, "Restart")
        tokens = {name: auth(api, name)["jwt"] for name in ("stays", "gone")}

        async def live(name):
            rt = await Realtime(server.ws_url).connect()
            await rt.login(tokens[name])
            joined = await rt.request("rtc:join", {"conversation_id": room})
            member = AudioMember(rt, room)
            await member.publish(sine_track(440.0))
            return rt, member, joined["member_id"]

        async def before():
            members = {}
            for name in ("stays", "gone"):
                members[name] = await live(name)
            return {name: m[2] for name, m in members.items()}

        ids = asyncio.run(before())
        server.kill()
        server = start_server(["--threads", "1"], https=False, dev=True, data_dir=data, env=env,
                              http_port=server.http_port)

        async def after():
            rt, member, member_id = await live("stays")
            assert member_id == ids["stays"], "coming back reuses the member that was live"
            await wait_for(lambda: rt.seen("member:left", member_id=ids["gone"]), timeout=GRACE + 10,
                           what="the member that did not return leaves")
            left = rt.seen("member:left", member_id=ids["gone"])[0]
            assert "disconnected" in str(left.get("body")), left
            # Well past the grace: the member whose user came back is still in the room.
            await asyncio.sleep(GRACE + 1)
            assert not rt.seen("member:left", member_id=ids["stays"])
            await member.close()
            await rt.close()

        asyncio.run(after())
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)
