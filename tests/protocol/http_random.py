"""Randomized odd HTTP over raw TCP (a server of its own): request lines with odd
methods, paths, versions and encodings, headers that repeat, lack values or run long,
bodies with wrong lengths or chunks, WebSocket upgrades with bad keys or versions,
several requests on one connection, and requests cut short; with a web client's files
served and one CORS origin listed, so that file paths (encoded, escaping, conditional)
and preflights are among them. Each connection must get
HTTP responses (a status line each) or be closed by the server; none may hang past a
bound, and the server keeps serving /health and /ws and exits cleanly (sanitizers, in
those builds, report nothing).

Seeded: INPUTLAYER_TEST_SEED (default 1); INPUTLAYER_TEST_HTTP_REQUESTS (default 400)."""

import asyncio
import os
import shutil
import tempfile

from common import KEY, OwnServer, seeded, still_serving, tally

METHODS = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE", "CONNECT",
           "get", "G\x00T", "", "X" * 300]
PATHS = ["/health", "/v1/health", "/live", "/ready", "/metrics", "/v1/metrics",
         "/metrics/prometheus", "/ws", "/ws?kg=default", "/ws?kg=" + "%41" * 50, "/nope",
         "/", "*", "//health", "/health?x=1&y", "/%00", "/" + "a" * 9000, "http://h/health",
         "/health#frag", "/../../etc/passwd", "/ws?kg=%zz", "/index.html", "/assets/app.js",
         "/client/route", "/%2e%2e/%2e%2e/etc/passwd", "/assets/..%2f..%2fx", "/%zz", "/.env",
         "/big.bin", "/assets/", "/a%00b", "/\\..\\x"]
VERSIONS = ["HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/0.9", "HTTX/1.1", "", "HTTP/1.1 x"]


def header(rng):
    k = rng.randrange(15)
    if k == 0:
        return "Host: 127.0.0.1"
    if k == 1:
        return "Authorization: Bearer " + rng.choice([KEY, "wrong", "", "x" * 5000])
    if k == 2:
        return "Content-Length: %s" % rng.choice(["0", "5", "-1", "99999999999", "abc", "3"])
    if k == 3:
        return "Transfer-Encoding: " + rng.choice(["chunked", "gzip", "chunked, chunked", ""])
    if k == 4:
        return "Upgrade: " + rng.choice(["websocket", "WebSocket", "h2c", ""])
    if k == 5:
        return "Connection: " + rng.choice(["Upgrade", "keep-alive", "close", "upgrade, x"])
    if k == 6:
        return "Sec-WebSocket-Key: " + rng.choice(["dGhlIHNhbXBsZSBub25jZQ==", "", "short",
                                                   "x" * 200])
    if k == 7:
        return "Sec-WebSocket-Version: " + rng.choice(["13", "8", "", "99999999999"])
    if k == 8:
        return "X-%d: %s" % (rng.randrange(1000), "v" * rng.choice([0, 10, 20000]))
    if k == 9:
        return rng.choice(["NoColon", ": novalue", "Bad Header: x", "X:\x01\x02"])
    if k == 10:
        return "Origin: " + rng.choice(["http://evil", "null", "", "http://127.0.0.1"])
    if k == 11:
        return "Access-Control-Request-Method: " + rng.choice(["GET", "", "X" * 300])
    if k == 12:
        return "If-None-Match: " + rng.choice(['"x"', "*", "W/", ",,,", ""])
    if k == 13:
        return "If-Modified-Since: " + rng.choice(["Sun, 06 Nov 1994 08:49:37 GMT", "x", ""])
    return "Accept: */*"


def request(rng):
    line = "%s %s %s" % (rng.choice(METHODS), rng.choice(PATHS), rng.choice(VERSIONS))
    heads = [header(rng) for _ in range(rng.randint(0, 6))]
    body = rng.choice(["", "hello", "5\r\nhello\r\n0\r\n\r\n", "zz\r\nx\r\n", "x" * 3000])
    text = line + "\r\n" + "".join(h + "\r\n" for h in heads) + "\r\n" + body
    if rng.randrange(10) == 0:
        text = text[:rng.randrange(len(text) + 1)]  # cut short
    if rng.randrange(8) == 0:
        text = text.replace("\r\n", "\n")
    return text.encode("utf-8", errors="surrogateescape")


async def exchange(port, data, timeout):
    """Sends data (then half-closes); the bytes the server sends until it closes."""
    r, w = await asyncio.open_connection("127.0.0.1", port)
    try:
        w.write(data)
        await w.drain()
        if w.can_write_eof():
            w.write_eof()
        out = b""
        while True:
            chunk = await asyncio.wait_for(r.read(65536), timeout)
            if not chunk:
                return out
            out += chunk
    finally:
        w.close()


async def t_http_random(binary):
    seed, n, rng = seeded("INPUTLAYER_TEST_HTTP_REQUESTS", 400)
    statuses = {}
    gui = tempfile.mkdtemp(prefix="il-gui-")
    os.makedirs(os.path.join(gui, "assets"))
    for name, size in (("index.html", 100), ("assets/app.js", 5000), ("big.bin", 600000)):
        with open(os.path.join(gui, name), "wb") as f:
            f.write(b"x" * size)
    args = ["--set", "http.rate_limit.per_ip_max_rps=0",
            "--set", "http.rate_limit.ws_max_preauth_per_ip=0",
            "--set", "http.gui.static_dir=" + gui, "--set", "http.cors_origins=http://evil"]
    try:
        await exchanges(binary, args, seed, n, rng, statuses)
    finally:
        shutil.rmtree(gui)
    print("     %d random HTTP exchanges (seed %d), statuses: %s" % (n, seed, tally(statuses)))


async def exchanges(binary, args, seed, n, rng, statuses):
    with OwnServer(binary, args) as srv:
        for i in range(n):
            data = b"".join(request(rng) for _ in range(rng.choice([1, 1, 1, 2, 3])))
            try:
                # the server closes a half-closed connection once it answered; an upgraded
                # one waits for authentication (5 s): bounded well above that
                out = await exchange(srv.port, data, 15)
            except asyncio.TimeoutError:
                raise AssertionError("seed %d, request %d: no close within 15 s: %r" % (
                    seed, i, data[:300]))
            except ConnectionResetError:
                out = b""
            for line in out.split(b"\r\n"):
                if line.startswith(b"HTTP/1.1 "):
                    code = line.split(b" ")[1].decode()
                    statuses[code] = statuses.get(code, 0) + 1
            assert out == b"" or out.startswith(b"HTTP/1.1 "), (seed, i, data[:200], out[:200])
        await still_serving(srv)


TESTS = [t_http_random]
