"""Resident memory of the server under what any client may send, each on a server of its
own: a large read repeated hundreds of times (as `execute` and as `read`) must not grow
resident memory past a bounded margin of its working set, and unauthenticated frames that
declare megabytes are refused at their header (close 1009) and leave nothing behind.
Resident-memory bounds are checked on the normal build only (a sanitizer's allocator and
shadow memory make resident sizes meaningless): the repeated reads are skipped under a
sanitizer, the frame checks run on every build."""

import asyncio
import base64
import json
import os
import socket
import struct
import time

from common import NO_MESSAGE_RATE, OwnServer as Server, connect, is_sanitized, still_answers
from guards import rss_kib

MIB = 1 << 20


def ws_handshake(port):
    """A raw socket upgraded to a WebSocket on /ws, not authenticated."""
    s = socket.create_connection(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % key).encode())
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = s.recv(4096)
        assert chunk, reply
        reply += chunk
    assert reply.startswith(b"HTTP/1.1 101"), reply
    return s, reply.split(b"\r\n\r\n", 1)[1]


def frame_header(length, opcode=1, fin=True):
    """A masked client frame header declaring `length` bytes of payload."""
    first = (0x80 if fin else 0) | opcode
    if length < 126:
        head = struct.pack("!BB", first, 0x80 | length)
    elif length <= 0xffff:
        head = struct.pack("!BBH", first, 0x80 | 126, length)
    else:
        head = struct.pack("!BBQ", first, 0x80 | 127, length)
    return head + b"\0\0\0\0"  # a zero mask: the payload goes as is


def read_close(s, pending=b"", timeout=10):
    """The frames the server sends until its close frame: (texts, close code)."""
    s.settimeout(timeout)
    buf, texts = pending, []
    while True:
        while len(buf) >= 2:
            n, at = buf[1] & 0x7f, 2
            if n == 126:
                if len(buf) < 4:
                    break
                n, at = struct.unpack("!H", buf[2:4])[0], 4
            elif n == 127:
                if len(buf) < 10:
                    break
                n, at = struct.unpack("!Q", buf[2:10])[0], 10
            if len(buf) < at + n:
                break
            op, payload, buf = buf[0] & 0x0f, buf[at:at + n], buf[at + n:]
            if op == 8:
                return texts, struct.unpack("!H", payload[:2])[0]
            texts.append(payload.decode())
        chunk = s.recv(65536)
        if not chunk:
            return texts, None
        buf += chunk


