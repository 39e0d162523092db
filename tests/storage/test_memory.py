import json
import multiprocessing
import stat
from pathlib import Path

import pytest

from nanohermes.config import Config
from nanohermes.prompt.skills import Skills
from nanohermes.prompt.system import SystemPrompt
from nanohermes.storage.memory import (
    BLOCK_END,
    BLOCK_HEADER,
    BLOCK_START,
    INJECT_CHAR_BUDGET,
    INJECT_TOP_K,
    MAX_ENTRIES,
    MAX_ENTRY_CHARS,
    Entry,
    MemoryStore,
    MemoryStoreError,
    attach_block,
    bm25_rank,
    build_index,
    entry_line,
    is_near_duplicate,
    render_block,
    tokenize,
)
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.knowledge import KNOWLEDGE_TOOLS
from nanohermes.ui.memory_commands import memory_command

TOOLS = {t.name: t for t in KNOWLEDGE_TOOLS}
STAMP = "2025-01-01T00:00:00Z"


def entry(text: str, *, kind: str = "fact", id: str = "e", uses: int = 0, updated: str = STAMP) -> Entry:
    return Entry(id, kind, text, STAMP, updated, uses)


def rank(texts: list[str], query: str, top_k: int = 10) -> list[int]:
    index = build_index([tokenize(t) for t in texts])
    return [doc for doc, _ in bm25_rank(index, tokenize(query), top_k)]


def write_entries(path: Path, entries: list[Entry]) -> None:
    payload = {"version": 1, "entries": [e.__dict__ for e in entries]}
    path.write_text(json.dumps(payload), encoding="utf-8")


@pytest.fixture
def store(isolated_home) -> MemoryStore:
    return MemoryStore.in_home(isolated_home)


# ---- tokenising and ranking (pure) -----------------------------------------------------------


def test_tokenize_lowercases_english_and_drops_stop_words():
    assert tokenize("The User PREFERS pytest, not unittest!") == ["user", "prefer", "pytest", "not", "unittest"]


def test_inflections_meet_their_stem_so_queries_find_memories_worded_differently():
    assert tokenize("formatting formats formatted") == ["format"] * 3
    assert tokenize("classes class status passing") == ["class", "class", "status", "pass"]


def test_tokenize_splits_cjk_into_characters_and_bigrams():
    assert tokenize("用中文回答") == ["用", "中", "文", "回", "答", "用中", "中文", "文回", "回答"]
    assert tokenize("用 pytest 测试") == ["用", "pytest", "测", "试", "测试"]


ENGLISH = [
    "The project uses pytest for tests; run them with make test.",
    "The user prefers tabs over spaces in Makefiles.",
    "Deployment goes through GitHub Actions on every tag.",
    "The database is PostgreSQL 16, migrations live in db/migrations.",
]
CHINESE = [
    "用户喜欢用中文回答问题",
    "项目使用 pytest 运行测试",
    "部署脚本放在 scripts 目录下",
    "数据库是 PostgreSQL，迁移文件在 db 目录",
]


@pytest.mark.parametrize(
    "query, best",
    [
        ("how do I run the tests?", 0),
        ("tabs or spaces?", 1),
        ("where are database migrations", 3),
        ("deploy a new tag", 2),
    ],
)
def test_bm25_ranks_the_right_english_entry_first(query, best):
    assert rank(ENGLISH, query)[0] == best


@pytest.mark.parametrize(
    "query, best", [("请用中文回答", 0), ("怎么运行测试", 1), ("部署脚本在哪里", 2), ("数据库迁移", 3)]
)
def test_bm25_ranks_the_right_chinese_entry_first(query, best):
    assert rank(CHINESE, query)[0] == best


def test_bm25_returns_nothing_for_an_unrelated_query():
    assert rank(ENGLISH, "what is the weather in Paris") == []
    assert rank([], "anything") == []


def test_bm25_prefers_the_rarer_term():
    texts = ["python style guide", "python python packaging", "python lint rules"]
    assert rank(texts, "python packaging")[0] == 1


# ---- rendering (pure) ------------------------------------------------------------------------


def block_overhead() -> int:
    return len(render_block([entry("x")])) - len("\n" + entry_line(entry("x")))


def test_block_has_markers_and_the_reference_only_header():
    text = render_block([entry("use uv", kind="preference")])
    assert text == f"{BLOCK_START}\n{BLOCK_HEADER}\n- [preference] use uv\n{BLOCK_END}"
    assert "reference only" in BLOCK_HEADER and "current instruction wins" in BLOCK_HEADER


def test_empty_selection_renders_nothing():
    assert render_block([]) == ""


