#!/usr/bin/python3
"""What queries with constants of their own leave in a server's memory: a fresh
inputlayer-server (a data directory of its own, the message rate limit off), one fact
`f("a", 1)`, then N queries `?f("<i, padded to SIZE bytes>", X)` over one connection, each
with a string no other query has. Prints the server's resident growth over the queries and,
when the server reports them, how many interned values and bytes it holds more than before
(and of those, how many are idle: kept, within bounds, for queries run again).

    bench/query-strings-memory.py SERVER_BIN [N (20000)] [SIZE (4000)]

Uses the protocol tests' helpers (tests/protocol/common.py) and Debian's python3-websockets.
"""

import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "protocol"))

from common import NO_MESSAGE_RATE, OwnServer, connect, prometheus, run  # noqa: E402


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def main(binary, n, size):
    with OwnServer(binary, NO_MESSAGE_RATE) as srv:
        c = await connect(srv)
        assert (await run(c, '+f("a", 1)'))["type"] == "result"
        assert (await run(c, '?f("warm-up", X)'))["type"] == "result"
        rss0, m0 = rss_kib(srv.proc.pid), prometheus(srv)
        for i in range(n):
            tag = "%d-" % i
            f = await run(c, '?f("%s", X)' % (tag + "x" * max(0, size - len(tag))))
            assert f["type"] == "result", f
        rss1, m1 = rss_kib(srv.proc.pid), prometheus(srv)
        print("%d queries with %d-byte strings of their own: resident growth %.1f MiB"
              % (n, size, (rss1 - rss0) / 1024.0))
        for name in ("inputlayer_interned_values", "inputlayer_interned_bytes",
                     "inputlayer_interned_idle_values", "inputlayer_interned_idle_bytes"):
            if name in m0:
                print("  %s: %+d" % (name, m1[name] - m0[name]))
        await c.ws.close()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    asyncio.run(main(os.path.abspath(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 20000,
                     int(sys.argv[3]) if len(sys.argv) > 3 else 4000))
