"""Protocol tests of the web client's files (http.gui) and of CORS, each on a server of its
own: MIME types, the index.html fallback of client routes, caching headers and 304s,
HEAD, large files, paths that try to leave the directory (`..`, percent-encoded dots and
slashes, NUL, backslashes, symbolic links pointing out), the server's own routes keeping
priority, the GUI off (404 as before), CORS headers and preflights with origins listed,
allowed all or not configured, and the Origin check of WebSocket upgrades. Requests go
over raw sockets so that no client library normalizes the paths."""

import asyncio
import os
import shutil
import socket
import tempfile

from common import OwnServer, connect, prometheus, still_answers

NO_RATE = ["--set", "http.rate_limit.per_ip_max_rps=0"]
SECRET = "top-secret-" + os.urandom(6).hex()
INDEX = "<!doctype html><title>client</title>"
MIME = {
    "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8",
    "mjs": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
    "json": "application/json", "svg": "image/svg+xml", "png": "image/png",
    "jpg": "image/jpeg", "gif": "image/gif", "ico": "image/x-icon", "woff": "font/woff",
    "woff2": "font/woff2", "ttf": "font/ttf", "wasm": "application/wasm",
    "map": "application/json", "txt": "text/plain; charset=utf-8",
    "bin": "application/octet-stream", "weird": "application/octet-stream",
}


def request(port, method, path, headers=(), raw=None):
    """One request on its own connection: (status, headers with lower-case names, body).
    `raw` is sent as the request line's target byte for byte."""
    target = raw if raw is not None else path.encode()
    lines = [method.encode() + b" " + target + b" HTTP/1.1", b"Host: 127.0.0.1:%d" % port,
             b"Connection: close"] + [("%s: %s" % h).encode() for h in headers]
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(b"\r\n".join(lines) + b"\r\n\r\n")
        out = b""
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            out += chunk
    head, _, body = out.partition(b"\r\n\r\n")
    first, *rest = head.decode("latin-1").split("\r\n")
    hdrs = {}
    for line in rest:
        k, _, v = line.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return int(first.split(" ")[1]), hdrs, body


def make_gui():
    """A GUI directory inside a temporary one that also holds a secret file beside it."""
    top = tempfile.mkdtemp(prefix="il-gui-")
    gui = os.path.join(top, "dist")
    os.makedirs(os.path.join(gui, "assets"))
    os.makedirs(os.path.join(gui, "docs"))
    os.makedirs(os.path.join(gui, ".well-known"))
    os.makedirs(os.path.join(top, "outside"))
    for p, text in [("index.html", INDEX), ("docs/index.html", "docs-index"),
                    ("assets/app-1a2b3c.js", "console.log('app')"),
                    ("health", "not the health endpoint"), ("robots.txt", "User-agent: *"),
                    (".env", SECRET), (".well-known/security.txt", "Contact: x")]:
        with open(os.path.join(gui, p), "w") as f:
            f.write(text)
    for ext in MIME:
        with open(os.path.join(gui, "assets", "file." + ext), "w") as f:
            f.write("content of " + ext)
    with open(os.path.join(top, "secret.txt"), "w") as f:
        f.write(SECRET)
    with open(os.path.join(top, "outside", "secret.txt"), "w") as f:
        f.write(SECRET)
    os.symlink(os.path.join(top, "secret.txt"), os.path.join(gui, "leak.txt"))
    os.symlink(os.path.join(top, "secret.txt"), os.path.join(gui, "leak"))
    os.symlink(os.path.join(top, "outside"), os.path.join(gui, "outdir"))
    os.symlink("assets/app-1a2b3c.js", os.path.join(gui, "alias.js"))
    os.mkfifo(os.path.join(gui, "pipe.js"))
    return top, gui


def gui_args(gui, *more):
    return NO_RATE + ["--set", "http.gui.static_dir=" + gui] + list(more)


