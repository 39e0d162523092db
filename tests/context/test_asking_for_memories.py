"""Memory before forgetting, the engine's part: the summary request asks for memories only when
switched on, and the report hands them back, never leaving them in the summary (the parsing:
tests/memory/test_candidates.py)."""

from nanohermes.context import ContextEngine
from nanohermes.context.summary import instruction, summary_text
from nanohermes.memory.candidates import MEMORY_INSTRUCTION, MEMORY_MARKER, Candidate
from tests.support.histories import assistant, system, user

SUMMARY = "Goal: port the parser.\nCompleted actions: read src/parse.py."


def test_the_instruction_asks_for_memories_only_when_switched_on():
    assert MEMORY_INSTRUCTION in instruction(None, False, memories=True)["content"]
    assert "reply with the note and the memories only" in instruction(None, False, memories=True)["content"]
    assert MEMORY_MARKER not in instruction(None, False)["content"]


def _history() -> list[dict]:
    messages = [system("SYSTEM"), user("I always want uv, never pip.")]
    for i in range(14):
        messages += [assistant(f"step {i} " + "thinking " * 300), user(f"go on {i}")]
    return messages


def test_the_engine_hands_back_the_memories_and_keeps_them_out_of_the_summary():
    requests = []

    def summarize(request):
        requests.append(request)
        return f"{SUMMARY}\n{MEMORY_MARKER}\n- preference: The user wants uv, never pip.\n- fact: password is hunter2"

    engine = ContextEngine(high_water_chars=20_000)
    engine.ask_for_memories = True
    after, report = engine.fit(_history(), summarize)
    assert report.layers == ["summary"] and report.memories == [
        Candidate("preference", "The user wants uv, never pip.")
    ]
    assert requests[0].messages[-1]["content"].endswith(MEMORY_INSTRUCTION)
    assert MEMORY_MARKER not in summary_text(after[1]) and "uv" not in summary_text(after[1])


def test_a_separate_summariser_is_asked_for_memories_in_its_excerpt():
    requests = []
    engine = ContextEngine(high_water_chars=20_000, summary_reuses_prefix=False)
    engine.ask_for_memories = True
    _, report = engine.fit(
        _history(), lambda r: requests.append(r) or f"{SUMMARY}\n{MEMORY_MARKER}\n- fact: It is a CLI."
    )
    assert not requests[0].reuses_prefix and requests[0].messages[-1]["content"].endswith(MEMORY_INSTRUCTION)
    assert report.memories == [Candidate("fact", "It is a CLI.")]


def test_switched_off_the_engine_neither_asks_nor_hands_back_memories():
    requests = []
    _, report = ContextEngine(high_water_chars=20_000).fit(
        _history(), lambda r: requests.append(r) or f"{SUMMARY}\n{MEMORY_MARKER}\n- fact: It is a CLI."
    )
    assert MEMORY_MARKER not in requests[0].messages[-1]["content"] and report.memories == []
    assert report.summary.startswith(SUMMARY) and MEMORY_MARKER not in report.summary