def test_block_at_the_char_budget_keeps_every_entry_and_one_over_drops_the_last():
    first = entry("a" * 300)
    room = INJECT_CHAR_BUDGET - block_overhead() - len("\n" + entry_line(first)) - len("\n- [fact] ")
    exact = render_block([first, entry("b" * room)])
    over = render_block([first, entry("b" * (room + 1))])
    assert len(exact) == INJECT_CHAR_BUDGET and "b" * room in exact
    assert "b" not in over.replace(BLOCK_HEADER, "") and len(over) < INJECT_CHAR_BUDGET


def test_block_stops_at_the_first_entry_that_does_not_fit():
    entries = [entry("most relevant"), entry("x" * INJECT_CHAR_BUDGET), entry("short but less relevant")]
    text = render_block(entries)
    assert "most relevant" in text
    assert "short but less relevant" not in text  # break, not continue


def test_block_never_exceeds_its_budget():
    for budget in (0, 50, 200, 1000):
        assert len(render_block([entry("w" * 90)] * 10, budget)) <= budget


def test_multi_line_entries_render_on_one_line():
    assert render_block([entry("line one\nline two")]).count("\n") == 3


# ---- near-duplicates (pure) ------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b, same",
    [
        ("The user prefers pytest.", "user prefers PYTEST", True),
        ("Run tests with make test", "run tests with `make test`!", True),
        ("Use tabs in Makefiles", "Never use tabs in Makefiles", False),
        ("Use tabs", "Use spaces", False),
        ("用户喜欢用中文回答", "用户喜欢用中文回答。", True),
    ],
)
def test_near_duplicate_detection(a, b, same):
    assert is_near_duplicate(a, b) is same


# ---- the store -------------------------------------------------------------------------------


def test_add_then_fresh_store_sees_it(store, isolated_home):
    result = store.add("The user prefers pytest.", "preference")
    reloaded = MemoryStore.in_home(isolated_home).entries()
    assert [(e.id, e.kind, e.text) for e in reloaded] == [(result.entry.id, "preference", "The user prefers pytest.")]
    assert len(result.entry.id) == 6 and not result.merged


def test_near_duplicate_is_merged_keeping_the_id(store):
    first = store.add("The user prefers pytest.")
    second = store.add("user prefers PYTEST", "preference")
    assert second.merged and second.entry.id == first.entry.id
    assert [(e.text, e.kind) for e in store.entries()] == [("user prefers PYTEST", "preference")]


def test_different_facts_are_not_merged(store):
    store.add("Use tabs in Makefiles")
    store.add("Never use tabs in Makefiles")
    assert len(store.entries()) == 2


def test_entry_at_400_chars_is_stored_and_401_refused(store):
    store.add("a" * MAX_ENTRY_CHARS)
    with pytest.raises(MemoryStoreError, match=f"401 chars; a memory holds at most {MAX_ENTRY_CHARS}"):
        store.add("b" * (MAX_ENTRY_CHARS + 1))
    assert [len(e.text) for e in store.entries()] == [MAX_ENTRY_CHARS]


def test_empty_text_and_unknown_kind_are_refused(store):
    with pytest.raises(MemoryStoreError, match="empty"):
        store.add("   ")
    with pytest.raises(MemoryStoreError, match="preference, fact, decision, note"):
        store.add("something", "gossip")


def test_full_store_evicts_the_least_useful_entry(store):
    entries = [entry(f"topic{i} detail{i} remark{i}", id=f"id{i:03d}", uses=1) for i in range(MAX_ENTRIES)]
    entries[7] = entry("never used older", id="old", uses=0, updated="2024-01-01T00:00:00Z")
    entries[9] = entry("never used newer", id="new", uses=0)
    write_entries(store.path, entries)

    result = store.add("a brand new fact")

    kept = store.entries()
    assert len(kept) == MAX_ENTRIES
    assert result.evicted is not None and result.evicted.id == "old"
    assert "old" not in {e.id for e in kept} and result.entry.id in {e.id for e in kept}


def test_store_below_the_cap_evicts_nothing(store):
    write_entries(store.path, [entry(f"topic{i} detail{i}", id=f"id{i}") for i in range(MAX_ENTRIES - 1)])
    assert store.add("the five hundredth fact").evicted is None
    assert len(store.entries()) == MAX_ENTRIES


def test_memory_file_is_private_and_written_atomically(store, isolated_home):
    store.add("secret-ish preference", "preference")
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    lock = Path(f"{store.path}.lock")
    assert not lock.exists() or stat.S_IMODE(lock.stat().st_mode) == 0o600
    assert sorted(p.name for p in isolated_home.iterdir() if p.name.endswith(".tmp")) == []
    assert json.loads(store.path.read_text())["version"] == 1


