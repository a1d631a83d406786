"""Protocol tests of the strings a request carries (each on a server of its own): a NUL in
any string of a frame (a program, a read's queries, a credential, a cancel target, a
subscription) is refused with a clear error and changes nothing, for a viewer and an
admin; replies are valid UTF-8 even when a message is cut inside a character; the URL's
?kg= with an encoded NUL, a raw NUL, or a name over 128 bytes is refused as an unknown
graph is (never replaced by `default`); an upgrade with a Sec-WebSocket-Version other than
13 is refused (426); the Bearer scheme of /metrics is case-insensitive; a non-admin's
`.kg list` and `.kg acl list` show only what it may access.

Alone: tests/protocol/strings.py --server-bin PATH."""

import asyncio
import json


from common import (KEY, OwnServer, connect, expect_closed, http, login, run,
                    still_answers, still_serving)

NUL_REFUSED = "Invalid message format: strings may not contain the NUL character (\\u0000)"


def message_rows(f):
    assert f["type"] == "result" and f["columns"] == ["message"], f
    return [r[0] for r in f["rows"]]


async def raw_frame(c, text):
    """Sends text as it is (json.dumps would escape nothing else) and reads the reply."""
    await c.ws.send(text)
    return json.loads(await asyncio.wait_for(c.ws.recv(), 30))


async def make_viewer(admin, name, password, kgs=("default",)):
    f = await run(admin, ".user create %s %s viewer" % (name, password))
    assert f["type"] == "result", f
    for kg in kgs:
        f = await run(admin, ".kg acl grant %s %s viewer" % (kg, name))
        assert f["type"] == "result", f


async def t_nul_in_program(binary):
    with OwnServer(binary) as srv:
        admin = await connect(srv)
        await run(admin, "+m[(1), (2)]")
        await make_viewer(admin, "vic", "pw-vic-1")
        viewer, f = await login(srv, "vic", "pw-vic-1")
        assert f["type"] == "authenticated", f
        # As a viewer, a query with a NUL: the frame is refused, with its id.
        for who, program in ((viewer, "?m\u0000(1)"), (viewer, "?m(X)\u0000"),
                             (viewer, "\u0000"), (admin, "+m\u0000(1)"),
                             (admin, "-m\u0000(1)"), (admin, "+m(3)\n+m(4)\u0000junk"),
                             (admin, ".kg create x\u0000y"), (admin, ".user list\u0000")):
            f = await run(who, program, "n1")
            assert f == {"type": "error", "id": "n1", "code": "invalid_request",
                         "message": NUL_REFUSED}, (program, f)
            await still_answers(who)
        # Nothing of it ran: m holds what it held, no graph was created.
        f = await run(admin, "?m(X)")
        assert sorted(f["rows"]) == [[1], [2]], f
        f = await run(admin, ".kg list")
        assert not any("x" in r for r in message_rows(f)[1:]), f
        # Every other string of a frame is refused the same way.
        f = await admin.call({"type": "read", "id": "r1", "queries": {"q\u0000": "?m(X)"}})
        assert f["code"] == "invalid_request" and "NUL" in f["message"], f  # jansson's
        for frame in ({"type": "read", "id": "r1", "queries": {"q": "?m(X)\u0000"}},
                      {"type": "execute", "id": "r1", "program": "+m(5)", "expect_revision": 0,
                       "expect_relations": ["m\u0000"]},
                      {"type": "cancel", "id": "r1", "target": "a\u0000b"},
                      {"type": "subscribe", "id": "r1",
                       "queries": [{"name": "q", "query": "?m(X)\u0000"}]},
                      {"type": "ping\u0000", "id": "r1"}):
            f = await admin.call(frame)
            assert f == {"type": "error", "id": "r1", "code": "invalid_request",
                         "message": NUL_REFUSED}, (frame, f)
        f = await run(admin, "?m(X)")
        assert sorted(f["rows"]) == [[1], [2]], f
        # Other control bytes are the engine's to judge; the reply is well-formed JSON.
        for b in list(range(1, 32)) + [127]:
            f = await run(viewer, "?m(X)" + chr(b), "c")
            assert f["id"] == "c" and f["type"] in ("result", "error"), (b, f)
        await still_answers(viewer)
        await still_answers(admin)