async def t_static_types_and_fallback(binary):
    """Each extension's Content-Type; index.html at / and for client routes (no
    extension), a 404 for a missing asset; the server's own routes first; caching headers
    by path; HEAD without a body; a directory's index.html; a symlink inside the
    directory followed."""
    top, gui = make_gui()
    try:
        with OwnServer(binary, gui_args(gui)) as srv:
            assert "GUI:     enabled" in srv.output(), srv.output()
            p = srv.port
            for ext, ctype in MIME.items():
                st, h, body = request(p, "GET", "/assets/file." + ext)
                assert st == 200 and h["content-type"] == ctype, (ext, st, h)
                assert body == ("content of " + ext).encode(), body
                # hashed assets are immutable; a page is always revalidated
                assert h["cache-control"] == ("no-cache" if ext == "html" else
                                              "public, max-age=31536000, immutable"), h
                assert h["x-content-type-options"] == "nosniff", h
            for path in ("/", "/index.html", "/dashboard", "/kg/default/relations",
                         "/deep/route/", "/x?tab=2"):
                st, h, body = request(p, "GET", path)
                assert st == 200 and body == INDEX.encode(), (path, st, body)
                assert h["content-type"] == "text/html; charset=utf-8", (path, h)
                assert h["cache-control"] == "no-cache", (path, h)
                assert h["etag"] and h["last-modified"].endswith(" GMT"), h
            st, h, body = request(p, "GET", "/docs/")
            assert st == 200 and body == b"docs-index", (st, body)
            assert request(p, "GET", "/robots.txt")[1]["cache-control"] == "no-cache"
            # Hidden files are not served (but .well-known is).
            for path in ("/.env", "/assets/.env", "/.git/config"):
                st, h, body = request(p, "GET", path)
                assert st == 404 and SECRET.encode() not in body, (path, st, body)
            st, h, body = request(p, "GET", "/.well-known/security.txt")
            assert st == 200 and body == b"Contact: x", (st, body)
            st, h, body = request(p, "GET", "/alias.js")
            assert st == 200 and body == b"console.log('app')", (st, body)
            for path in ("/missing.js", "/assets/missing-123.css", "/img/logo.png"):
                st, h, body = request(p, "GET", path)
                assert st == 404 and b"NOT_FOUND" in body, (path, st, body)
            # The server's routes come first, a file named like one notwithstanding.
            st, h, body = request(p, "GET", "/health")
            assert st == 200 and b'"healthy"' in body, body
            for path in ("/api/nothing", "/metrics/nothing", "/v1/nothing", "/ws/x"):
                st, h, body = request(p, "GET", path)
                assert st == 404 and b"NOT_FOUND" in body, (path, st, body)
            st, h, body = request(p, "POST", "/")
            assert st == 404 and b"NOT_FOUND" in body, (st, body)
            st, h, body = request(p, "HEAD", "/assets/file.css")
            assert st == 200 and body == b"" and h["content-length"] == "14", (st, h, body)
            # A FIFO is not a file to serve, and opening it does not stall the server.
            st, h, body = request(p, "GET", "/pipe.js")
            assert st == 404, (st, body)
            c = await connect(srv)
            await still_answers(c)
            await c.ws.close()
    finally:
        shutil.rmtree(top)


async def t_static_large_files(binary):
    """Files over the size read into a response (256 KiB) come from a mapping: whole and
    exact, for several clients at once, and HEAD tells their length."""
    top, gui = make_gui()
    data = os.urandom(3 * 1024 * 1024 + 17)
    with open(os.path.join(gui, "assets", "big.wasm"), "wb") as f:
        f.write(data)
    stalled = []
    try:
        with OwnServer(binary, gui_args(gui)) as srv:
            loop = asyncio.get_running_loop()
            results = await asyncio.gather(*[
                loop.run_in_executor(None, request, srv.port, "GET", "/assets/big.wasm")
                for _ in range(8)])
            for st, h, body in results:
                assert st == 200 and h["content-type"] == "application/wasm", (st, h)
                assert int(h["content-length"]) == len(data) and body == data, len(body)
            st, h, body = request(srv.port, "HEAD", "/assets/big.wasm")
            assert st == 200 and int(h["content-length"]) == len(data) and body == b""
            c = await connect(srv)
            await still_answers(c)
            await c.ws.close()
            # Readers that stop reading mid-file, left so while the server stops: it
            # exits cleanly all the same (OwnServer checks), their mappings released.
            for _ in range(4):
                s = socket.create_connection(("127.0.0.1", srv.port))
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.sendall(b"GET /assets/big.wasm HTTP/1.1\r\nHost: x\r\n\r\n")
                stalled.append(s)
            await asyncio.sleep(0.2)
            assert request(srv.port, "GET", "/assets/app-1a2b3c.js")[0] == 200
    finally:
        for s in stalled:
            s.close()
        shutil.rmtree(top)