def _add_many(home: str, prefix: str, count: int) -> None:
    store = MemoryStore.in_home(Path(home))
    for i in range(count):
        store.add(f"{prefix}{i} distinct{prefix}{i} remark{prefix}{i}")


def test_two_processes_adding_at_once_lose_nothing(isolated_home):
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_add_many, args=(str(isolated_home), p, 25)) for p in ("alpha", "beta")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert [w.exitcode for w in workers] == [0, 0]
    assert len(MemoryStore.in_home(isolated_home).entries()) == 50


def test_corrupt_file_is_never_overwritten(store):
    store.path.write_bytes(b'{"entries": [oops')
    for action in (lambda: store.add("new fact"), lambda: store.select_for_prompt("fact"), lambda: store.forget("abc")):
        with pytest.raises(MemoryStoreError, match=r"corrupt.*left untouched"):
            action()
    assert memory_command(store, "add new fact").startswith("error: ")
    assert store.path.read_bytes() == b'{"entries": [oops'


def test_wrong_shape_counts_as_corrupt(store):
    store.path.write_text('{"entries": [{"id": 1}]}')
    with pytest.raises(MemoryStoreError, match="corrupt"):
        store.entries()


def test_forget_removes_only_that_entry_and_ids_stay_stable(store):
    a, b = store.add("alpha fact").entry, store.add("beta fact").entry
    assert store.forget(a.id) == a
    assert [e.id for e in store.entries()] == [b.id]
    assert store.forget("nope") is None


def test_select_for_prompt_returns_at_most_four_relevant_entries(store):
    write_entries(
        store.path,
        [entry(f"pytest note number{i}", id=f"p{i}") for i in range(INJECT_TOP_K + 2)]
        + [entry("deploy with ansible", id="d")],
    )
    assert len(store.select_for_prompt("pytest")) == INJECT_TOP_K
    assert [e.id for e in store.select_for_prompt("ansible")] == ["d"]
    assert store.select_for_prompt("weather in Paris") == []


def test_exactly_four_relevant_entries_are_all_selected(store):
    write_entries(store.path, [entry(f"pytest note number{i}", id=f"p{i}") for i in range(INJECT_TOP_K)])
    assert len(store.select_for_prompt("pytest")) == INJECT_TOP_K


def test_selection_counts_uses_unless_asked_not_to(store, isolated_home):
    kept = store.add("prefers pytest").entry
    store.select_for_prompt("pytest")
    store.select_for_prompt("pytest", record_use=False)
    assert MemoryStore.in_home(isolated_home).entries()[0].uses == 1
    assert store.entries()[0].id == kept.id


def test_store_sees_writes_from_another_store(isolated_home):
    one, two = MemoryStore.in_home(isolated_home), MemoryStore.in_home(isolated_home)
    assert one.select_for_prompt("pytest") == []
    two.add("prefers pytest")
    assert [e.text for e in one.select_for_prompt("pytest")] == ["prefers pytest"]


# ---- the remember tool, end to end -----------------------------------------------------------


def test_remember_then_a_new_sessions_user_message_carries_it_only_when_relevant(workspace, isolated_home):
    ctx = ToolContext(workspace=workspace, home=isolated_home, memory=MemoryStore.in_home(isolated_home))
    result = dispatch(
        ctx, TOOLS, "remember", json.dumps({"text": "The team deploys with Ansible playbooks.", "kind": "decision"})
    )
    assert result.ok and "remembered" in result.content and "[decision]" in result.content

    config = Config(workspace=workspace, home=isolated_home)
    prompt = SystemPrompt(config, MemoryStore.in_home(isolated_home), Skills([]), warn=print)  # a new session's

    def user_message(query: str) -> str:
        return attach_block(query, prompt.memory_for(query))

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


# ---- /memory ---------------------------------------------------------------------------------


def test_memory_command_add_list_search_forget(store):
    assert memory_command(store, "").startswith("no memories yet")
    added = memory_command(store, "add preference: answer in English")
    assert added.startswith("added ") and "[preference] answer in English" in added
    memory_command(store, "add builds use make")
    listing = memory_command(store, "list")
    assert listing.startswith(f"2/{MAX_ENTRIES} memories:") and "[fact] builds use make" in listing
    assert "answer in English" in memory_command(store, "search english answers please")
    assert memory_command(store, "search kubernetes").startswith("no memory matches")
    entry_id = store.entries()[0].id
    assert memory_command(store, f"forget {entry_id}").startswith("forgot ")
    assert "no memory with id" in memory_command(store, "forget zzz")
    assert memory_command(store, "frobnicate").startswith("usage:")
    assert memory_command(store, "add " + "y" * 401).startswith("error: text is 401 chars")
