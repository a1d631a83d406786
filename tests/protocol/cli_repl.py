"""Tests of the command-line client's REPL through a real terminal (a pseudo-terminal the
test drives as a user would type), in process and through servers of their own:

* Ctrl-C during a long query cancels it (the engine's guard in process, the server's
  `cancel` over the connection) and returns to the prompt; the next query works; Ctrl-C
  at an empty prompt clears the line and the session goes on; Ctrl-D leaves;
* history is kept in $HOME/.inputlayer_history and survives a restart (up arrow);
* Tab completes a relation name and a meta command;
* a server restart drops the connection: the next statement opens it again, in the
  session's knowledge graph (the prompt names it), and the session fact lost with it is
  reported;
* a subscription's delta (a write by another client) appears between prompts, with its
  revision, without anything typed;
* without a terminal (a pipe) the REPL reads lines as they come, with no prompt;
* `--user` with `--password` and no value asks for the password on the terminal;
* `.help all` lists every command, `.help CMD` details one, `.help` keeps its text;
* `.why` prints the proof tree, indented, after the table in the REPL (in process and
  through the server), as JSON with `--mode json`, and not in a table-mode script;
* `warning:` lines (in process and through the server, from the result's
  `metadata.warnings`) for a relation that does not exist, a body atom of the wrong
  arity and an equality between constants of different types; none for a sound query;
* a table taller than the terminal goes through $PAGER (not when `.output` sends it to a
  file); `.width N` cuts cells at N characters (0: whole), `.mode box` rules the rows,
  `.output FILE` writes results to a file (script mode, no terminal needed)."""

import contextlib
import fcntl
import os
import pty
import struct
import termios
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time

from common import KEY, PASSWORD, SANITIZER_MARKERS, OwnServer, Server, clean_env

TIMEOUT = 120  # a liveness bound only


def client_bin(server_bin):
    return os.path.join(os.path.dirname(os.path.abspath(server_bin)), "inputlayer-client")


class Term:
    """The client on a pseudo-terminal: send() types, expect() waits for a pattern in
    what the client printed since the last match."""

    def __init__(self, server_bin, args, home, env=None, rows=40):
        self.home = home
        environ = clean_env(INPUTLAYER_API_KEY=KEY, HOME=home, TERM="xterm", **(env or {}))
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.execve(client_bin(server_bin), [client_bin(server_bin)] + list(args),
                          environ)
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, 100, 0, 0))
        self.out = b""
        self.pos = 0

    def read(self, wait):
        r, _, _ = select.select([self.fd], [], [], wait)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            data = b""
        if not data:
            raise AssertionError("the client ended:\n" + self.text())
        self.out += data
        return True

    def text(self):
        return self.out.decode(errors="replace")

    def expect(self, pattern, timeout=TIMEOUT):
        rx = re.compile(pattern.encode() if isinstance(pattern, str) else pattern)
        end = time.monotonic() + timeout
        while True:
            m = rx.search(self.out, self.pos)
            if m:
                self.pos = m.end()
                return m
            if time.monotonic() > end:
                raise AssertionError("no %r in:\n%s" % (pattern, self.out[self.pos:].decode(
                    errors="replace")[-3000:]))
            self.read(0.2)

    def send(self, data):
        os.write(self.fd, data.encode() if isinstance(data, str) else data)

    def line(self, stmt):
        self.send(stmt + "\r")

    def interrupt_until(self, pattern):
        """Ctrl-C, again every half second until pattern shows (a Ctrl-C that came before
        the statement started is a Ctrl-C at the prompt)."""
        rx = re.compile(pattern.encode())
        end = time.monotonic() + TIMEOUT
        while not rx.search(self.out, self.pos):
            assert time.monotonic() < end, "no %r after Ctrl-C:\n%s" % (pattern, self.text())
            self.send("\x03")
            t = time.monotonic() + 0.5
            while time.monotonic() < t:
                try:
                    self.read(0.1)
                except AssertionError:
                    break
        self.expect(pattern)

    def close(self):
        """Ctrl-D at an empty prompt; the exit status. Sent again every half second: one
        typed before the prompt is back (while a statement's output is printed) reaches
        the terminal outside line editing, where it ends no line."""
        end = time.monotonic() + TIMEOUT
        again = 0
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                break
            assert time.monotonic() < end, "Ctrl-D did not end the client:\n" + self.text()
            if time.monotonic() >= again:
                self.send("\x04")
                again = time.monotonic() + 0.5
            try:
                self.read(0.1)
            except AssertionError:
                pass
        while True:
            try:
                if not self.read(0):
                    break
            except AssertionError:
                break
        os.close(self.fd)
        assert not any(m in self.text() for m in SANITIZER_MARKERS), self.text()[-6000:]
        return os.waitstatus_to_exitcode(status)

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass


