"""Protocol tests of the HTTP connection slots, each on a server of its own: one address
cannot hold more than http.rate_limit.max_connections_per_ip connections, a request's
headers must arrive within http.request_header_timeout_ms (10 s by default), and past
max_connections 16 more connections are kept for /health, /live and /ready alone. Each
test ends by checking that its server still answers."""

import asyncio
import socket
import time

from common import OwnServer, connect, http, still_answers

PARTIAL = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: "


def reply_of(s, timeout=10):
    """What the server sends until it closes the connection."""
    s.settimeout(timeout)
    out = b""
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return out.decode()
        if not chunk:
            return out.decode()
        out += chunk


def request(port, path):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path).encode())
    with s:
        return reply_of(s)


async def t_connections_per_address(binary):
    """Over max_connections_per_ip connections from one address (partial headers, as a
    slow client sends) the next gets 503 at once; one closed frees its place; a
    WebSocket, once upgraded, no longer counts. The default is 128."""
    with OwnServer(binary) as srv:
        socks = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(128)]
        for s in socks:
            s.sendall(PARTIAL)
        await asyncio.sleep(0.3)
        with socket.create_connection(("127.0.0.1", srv.port)) as s:
            reply = reply_of(s)
        assert reply.startswith("HTTP/1.1 503") and \
            reply.endswith("Too many connections from this address"), reply
        socks.pop().close()
        await asyncio.sleep(0.3)
        assert http(srv, "/health")[0] == 200
        for s in socks:
            s.close()
    args = ["--set", "http.rate_limit.max_connections_per_ip=3"]
    with OwnServer(binary, args) as srv:
        ws = [await connect(srv) for _ in range(3)]  # upgraded: not counted
        socks = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(3)]
        await asyncio.sleep(0.3)
        assert request(srv.port, "/health").endswith("Too many connections from this address")
        for s in socks:
            s.close()
        await asyncio.sleep(0.3)
        assert http(srv, "/health")[0] == 200
        for c in ws:
            await still_answers(c)
            await c.ws.close()


async def t_header_timeout(binary):
    """A request whose headers have not all arrived 10 s after its first byte (by
    default) closes the connection, whatever trickles in meanwhile."""
    with OwnServer(binary) as srv:
        s = socket.create_connection(("127.0.0.1", srv.port))
        t0 = time.monotonic()
        s.sendall(PARTIAL)
        s.settimeout(1)
        closed = None
        while closed is None and time.monotonic() - t0 < 40:
            try:
                s.sendall(b"x")  # a byte a second: not a complete header
                if s.recv(4096) == b"":
                    closed = time.monotonic() - t0
            except socket.timeout:
                pass
            except OSError:
                closed = time.monotonic() - t0
        s.close()
        assert closed is not None and 9 <= closed < 20, closed
        c = await connect(srv)
        await still_answers(c)
        await c.ws.close()


async def t_probe_slots(binary):
    """With max_connections taken, 16 more connections are let in for the health probes:
    /health, /live and /ready answer, anything else gets 503. When those 16 are taken by
    connections that send no request, a new one still gets in: the one that has waited
    longest is closed to make room."""
    args = ["--set", "http.rate_limit.max_connections=4",
            "--set", "http.rate_limit.max_connections_per_ip=0"]
    with OwnServer(binary, args) as srv:
        socks = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(4)]
        for s in socks:
            s.sendall(PARTIAL)
        await asyncio.sleep(0.3)
        for path in ("/health", "/live", "/ready", "/v1/health"):
            assert request(srv.port, path).startswith("HTTP/1.1 200"), path
        for path in ("/nope", "/metrics", "/ws"):
            reply = request(srv.port, path)
            assert reply.startswith("HTTP/1.1 503") and reply.endswith("Too many connections"), \
                (path, reply)
        extra = []
        for _ in range(16):
            extra.append(socket.create_connection(("127.0.0.1", srv.port)))
            extra[-1].sendall(PARTIAL)
            await asyncio.sleep(0.02)  # in order: extra[0] has waited longest
        await asyncio.sleep(0.3)
        assert request(srv.port, "/health").startswith("HTTP/1.1 200")
        # the connection that had waited longest was closed to make room
        assert reply_of(extra[0], timeout=5) == ""
        # (each of these takes the place of the next oldest, or of the last one's if
        # that one's close has been read by then)
        assert request(srv.port, "/ready").startswith("HTTP/1.1 200")
        assert request(srv.port, "/nope").startswith("HTTP/1.1 503")
        # the others still wait for their request
        for s in extra[3:]:
            try:
                s.recv(1, socket.MSG_DONTWAIT)
                raise AssertionError("a probe slot that had waited less was closed")
            except BlockingIOError:
                pass
        for s in socks + extra:
            s.close()
        await asyncio.sleep(0.3)
        c = await connect(srv)
        await still_answers(c)
        await c.ws.close()


TESTS = [t_connections_per_address, t_header_timeout, t_probe_slots]