async def t_static_conditional(binary):
    """ETag and Last-Modified come back; If-None-Match with the tag (alone, weak, in a
    list, or `*`) and If-Modified-Since not before the file's time give 304 without a
    body; another tag, an older or a future date give the file."""
    top, gui = make_gui()
    try:
        with OwnServer(binary, gui_args(gui)) as srv:
            p = srv.port
            st, h, body = request(p, "GET", "/assets/app-1a2b3c.js")
            etag, modified = h["etag"], h["last-modified"]
            assert st == 200 and etag.startswith('"'), h
            for inm in (etag, "W/" + etag, '"nope", ' + etag, "*"):
                st, h2, body = request(p, "GET", "/assets/app-1a2b3c.js",
                                       [("If-None-Match", inm)])
                assert st == 304 and body == b"" and h2["etag"] == etag, (inm, st, body)
                assert h2["cache-control"] == "public, max-age=31536000, immutable", h2
            st, h2, body = request(p, "GET", "/assets/app-1a2b3c.js",
                                   [("If-None-Match", '"other"')])
            assert st == 200 and body == b"console.log('app')", st
            # If-None-Match wins over If-Modified-Since.
            st, _, _ = request(p, "GET", "/assets/app-1a2b3c.js",
                               [("If-None-Match", '"other"'), ("If-Modified-Since", modified)])
            assert st == 200, st
            st, _, body = request(p, "GET", "/assets/app-1a2b3c.js",
                                  [("If-Modified-Since", modified)])
            assert st == 304 and body == b"", st
            for date in ("Thu, 01 Jan 1970 00:00:10 GMT", "Fri, 01 Jan 2100 00:00:00 GMT",
                         "yesterday"):
                st, _, body = request(p, "GET", "/assets/app-1a2b3c.js",
                                      [("If-Modified-Since", date)])
                assert st == 200 and body == b"console.log('app')", (date, st)
            # The index, revalidated on each load, is 304 as well.
            st, h, _ = request(p, "GET", "/some/route")
            st, _, body = request(p, "GET", "/", [("If-None-Match", h["etag"])])
            assert st == 304 and body == b"", st
    finally:
        shutil.rmtree(top)


TRAVERSALS = [b"/../secret.txt", b"/assets/../../secret.txt", b"/%2e%2e/secret.txt",
              b"/%2E%2e/secret.txt", b"/%2e%2E/%2e%2e/secret.txt", b"/assets/..%2f..%2fsecret.txt",
              b"/assets/%2e%2e%2f%2e%2e%2fsecret.txt", b"/..%5csecret.txt", b"/..\\secret.txt",
              b"/%5c..%5c..%5csecret.txt", b"/index.html%00.js", b"/%00", b"/./index.html",
              b"/%2e/index.html", b"/assets/%zz.js", b"/assets/%2", b"/a%0d%0aSet-Cookie:x",
              b"/..", b"/%2e%2e"]


async def t_static_traversal(binary):
    """Paths that would leave the directory are refused (400), whatever their encoding;
    NUL and backslashes are refused; symbolic links to files or directories outside it
    are refused (403) rather than followed; no answer carries the secret beside it."""
    top, gui = make_gui()
    try:
        with OwnServer(binary, gui_args(gui)) as srv:
            p = srv.port
            for raw in TRAVERSALS:
                st, h, body = request(p, "GET", None, raw=raw)
                assert st == 400, (raw, st, body)
                assert SECRET.encode() not in body, raw
            for path in ("/leak.txt", "/leak", "/outdir/secret.txt", "/outdir/"):
                st, h, body = request(p, "GET", path)
                assert st == 403 and SECRET.encode() not in body, (path, st, body)
            c = await connect(srv)
            await still_answers(c)
            await c.ws.close()
    finally:
        shutil.rmtree(top)


async def t_static_off(binary):
    """http.gui.enabled = false: the directory is not served and every path outside the
    server's routes is the JSON 404 it was; so too when the directory does not exist (the
    default ./gui/dist, absent in the server's working directory)."""
    top, gui = make_gui()
    try:
        for args in (gui_args(gui, "--set", "http.gui.enabled=false"), NO_RATE):
            with OwnServer(binary, args) as srv:
                assert "GUI:     enabled" not in srv.output(), srv.output()
                assert args != NO_RATE or "GUI:     not served" in srv.output(), srv.output()
                for path in ("/", "/index.html", "/dashboard", "/assets/file.js"):
                    st, h, body = request(srv.port, "GET", path)
                    assert st == 404 and b"NOT_FOUND" in body, (args, path, st, body)
                assert request(srv.port, "GET", "/health")[0] == 200
    finally:
        shutil.rmtree(top)


APP = "http://app.example:3000"