def long_query(t):
    """A recursion that counts to 10^8, one step at a time: far longer than the test."""
    for stmt in ("+c0[(0)]", "+cnt(X) <- c0(X)", "+cnt(X) <- cnt(Y), X = Y + 1, X < 100000000"):
        t.line(stmt)
        t.expect("default> ")  # typed at the prompt, as a user would


@contextlib.contextmanager
def repl(binary, args, **kw):
    """A REPL on a pty with a scratch HOME (its history file's place), killed and the
    HOME removed on the way out."""
    home = tempfile.mkdtemp(prefix="il_repl_")
    t = Term(binary, args, home, **kw)
    try:
        yield t
    finally:
        t.kill()
        shutil.rmtree(home, ignore_errors=True)


def cancel_and_go_on(t):
    long_query(t)
    t.line("?cnt(X), X = 5")
    t.expect(r"\?cnt\(X\), X = 5\r?\n")  # the line was taken (a Ctrl-C flushes typed input)
    t.interrupt_until(r"(?i)cancel")
    t.expect("default> ")
    t.line("?c0(X)")
    t.expect("1 rows")
    t.expect("default> ")
    # Ctrl-C on a half-typed line at the prompt: the line goes, the session stays
    t.send("?c0(")
    t.expect(r"\?c0\(")
    t.send("\x03")
    t.expect(r"\^C")
    t.line("?c0(Y)")
    t.expect("1 rows")
    assert t.close() == 0


async def t_ctrl_c_in_process(binary):
    with repl(binary, ["--local"]) as t:
        t.expect("default> ")
        cancel_and_go_on(t)


async def t_ctrl_c_through_server(binary):
    with OwnServer(binary) as srv, repl(binary, ["--server", srv.base]) as t:
        t.expect("default> ")
        cancel_and_go_on(t)


async def t_history_and_completion(binary):
    home = tempfile.mkdtemp(prefix="il_repl_")
    try:
        t = Term(binary, ["--local"], home)
        t.expect("default> ")
        t.line("+edge_with_a_long_name[(1, 2), (2, 3)]")
        t.expect("Inserted 2 fact")
        # Tab completes the relation name (and opens its arguments)
        t.send("?edge_wi\t")
        t.expect("th_a_long_name\\(")
        t.send("X, Y)\r")
        t.expect("2 rows")
        # and a meta command
        t.send(".hel\t")
        t.expect(r"\.hel[^\n]*p ")
        t.send("all\r")
        t.expect(r"\.subscribe <name> \?<query>")
        assert t.close() == 0
        hist = open(os.path.join(home, ".inputlayer_history"), "rb").read()
        assert b"edge_with_a_long_name" in hist, hist
        # a new client: the up arrow brings back the last statement
        t = Term(binary, ["--local"], home)
        t.expect("default> ")
        t.line("+edge_with_a_long_name[(3, 4)]")
        t.expect("Inserted 1 fact")
        t.send("\x1b[A\x1b[A\r")
        t.expect("help all")
        t.expect(r"\.quit ")
        t.send("\x1b[A\x1b[A\x1b[A\x1b[A\r")
        t.expect(r"\?edge_with_a_long_name\(X, Y\)")
        t.expect("1 rows")  # in process without a data directory: this run's fact only
        assert t.close() == 0
    finally:
        shutil.rmtree(home, ignore_errors=True)


