"""Which strategy a turn gets (loop/coach/choice.py): `coach` forced, or auto by the model's signs (kept
per endpoint and model across sessions), the window only while too few are seen. The pure parts
directly; the loop and the CLI through the scripted server over real HTTP."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from nanohermes import events as ev
from nanohermes.cli import app
from nanohermes.loop.coach.choice import (
    BAD,
    EVIDENCE,
    GOOD,
    PROFILE,
    TRUSTED_AFTER,
    Evidence,
    decide,
    sign_of,
)
from nanohermes.loop.coach.small_texts import NOTHING_CHANGED_YET, WHOLE_AT_ONCE
from nanohermes.loop.coach.wholefile import asked_for
from nanohermes.provider import AssistantTurn
from nanohermes.provider.stream import FINISH_REPEATED
from nanohermes.tools.builtin import BUILTIN_TOOLS
from tests.support.agents import make_agent
from tests.support.scripted_server import call, calls, text

TOOLS = [t for t in BUILTIN_TOOLS if t.name in ("read_file", "edit_file", "write_file")]
SCHEMAS = [t.schema(False) for t in TOOLS]
CALC = "def add(a, b):\n    return a - b\n"
REQUEST = "Modify calc.py so that add adds."


def native(name: str, arguments: str, finish: str = "tool_calls") -> AssistantTurn:
    call_ = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}
    return AssistantTurn(content="", tool_calls=[call_], finish_reason=finish)


def test_a_reply_is_a_good_sign_when_its_native_calls_are_well_formed_and_a_bad_one_when_broken():
    assert sign_of(native("read_file", '{"path": "a.py"}'), SCHEMAS) == GOOD
    assert sign_of(native("read_file", '{"path": "a.py"'), SCHEMAS) == BAD  # arguments that do not parse
    assert sign_of(native("read_file", '["a.py"]'), SCHEMAS) == BAD  # no object
    assert sign_of(native("shell", '{"cmd": "ls"}'), SCHEMAS) == BAD  # a tool not offered
    as_text = '```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```'
    assert sign_of(AssistantTurn(content=as_text), SCHEMAS) == BAD  # run as a call, but written as text
    assert sign_of(AssistantTurn(content="x" * 10, finish_reason=FINISH_REPEATED), SCHEMAS) == BAD
    assert sign_of(AssistantTurn(content="It adds."), SCHEMAS) is None  # an answer says nothing of calls
    assert sign_of(native("write_file", '{"path": "a.py", "con', "length"), SCHEMAS) is None  # the limit's doing


def test_auto_trusts_signs_over_the_window_and_the_window_only_while_too_few_are_seen():
    assert decide("auto", "", lean=True).name == "small"
    assert decide("auto", "", lean=False).name == "plain"
    assert decide("auto", GOOD * (TRUSTED_AFTER - 1), lean=True).name == "small"  # too few yet
    assert decide("auto", GOOD * TRUSTED_AFTER, lean=True).name == "plain"
    assert decide("auto", BAD, lean=False).name == "small"
    assert decide("auto", GOOD * (EVIDENCE - 1) + BAD, lean=True).name == "plain"  # one slip in twenty
    assert decide("auto", BAD * 4 + GOOD * 16, lean=False).name == "small"  # one in five
    assert decide("auto", BAD * 30 + GOOD * EVIDENCE, lean=True).name == "plain"  # the last twenty count


@given(st.sampled_from(["plain", "small"]), st.text(alphabet=GOOD + BAD, max_size=40), st.booleans())
def test_a_forced_coach_is_never_overruled(setting, signs, lean):
    assert decide(setting, signs, lean).name == setting
    assert decide("auto", signs, lean).name in ("plain", "small")


def test_signs_are_kept_per_endpoint_and_model_and_a_broken_profile_is_started_afresh(tmp_path):
    one, other = Evidence(tmp_path, "http://a/v1 m1"), Evidence(tmp_path, "http://a/v1 m2")
    one.went_round()
    other.reply(native("read_file", '{"path": "a.py"}'), SCHEMAS)
    assert Evidence(tmp_path, "http://a/v1 m1").signs == BAD and Evidence(tmp_path, "http://a/v1 m2").signs == GOOD
    for _ in range(EVIDENCE + 3):
        one.reply(native("read_file", '{"path": "a.py"}'), SCHEMAS)
    assert Evidence(tmp_path, "http://a/v1 m1").signs == GOOD * EVIDENCE  # the oldest dropped
    (tmp_path / PROFILE).write_text("{not json")
    assert Evidence(tmp_path, "http://a/v1 m1").signs == ""
    Evidence(tmp_path, "http://a/v1 m1").went_round()
    assert json.loads((tmp_path / PROFILE).read_text())["signs"] == {"http://a/v1 m1": BAD}


def _calc(workspace):
    (workspace / "calc.py").write_text(CALC)
    (workspace / "notes.txt").write_text("add must add\n")


def test_auto_at_a_small_window_with_nothing_seen_asks_for_the_file_whole_with_the_request(server, workspace):
    """The held-out benchmark's setting (a fresh home, llama.cpp at -c 8192): the small strategy, as measured."""
    _calc(workspace)
    server.add(text("```python\ndef add(a, b):\n    return a + b\n```"), text("Done."))
    make_agent(server, workspace, tools=TOOLS, context_window=8_192).run_turn(REQUEST)
    first = server.chat_requests()[0]
    assert first.get("tool_choice") == "none"
    assert first["messages"][-1]["content"].endswith(asked_for("calc.py", WHOLE_AT_ONCE))