async def t_nul_in_credentials(binary):
    with OwnServer(binary) as srv:
        admin = await connect(srv)
        await make_viewer(admin, "att", "pw-att-1")
        # A name with a NUL is not the name before it (the original compared up to it).
        for user, password in (("att\u0000x", "pw-att-1"), ("att", "pw-att-1\u0000x"),
                               ("\u0000", "pw-att-1")):
            c, f = await login(srv, user, password)
            assert f == {"type": "auth_error", "code": "invalid_request",
                         "message": NUL_REFUSED}, (user, password, f)
            await c.ws.close()
        c = await connect(srv, auth=False)
        f = await c.call({"type": "authenticate", "api_key": KEY + "\u0000x", "id": "k"})
        assert f == {"type": "auth_error", "id": "k", "code": "invalid_request",
                     "message": NUL_REFUSED}, f
        await c.ws.close()
        c, f = await login(srv, "att", "pw-att-1")
        assert f["type"] == "authenticated" and f["role"] == "viewer", f
        await still_answers(c)


async def t_replies_are_utf8(binary):
    with OwnServer(binary) as srv:
        c = await connect(srv)
        # The unknown type is cut at 64 bytes, inside the two-byte character: the reply
        # still decodes (websockets closes on a text frame that is not UTF-8).
        f = await c.call({"type": "x" * 63 + "\u00e9", "id": "u"})
        assert f["code"] == "invalid_request" and f["id"] == "u", f
        assert f["message"] == "Invalid message format: unknown type '%s\ufffd'" % ("x" * 63), f
        await still_answers(c)


async def upgrade(port, path, version="13"):
    """A raw upgrade request; the server's status line and the whole head."""
    r, w = await asyncio.open_connection("127.0.0.1", port)
    head = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" % path)
    if version is not None:
        head += "Sec-WebSocket-Version: %s\r\n" % version
    w.write(head.encode("latin-1") + b"\r\n")
    await w.drain()
    out = b""
    while b"\r\n\r\n" not in out:
        chunk = await asyncio.wait_for(r.read(4096), 10)
        if not chunk:
            break
        out += chunk
    w.close()
    return out.split(b"\r\n")[0].decode(), out.decode("latin-1")


async def t_url_kg(binary):
    with OwnServer(binary) as srv:
        admin = await connect(srv)
        long_name = "g" * 129
        # A graph whose name is the first 128 bytes of the long one exists: the long name
        # must not open it either.
        f = await run(admin, ".kg create %s\n.kg use default" % long_name[:128])
        assert f["type"] == "result", f
        for kg, shown in ((long_name, long_name[:128] + "..."), ("a" * 300, "a" * 128 + "..."),
                          ("a%00b", "a%00b"), ("%00", "%00")):
            c = await connect(srv, auth=False, kg=kg)
            f = await c.call({"type": "authenticate", "api_key": KEY, "id": "a"})
            assert f == {"type": "error", "id": "a", "code": "not_found",
                         "message": "Knowledge graph '%s' not found: Knowledge graph not "
                                    "found: %s" % (shown, shown)}, (kg, f)
            frames, code = await expect_closed(c)
            assert code == 1008 and frames == [], (kg, frames, code)
        # A raw NUL is not a URL: the request is refused before any upgrade.
        status, _ = await upgrade(srv.port, "/ws?kg=a\x00b")
        assert status == "HTTP/1.1 400 Bad Request", status
        # A name of exactly 128 bytes is a name.
        c = await connect(srv, kg=long_name[:128])
        f = await run(c, ".kg")
        assert message_rows(f) == ["Current knowledge graph: " + long_name[:128]], f
        await still_serving(srv)


async def t_ws_version(binary):
    with OwnServer(binary) as srv:
        for version in ("8", "12", "14", "", "13, 8", None):
            status, head = await upgrade(srv.port, "/ws", version)
            assert status == "HTTP/1.1 426 Upgrade Required", (version, head)
            assert "\r\nSec-WebSocket-Version: 13\r\n" in head, (version, head)
        status, head = await upgrade(srv.port, "/ws", "13")
        assert status == "HTTP/1.1 101 Switching Protocols", head
        await still_serving(srv)