async def t_reconnects_after_restart(binary):
    home = tempfile.mkdtemp(prefix="il_repl_")
    data = tempfile.mkdtemp(prefix="il_repl_data_")
    srv = Server(binary, data_dir=data)
    t = None
    try:
        t = Term(binary, ["--server", srv.base], home)
        t.expect("default> ")
        t.line(".kg create repl_g")
        t.expect("repl_g")
        t.line(".kg use repl_g")
        t.expect("repl_g> ")
        t.line("+kept[(1), (2)]")
        t.expect("Inserted 2 fact")
        t.line("transient(7)")
        t.expect("Session fact added")
        port = srv.port
        status, out = srv.stop()
        assert status == 0, out[-3000:]
        srv = Server(binary, port=port, data_dir=data)
        t.line("?kept(X)")
        t.expect("Connection lost")
        t.expect(r"Reconnected \(knowledge graph: repl_g\)")
        t.expect("warning: 0 session rule\\(s\\) and 1 session fact\\(s\\) were lost")
        t.expect("2 rows")
        t.expect("repl_g> ")
        t.line("?transient(X)")
        t.expect("repl_g> ")
        assert t.close() == 0
    finally:
        if t:
            t.kill()
        srv.stop()
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(data, ignore_errors=True)


async def t_subscription_delta_between_prompts(binary):
    with OwnServer(binary) as srv, repl(binary, ["--server", srv.base]) as t:
        t.expect("default> ")
        t.line("+watched[(1)]")
        t.expect("Inserted 1 fact")
        t.line(".subscribe w1 ?watched(X)")
        t.expect("1 rows")
        t.expect("default> ")
        # another client writes; nothing is typed here
        p = subprocess.run([client_bin(binary), "--server", srv.base, "--script", "-"],
                           input=b"+watched[(2)]\n-watched(1)\n", capture_output=True,
                           timeout=TIMEOUT, env=clean_env(INPUTLAYER_API_KEY=KEY))
        assert p.returncode == 0, p
        t.expect(r"\[w1\] revision \d+:\r?\n\+ 2")
        t.expect(r"\[w1\] revision \d+:\r?\n- 1")
        t.expect("default> ")
        t.line("?watched(X)")
        t.expect("1 rows")
        assert t.close() == 0


async def t_password_prompt(binary):
    with OwnServer(binary) as srv, \
            repl(binary, ["--server", srv.base, "--user", "admin", "--password"]) as t:
        t.expect("Password for admin: ")
        t.send(PASSWORD + "\r")
        t.expect("default> ")
        assert PASSWORD not in t.text(), t.text()
        t.line(".help kg")
        t.expect(r"\.kg \[list\|create\|use\|drop <name>\]")
        t.line(".help")
        t.expect("InputLayer Client \\(WebSocket\\)")
        t.expect("default> ")
        assert t.close() == 0


async def t_pager_for_long_tables(binary):
    with repl(binary, ["--local"], env={"PAGER": "sed s/^/PAGED:/"}, rows=10) as t:
        t.expect("default> ")
        t.line("+few[(1), (2)]")
        t.expect("Inserted 2 fact")
        t.line("+many[" + ", ".join("(%d)" % i for i in range(30)) + "]")
        t.expect("Inserted 30 fact")
        t.line("?few(X)")
        t.expect("2 rows")
        assert b"PAGED:" not in t.out, t.text()  # it fits the terminal
        t.line("?many(X)")
        t.expect(r"PAGED:│ 29 │")
        t.expect("30 rows")
        out = os.path.join(t.home, "out.txt")
        t.line(".output " + out)
        t.line("?many(X)")
        t.line(".output")
        t.line("?few(X)")
        t.expect(r"\.output\r?\n")
        t.expect("2 rows")
        assert t.text().count("PAGED:│ 29 │") == 1, t.text()
        assert t.close() == 0
        text = open(out).read()
        assert "│ 29 │" in text and "30 rows" in text and "PAGED" not in text, text


