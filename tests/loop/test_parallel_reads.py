"""Read-only calls of one reply run side by side (bounded); their results join the history in
the model's order, writes and commands stay in turn with their approvals, questions are asked on
the loop's thread, and Ctrl-C leaves every call answered and every start finished."""

import os
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from nanohermes import events as ev
from nanohermes.loop.execute import READ_WORKERS
from nanohermes.loop.together import Together
from nanohermes.tools.builtin import BUILTIN_TOOLS
from tests.support.agents import make_agent
from tests.support.raw_servers import http_response
from tests.support.scripted_server import calls, text

GATE_TIMEOUT_S = (
    30.0  # a request that waits this long for company ran alone (a loaded laptop starts them late): the test then fails
)


class Gate(ThreadingHTTPServer):
    """Pages that answer only once `wanted` requests were in flight together (or never, when
    `held`), so a run one at a time shows up as a peak of 1, not as a timing."""

    def __init__(self, wanted: int, held: bool = False):
        super().__init__(("127.0.0.1", 0), _GateHandler)
        self.wanted, self.held = wanted, held
        self.in_flight = self.peak = 0
        self.lock = threading.Condition()
        self.release = threading.Event()
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def enter(self) -> None:
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            self.lock.notify_all()
            self.lock.wait_for(lambda: self.peak >= self.wanted and not self.held, GATE_TIMEOUT_S)

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1


class _GateHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.server.enter()
        if self.path == "/slow":
            time.sleep(0.1)  # finishes after the pages asked after it
        self.wfile.write(http_response("200 OK", "text/plain", f"page {self.path}\n"))
        self.server.leave()


@pytest.fixture
def gate():
    servers = []

    def make(wanted: int, held: bool = False) -> Gate:
        servers.append(Gate(wanted, held))
        return servers[-1]

    yield make
    for srv in servers:
        srv.held = False
        srv.release.set()
        with srv.lock:
            srv.lock.notify_all()
        srv.shutdown()
        srv.server_close()


def _fetches(url: str, paths: list[str]):
    return [("web_fetch", {"url": f"{url}{path}"}) for path in paths]


def _results(agent) -> list[tuple[str, str]]:
    """(call id, content) of the tool results, in the history's order."""
    return [(m["tool_call_id"], m["content"]) for m in agent.messages if m["role"] == "tool"]


def _call_ids(agent) -> list[str]:
    return [c["id"] for m in agent.messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()]


def test_reads_run_together_and_their_results_keep_the_models_order(server, workspace, gate):
    pages = gate(READ_WORKERS)
    paths = ["/slow", "/b", "/c", "/d", "/e"]
    server.add(calls(*_fetches(pages.url, paths)), text("done"))
    events = []
    agent = make_agent(server, workspace, tools=BUILTIN_TOOLS, events=events, mode="auto")
    assert agent.run_turn("read").final_text == "done"
    assert pages.peak == READ_WORKERS  # bounded: never more at once, and not one at a time
    results = _results(agent)
    assert [call_id for call_id, _ in results] == _call_ids(agent)
    assert [content.strip().splitlines()[-1] for _, content in results] == [f"page {p}" for p in paths]
    started = [e.call_id for e in events if isinstance(e, ev.ToolStarted)]
    finished = [e.call_id for e in events if isinstance(e, ev.ToolFinished)]
    assert started == finished == _call_ids(agent)  # the finishes come in the model's order too
    assert all(events.index(s) < events.index(f) for s in events if isinstance(s, ev.ToolStarted) for f in events if isinstance(f, ev.ToolFinished) and f.call_id == s.call_id)  # fmt: skip
    assert server.chat_requests()[-1]["messages"][-1]["tool_call_id"] == _call_ids(agent)[-1]


