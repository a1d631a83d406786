"""Randomized malformed and odd frames over /ws (a server of its own): frames of every
client type with fields missing, of the wrong JSON type, empty, huge, negative, far too
large, non-ASCII or nested, unknown types, and text that is not JSON at all, one at a
time on an authenticated connection. Each must get exactly one reply (an error naming
the problem, or the answer when the frame happens to be valid), echoing a string id
when it had one; the connection stays open, and the server keeps answering and exits
cleanly (its sanitizers, in those builds, report nothing).

Seeded: INPUTLAYER_TEST_SEED (default 1); INPUTLAYER_TEST_FRAMES (default 1500)."""

import asyncio
import json

import websockets

from common import (NO_MESSAGE_RATE, OwnServer, connect, run, seeded, still_answers,
                    still_serving, tally)

TYPES = ["execute", "read", "subscribe", "ping", "cancel", "authenticate", "login",
         "unsubscribe", "nope", "", None, 7]
FIELDS = ["id", "program", "queries", "subscription", "target", "timeout_ms",
          "expect_revision", "expect_epoch", "expect_relations", "api_key", "username",
          "password", "name", "query", "extra"]
PROGRAMS = ["?e(X, Y)", "+e(1, 2)", "-e(1, 2)", "+e[(1, 2), (2, 3)]", ".subscribe s ?e(X, Y)",
            ".unsubscribe s", "?e(X,", "+r(X, Y) <- e(X, Y)", ".why ?r(1, Y)", ".kg",
            "?e(X, Y)\n+e(3, 4)\n+e(1)", ".rule drop r", ".compact", "", "   ", "%%%",
            ".backup", "?r(X, Y) :limit -1", "+e(\"\\u0000\", 1)"]
NOTES = ("persistent_update", "rule_change", "kg_change", "schema_change")


def value(rng, depth=0):
    k = rng.randrange(14)
    if k == 0:
        return None
    if k == 1:
        return rng.choice([True, False])
    if k == 2:
        return rng.choice([0, -1, 1, 2 ** 31, -2 ** 63, 2 ** 64 + 5, 10 ** 30])
    if k == 3:
        return rng.choice([0.5, -1e308, 1e-320, 3.0])
    if k == 4:
        return rng.choice(["", "s", "名前", "x" * rng.choice([200, 5000, 70000]), "\u0000",
                           "a\"b\\c", "\ud7ff"])
    if k == 5 and depth < 2:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if k == 6 and depth < 2:
        return {rng.choice(FIELDS): value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    if k == 7 and depth < 2:
        return [{"name": value(rng, depth + 1), "query": rng.choice(PROGRAMS)}
                for _ in range(rng.randint(0, 3))]
    return rng.choice(PROGRAMS)


def frame(rng, n):
    """A random frame, as text; and its id when it has a string one."""
    k = rng.randrange(20)
    if k == 0:
        return rng.choice(["{", "[]", "null", "\"x\"", "{\"type\":", "1", "{}}", "\u00ff"]), None
    f = {}
    t = rng.choice(TYPES)
    if t is not None:
        f["type"] = t
    for _ in range(rng.randint(0, 4)):
        f[rng.choice(FIELDS)] = value(rng)
    if rng.randrange(3):
        f["id"] = "f%d" % n if rng.randrange(4) else value(rng)
    if f.get("type") == "execute" and rng.randrange(2):
        f["program"] = rng.choice(PROGRAMS)
    if rng.randrange(10) == 0:
        f["id"] = "dup"  # the same id, again and again (answered, so free again)
    fid = f.get("id")
    valid = isinstance(fid, str) and 1 <= len(fid.encode()) <= 64 and "\0" not in fid
    return json.dumps(f), fid if valid else None


async def one_reply(c, timeout=20):
    """The next frame that is not a push."""
    while True:
        f = json.loads(await asyncio.wait_for(c.ws.recv(), timeout))
        if f["type"] in NOTES or f["type"].startswith("subscription") or \
                f["type"] == "notice":
            continue
        return f


async def t_frames_random(binary):
    seed, n, rng = seeded("INPUTLAYER_TEST_FRAMES", 1500)
    kinds = {}
    with OwnServer(binary, NO_MESSAGE_RATE) as srv:
        c = await connect(srv)
        await run(c, "+e[(1, 2), (2, 3)]")
        for i in range(n):
            text, fid = frame(rng, i)
            await c.send(text)
            try:
                f = await one_reply(c)
                while f["type"] in ("result_start", "result_chunk", "snapshot_start",
                                    "snapshot_chunk"):
                    f = await one_reply(c)  # a streamed answer: its end is the reply
            except websockets.ConnectionClosed as e:
                raise AssertionError("seed %d, frame %d closed the connection (%s): %s" % (
                    seed, i, e, text[:300]))
            assert "type" in f, (text[:300], f)
            if fid is not None and f["type"] not in ("result_end", "snapshot_end"):
                assert f.get("id") == fid, ("seed %d, frame %d: id not echoed" % (seed, i),
                                            text[:300], f)
            kinds[f["type"]] = kinds.get(f["type"], 0) + 1
        await still_answers(c)
        await c.ws.close()
        await still_serving(srv)
    print("     %d random frames (seed %d), one reply each: %s" % (n, seed, tally(kinds)))


TESTS = [t_frames_random]