async def t_width_box_output(binary):
    tmp = tempfile.mkdtemp(prefix="il_repl_")
    try:
        out = os.path.join(tmp, "rows.txt")
        long = "a value well past the forty characters a table cell shows"
        script = ('+t[(1, "%s"), (22, "b")]\n?t(X, Y)\n.width 10\n?t(X, Y)\n.width 0\n'
                  '.mode box\n.output %s\n?t(X, Y)\n.output\n.width 1\n' % (long, out))
        p = subprocess.run([client_bin(binary), "--local", "--script", "-"],
                           input=script.encode(), capture_output=True, timeout=TIMEOUT,
                           env=clean_env())
        text = p.stdout.decode()
        assert p.returncode == 1, (p.returncode, text, p.stderr)  # the bad .width
        assert '│  1 │ "a value well past the forty characters… │' in text, text  # 40
        assert '│  1 │ "a value … │' in text, text  # .width 10
        assert "Usage: .width N" in text, text
        rows = open(out).read()
        assert '"%s"' % long in rows, rows  # whole, in the file
        assert rows.count("├") == 2 and "2 rows" in rows, rows  # a rule between the rows
        assert "│ 22 │" not in text.split(".output")[1], text  # not on standard output
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


WHY_SETUP = ["+e[(1, 2), (2, 3)]", "+p(X, Y) <- e(X, Y)", "+p(X, Z) <- p(X, Y), e(Y, Z)"]
WHY_TREE = (r"Proof 1:\r?\n"
            r"  p\(1, 3\)  \[rule p\(X, Z\) <- p\(X, Y\), e\(Y, Z\)\] with [^\n]*Y = 2[^\n]*\r?\n"
            r"    p\(1, 2\)  \[rule p\(X, Y\) <- e\(X, Y\)\][^\n]*\r?\n"
            r"      e\(1, 2\)  \[fact\]\r?\n"
            r"    e\(2, 3\)  \[fact\]")


def why_in_repl(t):
    t.expect("default> ")
    for stmt in WHY_SETUP:
        t.line(stmt)
        t.expect("default> ")
    t.line(".why ?p(1, 3)")
    t.expect("1 rows")
    t.expect(WHY_TREE)
    t.expect("default> ")
    assert t.close() == 0


async def t_why_proof_tree(binary):
    home = tempfile.mkdtemp(prefix="il_repl_")
    try:
        t = Term(binary, ["--local"], home)
        try:
            why_in_repl(t)
        finally:
            t.kill()
        with OwnServer(binary) as srv:
            t = Term(binary, ["--server", srv.base], home)
            try:
                why_in_repl(t)
            finally:
                t.kill()
        script = "\n".join(WHY_SETUP + [".why ?p(1, 3)"]) + "\n"
        for mode, tree in (("table", False), ("json", True)):
            p = subprocess.run([client_bin(binary), "--local", "--mode", mode, "--script", "-"],
                               input=script.encode(), capture_output=True, timeout=TIMEOUT,
                               env=clean_env())
            out = p.stdout.decode()
            assert p.returncode == 0, (p.returncode, out, p.stderr)
            assert "Proof 1:" not in out, out  # scripts keep the reference transcript
            assert ('{"proof_trees":[{"version":1,"query":"?p(1, 3)"' in out) == tree, out
    finally:
        shutil.rmtree(home, ignore_errors=True)


WARN_SCRIPT = """+edge[(1, 2)]
?nothere(X)
+r2(X) <- edge(X)
?edge(X, Y), "a" = 1
s(X) <- edge(X, Y), zz(Y)
?edge(X, Y), X = 1
+person[("ann", 31), ("bob", 25)]
+pet[("rex", "dog")]
?person(N, A), A = "x"
?person(N, A), A = 31.0
?person(N, A), pet(P, K), A = K
?person(N, A), pet(P, K), N = P
?person(N, A), A = B
+typed(name: string, age: int)
+t2(N) <- typed(N, A), A = "x"
+t3(N) <- person(N, A), A = "x"
"""