def test_a_model_whose_calls_are_well_formed_gets_plain_coaching_from_its_next_turn_on(server, workspace):
    """A 7B model at llama.cpp's -c 8192: after TRUSTED_AFTER well-formed calls its requests go with
    tools on, as any model's; said once; kept for the next session with this endpoint and model."""
    _calc(workspace)
    read = call("read_file", {"path": "notes.txt"})
    server.add(*[calls(("read_file", {"path": f"n{i}.txt"})) for i in range(TRUSTED_AFTER)], text("Read."))
    events = []
    agent = make_agent(server, workspace, tools=TOOLS, context_window=8_192, events=events)
    agent.run_turn("Read n0.txt to n4.txt one by one.")
    server.add(read, text("Fixed."))
    agent.run_turn(REQUEST)
    plain = server.chat_requests()[TRUSTED_AFTER + 1]
    assert plain.get("tool_choice") is None and WHOLE_AT_ONCE not in plain["messages"][-1]["content"]
    assert [e.text for e in events if isinstance(e, ev.Notice) and e.text.startswith("coaching:")] == [
        f"coaching: plain from this request ({TRUSTED_AFTER} of the model's last {TRUSTED_AFTER} replies "
        "with calls were well formed)"
    ]
    server.add(text("Fixed."))
    make_agent(server, workspace, tools=TOOLS, context_window=8_192).run_turn(REQUEST)  # a new session
    assert server.chat_requests()[-1].get("tool_choice") is None


def test_a_model_that_writes_calls_as_text_gets_small_coaching_at_any_window(server, workspace):
    """Its call written as text is a bad sign: at 128K its next turn is coached as a small model's — an
    answer that changed nothing brings the ask for the file whole, which plain would not send."""
    _calc(workspace)
    as_text = '```json\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n```'
    server.add(text(as_text), text("It says add must add."))
    agent = make_agent(server, workspace, tools=TOOLS, context_window=128_000)
    agent.run_turn("What does notes.txt say?")
    server.add(text("calc.py already adds."), text("```python\ndef add(a, b):\n    return a + b\n```"), text("Done."))
    agent.run_turn(REQUEST)  # written whole with nothing here to check it: the end, no "Done." asked for
    asked = server.chat_requests()[-1]
    assert asked["messages"][-1]["content"] == asked_for("calc.py", NOTHING_CHANGED_YET)
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize("coach, requests", [("plain", 1), ("small", 2)])  # small: the ask, then the file whole
def test_forced_plain_takes_an_answer_as_it_comes_and_small_asks_for_the_change(server, workspace, coach, requests):
    _calc(workspace)
    server.add(text("calc.py already adds."), text("```python\ndef add(a, b):\n    return a + b\n```"), text("Done."))
    make_agent(server, workspace, tools=TOOLS, coach=coach).run_turn(REQUEST)
    assert len(server.chat_requests()) == requests


def test_the_coach_setting_comes_from_config_toml_and_the_flag_and_a_wrong_one_is_refused(
    server, workspace, isolated_home
):
    _calc(workspace)
    (isolated_home / "config.toml").write_text('coach = "plain"\ncontext_window = 8192\n')
    base = ["-p", REQUEST, "--yes", "--base-url", server.url, "-C", str(workspace)]
    server.add(text("calc.py already adds."), text("```python\ndef add(a, b):\n    return a + b\n```"), text("Done."))
    assert CliRunner().invoke(app, base).exit_code == 0
    assert server.chat_requests()[0].get("tool_choice") is None  # plain: no ask with the request
    assert CliRunner().invoke(app, [*base, "--coach", "small"]).exit_code == 0
    assert server.chat_requests()[1].get("tool_choice") == "none"  # the flag wins
    (isolated_home / "config.toml").write_text('coach = "tiny"\n')
    wrong = CliRunner().invoke(app, base)
    assert wrong.exit_code != 0 and "coach = 'tiny'" in wrong.stderr and "auto, plain, small" in wrong.stderr