async def t_preauth_frame_refused_at_header(binary):
    """Before authentication a frame whose header declares more than 8 KiB closes the
    connection with 1009 at once, before any of its payload is sent; so does a message
    that grows past 8 KiB in fragments. Sixteen connections from one address (the
    pre-auth limit) that then send 14 MiB of the payload and abandon it leave resident
    memory where it was."""
    sanitized = is_sanitized(binary)
    with Server(binary, ["--set", "http.ws_auth_timeout_ms=1000"]) as srv:
        c = await connect(srv)
        await still_answers(c)
        base = rss_kib(srv.proc.pid)
        socks = []
        for _ in range(16):
            s, rest = ws_handshake(srv.port)
            s.sendall(frame_header(15 * MIB))
            t0 = time.monotonic()
            texts, code = read_close(s, rest)
            assert code == 1009 and time.monotonic() - t0 < 5, (texts, code)
            assert len(texts) == 1 and '"code":"message_too_large"' in texts[0] and \
                "before authentication" in texts[0], texts
            socks.append(s)
        payload = b"x" * MIB
        for s in socks:
            try:
                for _ in range(14):
                    s.sendall(payload)
            except OSError:
                pass  # the server closed it: what was sent is discarded
        await asyncio.sleep(2.5)  # past the authentication timeout
        for s in socks:
            s.close()
        held = rss_kib(srv.proc.pid)
        print("pre-auth frames: resident growth %d MiB" % ((held - base) // 1024))
        if not sanitized:
            assert (held - base) * 1024 < 32 * MIB, (base, held)
        # A message of small fragments that passes 8 KiB is refused at the fragment that
        # takes it over; an auth frame at the limit is read (and fails as bad JSON).
        s, rest = ws_handshake(srv.port)
        s.sendall(frame_header(5000, fin=False) + b" " * 5000 + frame_header(5000, opcode=0))
        texts, code = read_close(s, rest)
        assert code == 1009, (texts, code)
        s.close()
        s, rest = ws_handshake(srv.port)
        s.sendall(frame_header(8192) + b" " * 8192)
        s.sendall(frame_header(9000))
        texts, code = read_close(s, rest)
        assert code == 1009 and len(texts) == 2 and '"invalid_request"' in texts[0], texts
        s.close()
        # Once authenticated, large messages are read as before.
        pad = "x" * (64 * 1024)
        f = await c.call({"type": "execute", "program": '+pad("%s")' % pad})
        assert f["type"] == "result" and f["errors"] == [], f
        await still_answers(c)
        await c.ws.close()


async def big_read(c, i):
    """The ~90,000-row read, as an `execute` or (every other time) as a `read` frame."""
    if i % 2:
        await c.send({"type": "read", "id": "r%d" % i,
                      "queries": [{"name": "big", "query": BIG_READ}]})
        last = ("snapshot", "snapshot_end")
    else:
        await c.send({"type": "execute", "id": "r%d" % i, "program": BIG_READ})
        last = ("result", "result_end")
    while True:
        text = await asyncio.wait_for(c.ws.recv(), 120)
        # Only the small frames are parsed: the chunks' rows are not what is tested.
        kind = text[:40].split('"type":"', 1)[1].split('"', 1)[0]
        assert kind in last + ("result_start", "result_chunk", "snapshot_start",
                               "snapshot_chunk"), text[:200]
        if kind in last:
            f = json.loads(text)
            assert f.get("id") == "r%d" % i, str(f)[:200]
            if kind == "result_end":
                assert f["row_count"] == 90000, f
            return


BIG_READ = "?big(X, Y), X < 90000"


async def t_repeated_large_reads(binary):
    """The ~90,000-row read over 100,000 facts, 360 times, each from a connection of its
    own that stays open (as a viewer may): resident memory after them is at most what it
    was after 20 of them plus 64 MiB, and stays so while the server is idle. Resident
    memory is all it checks, so it runs on the normal build only."""
    if is_sanitized(binary):
        print("repeated reads: skipped under a sanitizer")
        return
    args = NO_MESSAGE_RATE + ["--set", "http.rate_limit.max_ws_connections=0"]
    with Server(binary, args) as srv:
        a = await connect(srv)
        for k in range(10):
            rows = ", ".join('(%d, "r%d")' % (i, i)
                             for i in range(k * 10000, (k + 1) * 10000))
            f = await a.call({"type": "execute", "program": "+big[%s]" % rows})
            assert f["type"] == "result" and f["errors"] == [], f
        conns, after20 = [], None
        t0 = time.monotonic()
        for i in range(360):
            c = await connect(srv)
            conns.append(c)
            await big_read(c, i)
            if i == 19:
                after20 = rss_kib(srv.proc.pid)
        held = rss_kib(srv.proc.pid)
        print("repeated reads: %.1f s, resident %d MiB after 20, %d MiB after 360" %
              (time.monotonic() - t0, after20 // 1024, held // 1024))
        assert (held - after20) * 1024 <= 64 * MIB, (after20, held)
        await asyncio.sleep(2)
        idle = rss_kib(srv.proc.pid)
        assert (idle - after20) * 1024 <= 64 * MIB, (after20, idle)
        await still_answers(conns[-1])
        for c in conns:
            await c.ws.close()
        await a.ws.close()


TESTS = [t_repeated_large_reads, t_preauth_frame_refused_at_header]
