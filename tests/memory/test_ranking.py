"""Tokens, stemming, BM25 and near-duplicates: the pure ranking memory is searched with."""

import pytest

from nanohermes.memory.ranking import bm25_rank, build_index, is_near_duplicate, tokenize


def rank(texts: list[str], query: str, top_k: int = 10) -> list[int]:
    index = build_index([tokenize(t) for t in texts])
    return [doc for doc, _ in bm25_rank(index, tokenize(query), top_k)]


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
