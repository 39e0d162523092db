"""File paths survive compaction mechanically, whatever the summariser writes."""

import json

from nanohermes.context import ContextEngine, is_summary_message


def _call(i, name, args):
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
    }


def _history(paths, start=0):
    out = []
    for i, (name, path) in enumerate(paths, start):
        out += [
            _call(i, name, {"path": path, "content": "x"} if name == "write_file" else {"path": path}),
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"{name} {path}\n" + "y" * 3000},
        ]
    return out


def test_paths_survive_two_compactions_with_a_summariser_that_forgets_them():
    engine = ContextEngine(high_water_chars=8_000)
    forgetful = lambda request: "We did some work."  # noqa: E731
    messages = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "go"},
        *_history([("read_file", "src/a.py"), ("write_file", "src/b.py"), ("read_file", "docs/c.md")]),
    ]
    messages += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]
    messages += _history([("edit_file", "src/d.py"), ("read_file", "src/e.py")] * 3, start=10)
    messages, _ = engine.fit(messages, forgetful, force=True)
    messages += [{"role": "user", "content": "again"}, *_history([("read_file", "tests/f.py")] * 6, start=30)]
    messages, _ = engine.fit(messages, forgetful, force=True)
    summary = next(m["content"] for m in messages[1:] if is_summary_message(m))
    assert "We did some work." in summary
    changed = next(line for line in summary.splitlines() if line.startswith("Files changed: "))
    read = next(line for line in summary.splitlines() if line.startswith("Files read: "))
    assert "src/b.py" in changed and "src/d.py" in changed
    assert all(p in read for p in ("src/a.py", "docs/c.md", "src/e.py"))
    assert summary.count("Files changed: ") == 1
