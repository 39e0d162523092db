"""/rewind through the real loop (fault injection): the scripted model runs real commands that
break the workspace — rm, sed -i, a generator writing 50 files, git checkout, a file grown past
the cap — and rewinding puts every covered file back byte for byte, says what it could not,
never overwrites a file changed outside NanoHermes without asking, and a code-only or chat-only
rewind leaves the other side as it was. With no git repository, and with a dirty git tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nanohermes.configure import load_config
from nanohermes.loop.rewind import RewindError, choices, rewind
from nanohermes.runtime import build_runtime
from nanohermes.storage.scan import MAX_FILE_BYTES
from nanohermes.synthetic import is_users
from nanohermes.ui.rewind_commands import parse_rewind, report_lines
from tests.support.scripted_server import call, text

GENERATOR = (
    "import os\nos.makedirs('gen', exist_ok=True)\nfor i in range(50):\n    open(f'gen/f{i}.py', 'w').write(str(i))\n"
)
COMMANDS = [
    "rm a.txt",
    "sed -i s/old/new/ b.txt",
    "python3 gen.py",
    "git show HEAD:c.txt > c.txt",  # git's own checkout writes .git/index, read-only in the sandbox
    f"head -c {MAX_FILE_BYTES + 10} /dev/zero >> grow.bin",
    "printf changed >> big.bin",
]


def files(root) -> dict[str, bytes]:
    found = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = Path(path).read_bytes()
    return found


def prepare(workspace, git: bool) -> str:
    """The workspace the agent starts in; the PATH its commands get."""
    (workspace / "a.txt").write_text("a\n")
    (workspace / "b.txt").write_text("old line\n")
    (workspace / "c.txt").write_text("committed\n")
    (workspace / "gen.py").write_text(GENERATOR)
    (workspace / "grow.bin").write_bytes(b"small")
    (workspace / "big.bin").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    (workspace / ".gitignore").write_text("ignored/\n")
    (workspace / "ignored").mkdir()
    (workspace / "ignored" / "cache").write_text("not tracked by rewind")
    if not git:  # git absent: the commands find only what they need (`git checkout` is "command not found")
        shims = workspace / "ignored" / "bin"
        shims.mkdir()
        for program in ("bash", "rm", "sed", "head", "bwrap"):
            if found := shutil.which(program):
                (shims / program).symlink_to(found)
        (shims / "python3").symlink_to(os.path.realpath(sys.executable))  # not a pyenv shim: it needs PATH
        return str(shims)
    if git:
        env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
        env["GIT_COMMITTER_EMAIL"] = "t@t"
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
            subprocess.run(["git", *args], cwd=workspace, env=env, check=True, capture_output=True)
        (workspace / "c.txt").write_text("dirty, not committed\n")  # the tree is dirty when the agent starts
        (workspace / "untracked.txt").write_text("untracked\n")
    return os.environ["PATH"]


@pytest.mark.parametrize("git", [False, True], ids=["no-git", "dirty-git-tree"])
def test_rewind_puts_back_what_commands_changed_and_each_side_alone(server, workspace, monkeypatch, git):
    monkeypatch.setenv("PATH", prepare(workspace, git))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    events = []
    config = load_config(base_url=server.url, workspace=workspace, mode="auto")
    runtime = build_runtime(config, None, events.append, approve=None)
    agent, snapshots = runtime.agent, runtime.snapshots
    at_start = files(workspace)
    server.add(call("write_file", {"path": "notes.txt", "content": "first\n"}), text("noted"))
    agent.run_turn("write the notes")
    before_break = files(workspace)
    server.add(*[call("run_command", {"command": c}) for c in COMMANDS], text("broken"))
    agent.run_turn("break things\nsecond line")
    broken = files(workspace)
    messages_after = list(agent.messages)
    results = [m["content"] for m in agent.messages if m["role"] == "tool"]

    assert "a.txt" not in broken and len([p for p in broken if p.startswith("gen/")]) == 50
    assert broken["b.txt"] == b"new line\n" and len(broken["grow.bin"]) > MAX_FILE_BYTES
    assert broken["c.txt"] == (b"committed\n" if git else b"")  # with git: the dirty edit taken back
    assert any(("git: command not found" in r) != git for r in results if "git show" in r)
    assert any("deleted a.txt" in r for r in results) and any("created gen/f0.py" in r for r in results)
    assert any("not covered by /rewind: grow.bin" in r for r in results)  # grown past the cap: said
    notices = [e.text for e in events if type(e).__name__ == "Notice"]
    assert "sed changed 1 file" in notices and "python3 created 50 files" in notices
    assert [c.prompt.line for c in choices(agent, snapshots)] == ["break things", "write the notes"]
    assert choices(agent, snapshots)[0].touched >= 53

    # The user edits a file outside NanoHermes: a code rewind asks before overwriting it.
    (workspace / "b.txt").write_text("the user's own edit\n")
    asked = []
    report = rewind(agent, snapshots, 1, "code", lambda paths: asked.append(paths) or False)
    assert asked == [["b.txt"]] and report.files.kept == ["b.txt"]
    assert (workspace / "b.txt").read_text() == "the user's own edit\n"
    assert "big.bin" in report.files.uncovered  # over the cap before the turn: said, not restored
    shown = "\n".join("".join(t for t, _ in line) for line in report_lines(report))
    assert "not restored: big.bin" in shown and "kept (changed outside NanoHermes since): b.txt" in shown
    report = rewind(agent, snapshots, 1, "code", lambda paths: True)  # asked again: yes
    restored = files(workspace)
    assert {p: v for p, v in restored.items() if p != "big.bin"} == {
        p: v for p, v in before_break.items() if p != "big.bin"
    }  # byte for byte, grow.bin and git's c.txt included
    assert agent.messages[: len(messages_after)] == messages_after  # code only: the conversation stays
    assert agent.messages[-2]["nanohermes_synthetic"] == "rewound" and not is_users(agent.messages[-2])
    assert "put the workspace's files back" in agent.messages[-2]["content"]

    # Chat only: the conversation before "break things", the files as they are.
    rewind(agent, snapshots, 1, "chat", lambda paths: pytest.fail("a chat rewind asks nothing"))
    assert files(workspace) == restored
    users = [m["content"] for m in agent.messages if is_users(m)]
    assert len(users) == 1 and users[0].startswith("write the notes")
    assert "taken back" not in agent.messages[-2]["content"] and "conversation back" in agent.messages[-2]["content"]

    # Both, to before the first request: notes.txt gone, the conversation empty but the note.
    rewind(agent, snapshots, *parse_rewind("1"), lambda paths: True)
    assert {p: v for p, v in files(workspace).items() if p != "big.bin"} == {
        p: v for p, v in at_start.items() if p != "big.bin"
    }
    assert not [m for m in agent.messages if is_users(m)]
    with pytest.raises(RewindError):
        rewind(agent, snapshots, 1, "both", lambda paths: True)  # no request left
    runtime.close()

    # Resumed, the session holds the rewound conversation; the model was told.
    server.add(text("fine"))
    again = build_runtime(config, runtime.session.name, events.append, approve=None)
    assert not [m for m in again.agent.messages if is_users(m)]
    again.agent.run_turn("next")
    sent = server.chat_requests()[-1]["messages"]
    assert any("rewound the conversation" in str(m.get("content")) for m in sent)
    assert [m["content"] for m in sent if m["role"] == "user"][-1].startswith("next")
    again.close()


def test_no_snapshot_is_taken_for_a_command_confined_read_only(server, workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (workspace / "a.txt").write_text("a")
    config = load_config(base_url=server.url, workspace=workspace, mode="auto", sandbox_level="read-only")
    runtime = build_runtime(config, None, lambda event: None, approve=None)
    server.add(call("run_command", {"command": "cat a.txt"}), text("read"))
    runtime.agent.run_turn("read it")
    runtime.close()
    assert runtime.snapshots.records() == [] and "[files:" not in runtime.agent.messages[-2]["content"]
