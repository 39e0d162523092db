"""The `remember` tool: stores through ctx.memory, a new session's user message carries what it
stored only when relevant, and its errors are written for the model."""

import json

from nanohermes.config import Config
from nanohermes.memory.block import BLOCK_END, BLOCK_START, attach_block
from nanohermes.memory.entry_points import block_for
from nanohermes.memory.store import MemoryStore
from nanohermes.prompt.skills import Skills
from nanohermes.prompt.system import SystemPrompt
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.knowledge import KNOWLEDGE_TOOLS

TOOLS = {t.name: t for t in KNOWLEDGE_TOOLS}


def test_remember_then_a_new_sessions_user_message_carries_it_only_when_relevant(workspace, isolated_home):
    ctx = ToolContext(workspace=workspace, home=isolated_home, memory=MemoryStore.in_home(isolated_home))
    result = dispatch(
        ctx, TOOLS, "remember", json.dumps({"text": "The team deploys with Ansible playbooks.", "kind": "decision"})
    )
    assert result.ok and "remembered" in result.content and "[decision]" in result.content

    config = Config(workspace=workspace, home=isolated_home)
    prompt = SystemPrompt(config, Skills([]), warn=print)  # a new session's
    memory = MemoryStore.in_home(isolated_home)

    def user_message(query: str) -> str:
        return attach_block(query, block_for(memory, query)[0])

    relevant = user_message("How do we deploy? Which playbooks?")
    assert "- [decision] The team deploys with Ansible playbooks." in relevant
    assert relevant.startswith("How do we deploy? Which playbooks?\n\n") and relevant.endswith(BLOCK_END)
    irrelevant = user_message("Rename the helper in utils.py")
    assert "Ansible" not in irrelevant and BLOCK_START not in irrelevant
    assert "Ansible" not in prompt.system()


def test_remember_defaults_to_fact_and_reports_a_merge(workspace, isolated_home):
    ctx = ToolContext(workspace=workspace, home=isolated_home, memory=MemoryStore.in_home(isolated_home))
    first = dispatch(ctx, TOOLS, "remember", {"text": "Tests run with make test"})
    again = dispatch(ctx, TOOLS, "remember", {"text": "tests run with `make test`"})
    assert "[fact]" in first.content and again.content.startswith("updated existing memory")


def test_remember_errors_are_model_readable(workspace, isolated_home):
    ctx = ToolContext(workspace=workspace, home=isolated_home, memory=MemoryStore.in_home(isolated_home))
    too_long = dispatch(ctx, TOOLS, "remember", {"text": "x" * 401})
    bad_kind = dispatch(ctx, TOOLS, "remember", {"text": "ok", "kind": "rumour"})
    no_store = dispatch(ToolContext(workspace=workspace, home=isolated_home), TOOLS, "remember", {"text": "ok"})
    assert not too_long.ok and "at most 400" in too_long.content
    assert not bad_kind.ok and "preference" in bad_kind.content
    assert not no_store.ok and "not available" in no_store.content