async def t_cors(binary):
    """With origins listed: a listed Origin is echoed in Access-Control-Allow-Origin (with
    Vary: Origin) on every response, static files included; another gets none; preflights
    are answered 204 (methods, the requested headers, max age) or 403. With allow_all:
    `*`. Off (the default): no CORS header at all, and OPTIONS is the 404 it was."""
    top, gui = make_gui()
    try:
        listed = gui_args(gui, "--set", "http.cors_origins=%s,http://other.example" % APP)
        with OwnServer(binary, listed) as srv:
            p = srv.port
            for path in ("/health", "/", "/assets/file.css", "/nothing.js"):
                st, h, _ = request(p, "GET", path, [("Origin", APP)])
                assert h.get("access-control-allow-origin") == APP, (path, h)
                assert h.get("vary") == "Origin", (path, h)
                st, h, _ = request(p, "GET", path, [("Origin", "http://evil.example")])
                assert "access-control-allow-origin" not in h and h["vary"] == "Origin", h
                st, h, _ = request(p, "GET", path)
                assert "access-control-allow-origin" not in h, h
            st, h, body = request(p, "OPTIONS", "/health", [
                ("Origin", APP), ("Access-Control-Request-Method", "GET"),
                ("Access-Control-Request-Headers", "authorization, content-type")])
            assert st == 204 and body == b"", (st, body)
            assert h["access-control-allow-origin"] == APP, h
            assert "GET" in h["access-control-allow-methods"], h
            assert h["access-control-allow-headers"] == "authorization, content-type", h
            assert int(h["access-control-max-age"]) > 0 and "Origin" in h["vary"], h
            st, h, _ = request(p, "OPTIONS", "/health", [
                ("Origin", "http://evil.example"), ("Access-Control-Request-Method", "GET")])
            assert st == 403 and "access-control-allow-origin" not in h, (st, h)
            # Headers not made of header names are not echoed.
            st, h, _ = request(p, "OPTIONS", "/metrics", [
                ("Origin", APP), ("Access-Control-Request-Method", "GET"),
                ("Access-Control-Request-Headers", "a(b)")])
            assert st == 204 and "access-control-allow-headers" not in h, (st, h)
        with OwnServer(binary, NO_RATE + ["--set", "http.cors_allow_all=true"]) as srv:
            assert "http.cors_allow_all = true" in srv.output(), srv.output()
            st, h, _ = request(srv.port, "GET", "/health", [("Origin", "http://any.example")])
            assert h["access-control-allow-origin"] == "*" and st == 200, h
            st, h, _ = request(srv.port, "OPTIONS", "/health", [
                ("Origin", "http://any.example"), ("Access-Control-Request-Method", "GET")])
            assert st == 204 and h["access-control-allow-origin"] == "*", (st, h)
        with OwnServer(binary, gui_args(gui)) as srv:
            for path in ("/health", "/"):
                st, h, _ = request(srv.port, "GET", path, [("Origin", APP)])
                assert st == 200 and not any(k.startswith("access-control") for k in h), h
                assert "vary" not in h, h
            st, h, body = request(srv.port, "OPTIONS", "/health", [
                ("Origin", APP), ("Access-Control-Request-Method", "GET")])
            assert st == 404 and b"NOT_FOUND" in body, (st, body)
    finally:
        shutil.rmtree(top)


def upgrade_status(port, origin=None, host=None):
    lines = ["GET /ws HTTP/1.1", "Host: %s" % (host or "127.0.0.1:%d" % port),
             "Upgrade: websocket", "Connection: Upgrade",
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
    if origin is not None:
        lines.append("Origin: " + origin)
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        out = b""
        while b"\r\n" not in out:
            chunk = s.recv(4096)
            if not chunk:
                break
            out += chunk
    return int(out.split(b" ")[1])


async def t_ws_origin(binary):
    """WebSocket upgrades: no Origin (not a browser) and the server's own origin are
    accepted; another site's page is refused 403 unless its origin is listed or
    cors_allow_all is on."""
    with OwnServer(binary, NO_RATE) as srv:
        p = srv.port
        assert upgrade_status(p) == 101
        assert upgrade_status(p, "http://127.0.0.1:%d" % p) == 101
        assert upgrade_status(p, "http://LOCALHOST:%d" % p, "localhost:%d" % p) == 101
        assert upgrade_status(p, "http://example.com", "example.com:80") == 101
        assert upgrade_status(p, "https://example.com", "example.com") == 101
        refused = ("http://evil.example", "null", "", "http://127.0.0.1:%d" % (p + 1),
                   "https://127.0.0.1:%d.evil" % p, "file://")
        for origin in refused:
            assert upgrade_status(p, origin) == 403, origin
        m = prometheus(srv)
        assert m['inputlayer_rejections_total{reason="ws_origin"}'] == len(refused), m
        c = await connect(srv)
        await still_answers(c)
        await c.ws.close()
    with OwnServer(binary, NO_RATE + ["--set", "http.cors_origins=" + APP]) as srv:
        assert upgrade_status(srv.port, APP) == 101
        assert upgrade_status(srv.port, APP + "/") == 403  # an origin has no path
        assert upgrade_status(srv.port, "http://evil.example") == 403
    with OwnServer(binary, NO_RATE,
                   env={"INPUTLAYER_HTTP__CORS_ALLOW_ALL": "true"}) as srv:
        assert upgrade_status(srv.port, "http://evil.example") == 101
        c = await connect(srv)
        await still_answers(c)
        await c.ws.close()


TESTS = [t_static_types_and_fallback, t_static_large_files, t_static_conditional,
         t_static_traversal, t_static_off, t_cors, t_ws_origin]
