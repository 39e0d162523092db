"""Memory before forgetting, the parsing: the reply's memories section is split off the summary
with its kinds, and secrets never come back."""

from nanohermes.memory.candidates import MAX_CANDIDATES, MEMORY_MARKER, Candidate, looks_secret, split_memories

SUMMARY = "Goal: port the parser.\nCompleted actions: read src/parse.py."


def test_the_memories_section_is_split_off_the_summary_with_its_kinds():
    reply = (
        f"{SUMMARY}\n\n{MEMORY_MARKER}\n- preference: The user wants uv, never pip.\n"
        "- fact: The parser lives in src/parse.py.\n* decision: Keep the public API unchanged.\n- Tests run with pytest -x."
    )
    summary, memories = split_memories(reply)
    assert summary == SUMMARY
    assert memories == [
        Candidate("preference", "The user wants uv, never pip."),
        Candidate("fact", "The parser lives in src/parse.py."),
        Candidate("decision", "Keep the public API unchanged."),
        Candidate("fact", "Tests run with pytest -x."),
    ]


def test_headings_as_models_write_them_are_found():
    for heading in ("Memories:", "## Memories", "**Memories**", "[Memories]"):
        summary, memories = split_memories(f"{SUMMARY}\n{heading}\n1. [preference] Answer in French.")
        assert summary == SUMMARY and memories == [Candidate("preference", "Answer in French.")]


def test_a_reply_without_the_section_is_all_summary():
    assert split_memories(SUMMARY) == (SUMMARY, [])
    assert split_memories(f"{SUMMARY}\nMemories of the project: none yet") == (
        f"{SUMMARY}\nMemories of the project: none yet",
        [],
    )


def test_none_duplicates_overlong_ones_and_more_than_the_cap_are_dropped():
    lines = ["- none", "- fact: uses tabs", "- fact: Uses tabs.", f"- fact: {'x ' * 300}"] + [
        f"- fact: rule {i}" for i in range(9)
    ]
    _, memories = split_memories(f"{SUMMARY}\n{MEMORY_MARKER}\n" + "\n".join(lines))
    assert [m.text for m in memories] == ["uses tabs", "rule 0", "rule 1", "rule 2", "rule 3"]
    assert len(memories) == MAX_CANDIDATES


def test_candidates_that_look_like_secrets_are_never_returned():
    secrets = [
        "The OpenAI key is sk-proj-abcdefghijklmnop1234",
        "The database password is hunter2",
        "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuv",
        "Deploy with token: 8f3a9c2e",
        "The api key lives in .env",
        "Use AKIAIOSFODNN7EXAMPLE for S3",
        "The session cookie is d41d8cd98f00b204e9800998ecf8427e",
    ]
    kept = [
        "The user prefers pytest -x over unittest",
        "Config lives in src/nanohermes/config.py",
        "Count tokens with tiktoken",
    ]
    assert [looks_secret(s) for s in secrets] == [True] * len(secrets)
    assert [looks_secret(s) for s in kept] == [False] * len(kept)
    _, memories = split_memories(f"{SUMMARY}\n{MEMORY_MARKER}\n" + "\n".join(f"- fact: {t}" for t in secrets + kept))
    assert [m.text for m in memories] == kept