# The warnings each statement of WARN_SCRIPT is followed by (none for the others): an
# equality a column's values can never meet is one, an int column against a float is not
# (numbers compare numerically), nor a rule over facts without a schema (facts written
# later may match).
WARNINGS = {
    "?nothere(X)": ["'nothere' does not exist (no facts, rule or schema by that name): "
                    "nothere(X) matches nothing"],
    "+r2(X) <- edge(X)": ["edge(X) has 1 argument(s), but 'edge' has 2 column(s): it matches "
                          "nothing"],
    '?edge(X, Y), "a" = 1': ['"a" = 1 compares values of different types: it is never true'],
    "s(X) <- edge(X, Y), zz(Y)": ["'zz' does not exist (no facts, rule or schema by that "
                                  "name): zz(Y) matches nothing"],
    '?person(N, A), A = "x"': ['A = "x" compares values of different types: it is never true '
                               "(A: column 2 of 'person' holds only numbers)"],
    "?person(N, A), pet(P, K), A = K": [
        "A = K compares values of different types: it is never true (A: column 2 of 'person' "
        "holds only numbers; K: column 2 of 'pet' holds only strings)"],
    '+t2(N) <- typed(N, A), A = "x"': ['A = "x" compares values of different types: it is '
                                       "never true (A: column 2 of 'typed' holds only "
                                       "numbers)"],
}


def check_warnings(out):
    seen, stmt = {}, None
    for line in out.splitlines():
        if line.startswith("> "):
            stmt = line[2:]
            seen[stmt] = []
        elif line.startswith("warning: "):
            assert stmt is not None, out
            seen[stmt].append(line[len("warning: "):])
    assert list(seen) == [l for l in WARN_SCRIPT.splitlines() if l], out
    for stmt, warnings in seen.items():
        assert warnings == WARNINGS.get(stmt, []), (stmt, warnings, out)
    # the warnings change nothing else: an int column equals a float numerically
    part = out.split("> ?person(N, A), A = 31.0\n")[1].split("\n> ")[0]
    assert '"ann"' in part and "1 rows" in part and '"bob"' not in part, out


async def t_warnings(binary):
    p = subprocess.run([client_bin(binary), "--local", "--script", "-"],
                       input=WARN_SCRIPT.encode(), capture_output=True, timeout=TIMEOUT,
                       env=clean_env())
    assert p.returncode == 0, p
    check_warnings(p.stdout.decode())
    with OwnServer(binary) as srv:
        p = subprocess.run([client_bin(binary), "--server", srv.base, "--script", "-"],
                           input=WARN_SCRIPT.encode(), capture_output=True, timeout=TIMEOUT,
                           env=clean_env(INPUTLAYER_API_KEY=KEY))
        assert p.returncode == 0, p
        check_warnings(p.stdout.decode())
        # in a machine-readable mode they go to standard error, beside the rows
        p = subprocess.run([client_bin(binary), "--server", srv.base, "--mode", "csv",
                            "--script", "-"], input=b"?nothere2(X)\n", capture_output=True,
                           timeout=TIMEOUT, env=clean_env(INPUTLAYER_API_KEY=KEY))
        assert "warning:" not in p.stdout.decode(), p
        assert "warning: 'nothere2' does not exist" in p.stderr.decode(), p


async def t_repl_from_a_pipe(binary):
    home = tempfile.mkdtemp(prefix="il_repl_")
    try:
        p = subprocess.run([client_bin(binary), "--local"],
                           input=b"+e[(1, 2),\n(2, 3)]\n?e(X, Y)\n.quit\n?e(X, Y)\n",
                           capture_output=True, timeout=TIMEOUT, env=clean_env(HOME=home))
        out = p.stdout.decode()
        assert p.returncode == 0, (p.returncode, out, p.stderr)
        assert "Inserted 2 fact(s)" in out and out.count("2 rows") == 1, out
        assert "default> " not in out and "Goodbye!" in out, out
        assert not os.path.exists(os.path.join(home, ".inputlayer_history")), out
    finally:
        shutil.rmtree(home, ignore_errors=True)


TESTS = [t_ctrl_c_in_process, t_ctrl_c_through_server, t_history_and_completion,
         t_reconnects_after_restart, t_subscription_delta_between_prompts, t_password_prompt,
         t_pager_for_long_tables, t_width_box_output, t_why_proof_tree, t_warnings,
         t_repl_from_a_pipe]