async def t_bearer_scheme(binary):
    with OwnServer(binary) as srv:
        for scheme in ("Bearer ", "bearer ", "BEARER ", "bEaReR  "):
            st, body = http(srv, "/metrics", {"Authorization": scheme + KEY})
            assert st == 200 and json.loads(body)["success"], (scheme, st, body)
        for header in ("Bearer" + KEY, "Basic " + KEY, "Bearer x" + KEY, KEY):
            st, _ = http(srv, "/metrics", {"Authorization": header})
            assert st == 401, (header, st)


async def t_visible_graphs_and_acls(binary):
    with OwnServer(binary) as srv:
        admin = await connect(srv)
        f = await run(admin, ".kg create shared\n.kg create secret\n.kg create owned\n"
                             ".kg use default")
        assert f["type"] == "result", f
        await make_viewer(admin, "vic", "pw-vic-1", ("default", "shared"))
        await make_viewer(admin, "wen", "pw-wen-1", ("default", "secret"))
        f = await run(admin, ".user create own pw-own-1 editor")
        assert f["type"] == "result", f
        for grant in ("owned own owner", "owned vic viewer", "default own editor"):
            f = await run(admin, ".kg acl grant " + grant)
            assert f["type"] == "result", f

        vic, f = await login(srv, "vic", "pw-vic-1")
        assert f["type"] == "authenticated", f
        f = await run(vic, ".kg list")
        assert message_rows(f) == ["Knowledge Graphs:", "  default *", "  owned", "  shared"], f
        # In a program of several statements too.
        f = await run(vic, ".kg use shared\n.kg list")
        assert message_rows(f)[-4:] == ["Knowledge Graphs:", "  default", "  owned",
                                        "  shared *"], f
        # Its own entry only, on a graph it reads but does not own.
        f = await run(vic, ".kg acl list default")
        assert message_rows(f) == ["ACL entries for 'default':\n  vic: viewer"], f
        f = await run(vic, ".kg acl list owned")
        assert message_rows(f) == ["ACL entries for 'owned':\n  vic: viewer"], f
        f = await run(vic, ".kg acl list secret")
        assert f["type"] == "error" and f["code"] == "access_denied", f

        # An owner sees every entry of its graph, an admin every graph and entry.
        own, f = await login(srv, "own", "pw-own-1")
        assert f["type"] == "authenticated", f
        f = await run(own, ".kg acl list owned")
        assert message_rows(f) == ["ACL entries for 'owned':\n  own: owner\n  vic: viewer"], f
        f = await run(own, ".kg acl list default")
        assert message_rows(f) == ["ACL entries for 'default':\n  own: editor"], f
        f = await run(own, ".kg list")
        assert message_rows(f) == ["Knowledge Graphs:", "  default *", "  owned"], f
        f = await run(admin, ".kg list")
        assert message_rows(f) == ["Knowledge Graphs:", "  default *", "  owned", "  secret",
                                   "  shared"], f
        f = await run(admin, ".kg acl list default")
        assert message_rows(f) == ["ACL entries for 'default':\n  own: editor\n  vic: viewer\n"
                                   "  wen: viewer"], f


TESTS = [t_nul_in_program, t_nul_in_credentials, t_replies_are_utf8, t_url_kg, t_ws_version,
         t_bearer_scheme, t_visible_graphs_and_acls]


if __name__ == "__main__":
    import argparse
    import os
    import sys

    from run import run_tests
    ap = argparse.ArgumentParser()
    ap.add_argument("--server-bin", required=True)
    ap.add_argument("tests", nargs="*", help="names of tests to run (default: all)")
    args = ap.parse_args()
    chosen = [t for t in TESTS if not args.tests or t.__name__ in args.tests]
    sys.exit(1 if asyncio.run(run_tests(chosen, os.path.abspath(args.server_bin))) else 0)
