"""Shared helpers of the protocol tests: a server process on a free port with its own data
directory, HTTP requests, and a WebSocket connection that reads JSON frames."""

import asyncio
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import websockets

KEY = "protocol-test-" + os.urandom(8).hex()
# Servers of the tests that send many messages a second: the message rate limit off.
NO_MESSAGE_RATE = ["--set", "http.rate_limit.ws_max_messages_per_sec=0"]
PASSWORD = "protocol-test-password"
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "runtime error:", "LeakSanitizer")


def clean_env(**extra):
    """The environment without INPUTLAYER_* settings of the caller, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INPUTLAYER_")}
    env.update(INPUTLAYER_BOOTSTRAP_API_KEY=KEY, INPUTLAYER_ADMIN_PASSWORD=PASSWORD)
    env.update(extra)
    return env


class Server:
    """A server with a temporary data directory, started in that directory (so that no
    ./config.toml of the caller is read), on the port given or else one the system chooses
    (--port 0) and the server reports. `args` are extra flags, `env` extra environment
    variables."""

    def __init__(self, binary, args=(), env=None, port=None, data_dir=None):
        self.dir = tempfile.mkdtemp(prefix="il-protocol-")
        self.data = data_dir or os.path.join(self.dir, "data")
        self.log = open(os.path.join(self.dir, "server.log"), "w+b")
        self.proc = subprocess.Popen(
            [binary, "--port", str(port or 0), "--data-dir", self.data]
            + list(args),
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
            env=clean_env(**(env or {})), cwd=self.dir)
        deadline = time.monotonic() + 15
        self.port = port
        while self.port is None:
            m = re.search(r"listening on: http://[^:\s]+:(\d+)", self.output())
            if m:
                self.port = int(m.group(1))
            elif self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("server did not start:\n" + self.output())
            else:
                time.sleep(0.02)
        self.base = "http://127.0.0.1:%d" % self.port
        self.ws = "ws://127.0.0.1:%d/ws" % self.port
        while True:
            try:
                with urllib.request.urlopen(self.base + "/health", timeout=1):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("server did not start:\n" + self.output())
                time.sleep(0.05)

    def output(self):
        """What the server printed so far (through a separate handle: seeking the one the
        server writes through would move the server's own write position)."""
        with open(self.log.name, "rb") as f:
            return f.read().decode("utf-8", errors="replace")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        out = self.output()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return self.proc.returncode, out


def http(srv, path, headers=None):
    req = urllib.request.Request(srv.base + path, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Conn:
    """A WebSocket connection that reads JSON frames, skipping pushes."""

    def __init__(self, ws):
        self.ws = ws

    async def send(self, obj):
        await self.ws.send(obj if isinstance(obj, str) else json.dumps(obj))

    async def recv(self, timeout=30):
        while True:
            f = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
            if f["type"] not in ("persistent_update", "rule_change", "kg_change",
                                 "schema_change"):
                return f

    async def call(self, obj, timeout=30):
        await self.send(obj)
        return await self.recv(timeout)


def source_addr(source):
    """Keyword arguments that make a connection come from the loopback address `source`
    (127.x.y.z), so that a test's per-address limits are its own."""
    return {"local_addr": (source, 0)} if source else {}


async def connect(srv, auth=True, key=KEY, kg=None, source=None, holds_little=False):
    """holds_little: a client that, when it stops reading, takes in little more: its
    library queues one message, and its socket's receive buffer is fixed at 64 KiB (left to
    itself, the kernel grows it to tens of MB over loopback and soaks up what a test means
    the server to hold back)."""
    url = srv.ws + ("?kg=" + kg if kg else "")
    # No client keepalive: tests stop reading on purpose (the server then stops reading
    # too, and would never see the client's pings).
    ws = await websockets.connect(url, max_size=None, ping_interval=None,
                                  max_queue=1 if holds_little else 32, **source_addr(source))
    if holds_little:
        ws.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF,
                                                         65536)
    c = Conn(ws)
    if auth:
        f = await c.call({"type": "authenticate", "api_key": key, "id": "auth"})
        assert f["type"] == "authenticated", f
    return c


async def login(srv, user, password, kg=None, source=None):
    """A connection logged in as `user`, and the reply to the login."""
    url = srv.ws + ("?kg=" + kg if kg else "")
    c = Conn(await websockets.connect(url, max_size=None, **source_addr(source)))
    return c, await c.call({"type": "login", "username": user, "password": password})


async def expect_closed(c, timeout=10):
    """Reads until the server closes the connection; returns the frames read before."""
    frames = []
    try:
        while True:
            frames.append(json.loads(await asyncio.wait_for(c.ws.recv(), timeout)))
    except websockets.ConnectionClosed as e:
        return frames, e.code


async def run(c, program, id=None):
    req = {"type": "execute", "program": program}
    if id:
        req["id"] = id
    return await c.call(req)


async def still_answers(c):
    f = await c.call({"type": "ping", "id": "alive"})
    assert f == {"type": "pong", "id": "alive"}, f


async def still_serving(srv):
    """The server answers /health and a new WebSocket connection."""
    assert http(srv, "/health")[0] == 200
    c = await connect(srv)
    await still_answers(c)
    await c.ws.close()


def tally(counts):
    """{"a": 2, "b": 1} as "a 2, b 1"."""
    return ", ".join("%s %d" % kv for kv in sorted(counts.items()))


class OwnServer:
    """A Server for one test (`with OwnServer(binary, args, env) as srv:`), stopped at the
    end; its exit status must be 0 and its output free of sanitizer reports."""

    def __init__(self, binary, args=(), env=None, data_dir=None):
        self.srv = Server(binary, args, env, data_dir=data_dir)

    def __enter__(self):
        return self.srv

    def __exit__(self, kind, value, tb):
        status, out = self.srv.stop()
        if kind is None:
            assert status == 0, "server exit status %d:\n%s" % (status, out[-4000:])
            assert not any(m in out for m in SANITIZER_MARKERS), out[-6000:]
        return False


def is_sanitized(binary):
    """Whether the server binary was built with a sanitizer (whose allocator and shadow
    memory make resident sizes meaningless)."""
    with open(binary, "rb") as f:
        data = f.read()
    return b"__asan_init" in data or b"__tsan_init" in data


def is_tsan(binary):
    """Whether the server binary was built with ThreadSanitizer."""
    with open(binary, "rb") as f:
        return b"__tsan_init" in f.read()


def prometheus(srv, key=KEY):
    """The /metrics/prometheus samples as {"name{labels}": value}."""
    st, body = http(srv, "/metrics/prometheus", {"Authorization": "Bearer " + key})
    assert st == 200, (st, body)
    out = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def seeded(count_var, default):
    """The randomized tests' settings: the seed (INPUTLAYER_TEST_SEED, default 1), a count
    from the environment variable count_var (else default), and a Random of that seed."""
    seed = int(os.environ.get("INPUTLAYER_TEST_SEED", "1"))
    return seed, int(os.environ.get(count_var, str(default))), random.Random(seed)