def test_a_write_between_reads_runs_in_turn_with_its_approval(server, workspace):
    (workspace / "a.txt").write_text("old\n")
    asked = []

    def approve(tool, args, preview):
        asked.append((tool.name, threading.current_thread() is threading.main_thread()))
        return "yes"

    server.add(
        calls(
            ("read_file", {"path": "a.txt"}),
            ("grep", {"pattern": "old"}),
            ("write_file", {"path": "a.txt", "content": "new\n"}),
            ("read_file", {"path": "a.txt"}),
            ("glob", {"pattern": "*.txt"}),
        ),
        text("done"),
    )
    agent = make_agent(server, workspace, tools=BUILTIN_TOOLS, approve=approve, mode="ask")
    agent.run_turn("change it")
    contents = [content for _, content in _results(agent)]
    assert "old" in contents[0] and "a.txt:1: old" in contents[1]  # read before the write
    assert "new" in contents[3] and "old" not in contents[3]  # read after it
    assert asked == [("write_file", True)]
    assert [call_id for call_id, _ in _results(agent)] == _call_ids(agent)


def test_a_question_from_a_read_running_beside_others_is_asked_on_the_loops_thread(server, workspace, gate):
    pages = gate(2)
    asked = []

    def approve(tool, args, preview):
        asked.append(threading.current_thread() is threading.main_thread())
        return "session"  # the first answer covers the second, asked after it on the same thread

    server.add(calls(*_fetches(pages.url, ["/a", "/b", "/c"])), text("done"))
    agent = make_agent(server, workspace, tools=BUILTIN_TOOLS, approve=approve, mode="ask")
    agent.run_turn("read")
    assert asked == [True]
    assert [content.strip().splitlines()[-1] for _, content in _results(agent)] == ["page /a", "page /b", "page /c"]


def test_repeats_in_one_reply_are_refused_and_noted_as_before(server, workspace):
    (workspace / "a.txt").write_text("hello\n")
    server.add(calls(*[("read_file", {"path": "a.txt"})] * 3), text("done"))
    agent = make_agent(server, workspace, tools=BUILTIN_TOOLS)
    agent.run_turn("read")
    first, second, third = [content for _, content in _results(agent)]
    assert "hello" in first and "same read_file call" not in first
    assert "same read_file call you made earlier" in second
    assert third.startswith("error: this is repeat number 3")


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals reach the main thread")
def test_ctrl_c_during_reads_answers_every_call_and_finishes_every_start(server, workspace, gate):
    pages = gate(99, held=True)  # nothing answers
    server.add(calls(*_fetches(pages.url, ["/a", "/b", "/c", "/d", "/e"])))
    events = []
    agent = make_agent(server, workspace, tools=BUILTIN_TOOLS, events=events, mode="auto")

    def press_ctrl_c():
        deadline = time.monotonic() + GATE_TIMEOUT_S
        while pages.in_flight < READ_WORKERS and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=press_ctrl_c, daemon=True).start()
    started = time.monotonic()
    result = agent.run_turn("read")
    assert result.stopped_reason == "interrupted" and time.monotonic() - started < GATE_TIMEOUT_S
    assert [call_id for call_id, _ in _results(agent)] == _call_ids(agent)  # every call answered, in order
    finished = [e for e in events if isinstance(e, ev.ToolFinished)]
    assert sorted(e.call_id for e in finished) == sorted(_call_ids(agent)) and not any(e.ok for e in finished)
    assert all(e.facts.interrupted for e in finished)


def test_together_keeps_order_bounds_threads_and_raises_in_place():
    running, peak, lock = [0], [0], threading.Lock()

    def job(i):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.02 * (5 - i))  # the first ends last
        with lock:
            running[0] -= 1
        if i == 4:
            raise ValueError("four")
        return i

    together = Together(2)
    results = together.results([lambda i=i: job(i) for i in range(5)])
    assert [next(results) for _ in range(4)] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="four"):
        next(results)
    assert peak[0] == 2


def test_together_runs_a_jobs_question_on_the_callers_thread():
    together = Together(3)
    caller = threading.current_thread()
    asked = together.results([lambda: together.on_caller(lambda: threading.current_thread() is caller)] * 3)
    assert list(asked) == [True, True, True]
