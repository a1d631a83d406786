#!/usr/bin/env python3
"""Tests of the shared-server mode of the conformance runner (shared.py, run.py --shared):
which graphs a script may touch, that the scheduler never runs two cases naming the same
graph at once, and, given a build directory, that what cases leave on the server is
reset (and would be reported if it were not).

Usage: tests/conformance/test_shared.py [BUILD_DIR]"""

import contextlib
import io
import os
import shutil
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402
import shared  # noqa: E402

if __name__ == "__main__" and len(sys.argv) > 1:
    os.environ["IL_BUILD"] = os.path.abspath(sys.argv.pop(1))


class GraphNames(unittest.TestCase):
    def names(self, text, loads=None):
        return shared.graph_names(text, (loads or {}).get)

    def test_own_graph_only(self):
        text = ("// a comment: .kg use default\n.kg create g1\n.kg use g1\n+e(1)\n?e(X)\n"
                ".kg use default\n.kg drop g1\n")
        self.assertEqual(self.names(text), {"g1"})

    def test_statements_before_a_switch_run_on_default(self):
        self.assertEqual(self.names("+e(1)\n.kg create g1\n+e(2)\n"), {"default", "g1"})

    def test_listing_and_switching_to_default_read_nothing(self):
        self.assertEqual(self.names(".kg list\n.kg\n.kg create g1\n.kg use default\n.kg list\n"
                                    ".kg drop g1\n"), {"g1"})

    def test_a_switch_that_may_fail_keeps_the_graph_before(self):
        # g2 was never created here: the switch may fail, leaving the current graph
        text = ".kg create g1\n.kg use g2\n+e(1)\n"
        self.assertEqual(self.names(text), {"g1", "g2"})
        text = ".kg use default\n.kg use nope\n+e(1)\n"
        self.assertEqual(self.names(text), {"default", "nope"})

    def test_after_dropping_the_current_graph(self):
        text = ".kg create g1\n.kg drop g1\n+e(1)\n"
        self.assertEqual(self.names(text), {"default", "g1"})

    def test_an_invalid_create_keeps_the_graph_before(self):
        self.assertEqual(self.names(".kg create 1bad\n+e(1)\n"), {"default", "1bad"})

    def test_block_comments_and_strings(self):
        text = ('/* .kg use g9\n */ .kg create g1\n+s("// not a comment")\n'
                '/* outer /* inner */ .kg use g8 */\n+t(1)\n')
        self.assertEqual(self.names(text), {"g1"})

    def test_loaded_files_run_in_the_current_graph(self):
        loads = {"examples/iql/h.iql": "+x(1)\n.kg use g3\n"}
        text = ".load examples/iql/h.iql\n+e(1)\n"
        self.assertEqual(self.names(text, loads), {"default", "g3"})
        # a file that cannot be read touches the current graph (the load fails there)
        self.assertEqual(self.names(".kg create g1\n.load nowhere.iql\n"), {"g1"})


class Scheduler(unittest.TestCase):
    def test_never_two_with_a_common_name(self):
        items = [frozenset(s) for s in (["a"], ["a", "b"], ["b"], ["c"], ["a"], ["d"], ["c", "d"],
                                        ["e"], ["default"], ["default", "f"], ["f"])] * 4
        running, lock, overlaps, most = [], threading.Lock(), [], [0]

        def work(item):
            with lock:
                for other in running:
                    if other & item:
                        overlaps.append((other, item))
                running.append(item)
                most[0] = max(most[0], len(running))
            time.sleep(0.01)
            with lock:
                running.remove(item)
            return sorted(item)

        out = shared.run_scheduled(items, lambda i: i, work, 3)
        self.assertEqual(out, [sorted(i) for i in items])
        self.assertEqual(overlaps, [])
        self.assertGreater(most[0], 1)  # and some did run together

    def test_an_exception_is_raised_after_the_others(self):
        def work(item):
            if item == 3:
                raise OSError("boom")
            return item

        with self.assertRaises(OSError):
            shared.run_scheduled([frozenset([i]) for i in range(8)], lambda i: i,
                                 lambda i: work(min(i)), 2)


@unittest.skipUnless(os.environ.get("IL_BUILD"), "needs a build directory")
class Reset(unittest.TestCase):
    """Two cases leave a graph, facts and a rule in default; the reset removes them."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="il-shared-test-")
        cat = os.path.join(self.dir, "cases", "01_left")
        os.makedirs(cat)
        files = {
            "01_default.iql": "+d(1)\n+r(X) <- d(X)\n",
            "02_graph.iql": ".kg create left_behind\n+k(1)\n",
            "03_reads.iql": "?d(X)\n",
        }
        outs = {
            "01_default.iql": "> +d(1)\nInserted 1 fact(s) into 'd'.\n> +r(X) <- d(X)\n"
                              "Rule 'r' registered.\n",
            "02_graph.iql": "> .kg create left_behind\nKnowledge graph 'left_behind' created.\n"
                            "Switched to knowledge graph: left_behind\n> +k(1)\n"
                            "Inserted 1 fact(s) into 'k'.\n",
            "03_reads.iql": "> ?d(X)\nNo results.\n",
        }
        for name, text in files.items():
            with open(os.path.join(cat, name), "w") as f:
                f.write(text)
            with open(os.path.join(cat, name + ".out"), "w") as f:
                f.write(outs[name])
        self.known = os.path.join(self.dir, "known.txt")
        open(self.known, "w").close()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_main(self):
        build = os.environ["IL_BUILD"]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            st = run.main(["--client", os.path.join(build, "inputlayer-client"),
                           "--server-bin", os.path.join(build, "inputlayer-server"),
                           "--cases", self.dir, "--known", self.known, "--shared",
                           "--clients", "1"])
        return st, out.getvalue()

    def test_reset(self):
        st, out = self.run_main()
        self.assertEqual(st, 0, out)
        self.assertIn("TOTAL: 3 passed, 0 failed", out)

    def test_without_the_reset(self):
        saved = shared.reset
        shared.reset = lambda *args: None
        try:
            st, out = self.run_main()
        finally:
            shared.reset = saved
        self.assertEqual(st, 1, out)
        self.assertIn("FAIL: the server kept state after the cases' resets: graph left_behind, "
                      "1 fact(s) of d in default, rule r in default", out)
        self.assertIn("FAIL 01_left/03_reads.iql", out)  # it saw the facts of 01


if __name__ == "__main__":
    unittest.main()
