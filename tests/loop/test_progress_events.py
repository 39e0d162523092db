"""What the loop tells a front end so it can show progress: requests, tool output, summaries,
durations and facts, and the usage of a request cut by Ctrl-C."""

from nanohermes import events as ev
from nanohermes.tools.shell import run_command
from tests.support.agents import TEST_TOOLS, make_agent
from tests.support.scripted_server import Reply, call, prose, text


def test_each_request_is_announced_before_its_reply_streams(server, workspace):
    events = []
    server.add(call("echo", {"text": "a"}), text("done"))
    make_agent(server, workspace, events=events).run_turn("go")
    kinds = [type(e).__name__ for e in events if not isinstance(e, tuple)]
    assert kinds[0] == "RequestStarted" and kinds.count("RequestStarted") == 2
    assert kinds.index("ToolFinished") < len(kinds) - 1 - kinds[::-1].index("RequestStarted")


def test_a_finished_command_carries_duration_exit_code_and_tail(server, workspace):
    events = []
    server.add(call("run_command", {"command": "echo start; sleep 0.3; echo broken >&2; exit 2"}), text("done"))
    make_agent(server, workspace, tools=[run_command], events=events).run_turn("go")
    finished = next(e for e in events if isinstance(e, ev.ToolFinished))
    assert finished.facts.exit_code == 2 and finished.facts.tail == "start\nbroken"
    assert 0.3 <= finished.duration_s < 5
    progress = [e for e in events if isinstance(e, ev.ToolProgress)]
    assert progress and progress[0].text == "start" and progress[0].call_id == finished.call_id


def test_a_summary_is_bracketed_by_start_and_finish(server, workspace):
    events = []
    server.add(*[call("echo", {"text": str(i)}) for i in range(7)], text("done"))
    agent = make_agent(server, workspace, events=events)
    agent.run_turn("go")
    server.add(text("A summary."))
    before = len(events)
    agent.fit_context(force=True)
    kinds = [type(e).__name__ for e in events[before:]]
    assert kinds[:2] == ["SummaryStarted", "SummaryFinished"] and events[before + 1].ok


class InterruptAfter(list):
    """An event sink that presses Ctrl-C once `count` text deltas were shown."""

    def __init__(self, count):
        super().__init__()
        self.count = count

    def append(self, event):
        super().append(event)
        if isinstance(event, ev.TextDelta):
            self.count -= 1
            if self.count == 0:
                raise KeyboardInterrupt


def test_usage_of_a_request_cut_by_ctrl_c_is_estimated_not_zero(server, workspace):
    server.add(Reply(content=prose(1_000), chunk_size=5, delay=0.01))
    result = make_agent(server, workspace, tools=TEST_TOOLS, events=InterruptAfter(5)).run_turn("talk")
    assert result.stopped_reason == "interrupted"
    assert result.usage.requests == 1 and result.usage.estimated
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0


def test_cached_tokens_are_summed_when_the_provider_reports_them(server, workspace):
    usage = {"prompt_tokens": 1000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 800}}
    server.add(call("echo", {"text": "a"}, usage=usage), text("done", usage=usage))
    result = make_agent(server, workspace).run_turn("go")
    assert result.usage.cached_tokens == 1600 and result.usage.prompt_tokens == 2000
    assert result.usage.last_request_tokens == 1010
