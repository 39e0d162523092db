"""The files a request names travel with it, as read_file shows them: capped, noted, never from
outside the workspace, and kept beside the user's words in the session."""

from __future__ import annotations

import json

from nanohermes.prompt.mentions import HEADER, MAX_FILES, attachment, missing_mentions, named_files
from nanohermes.storage.session import Session
from nanohermes.tools import ToolContext
from tests.support.agents import make_agent
from tests.support.scripted_server import text


def ctx_for(workspace, home, max_output=20_000) -> ToolContext:
    return ToolContext(workspace=workspace, home=home, max_output=max_output)


def test_files_named_by_path_by_a_unique_name_or_with_an_at_are_found_in_the_order_named(workspace, isolated_home):
    (workspace / "src").mkdir()
    (workspace / "src" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (workspace / "INSTRUCTIONS.md").write_text("Make add add.\n")
    (workspace / "notes.txt").write_text("n\n")
    ctx = ctx_for(workspace, isolated_home)
    request = "Use the instructions in INSTRUCTIONS.md to fix calc.py, e.g. add. See @notes.txt (v1.5)."
    assert named_files(request, ctx) == ["INSTRUCTIONS.md", "src/calc.py", "notes.txt"]


def test_nothing_outside_the_workspace_no_ambiguous_name_no_binary_and_no_state_file_is_attached(
    workspace, isolated_home, tmp_path
):
    (tmp_path / "secret.txt").write_text("outside\n")
    for sub in ("a", "b"):
        (workspace / sub).mkdir()
        (workspace / sub / "util.py").write_text("x = 1\n")
    (workspace / "blob.bin").write_bytes(b"\0\1\2")
    ctx = ctx_for(workspace, isolated_home)
    request = f"look at ../secret.txt, {tmp_path / 'secret.txt'}, /etc/passwd, util.py and blob.bin"
    assert named_files(request, ctx) == ["blob.bin"]
    assert attachment(request, ctx) == ("", {}, [])  # the binary file is named, and left out


def test_each_file_is_capped_as_a_read_file_result_and_all_together_at_twice_that(workspace, isolated_home):
    for name in ("one.txt", "two.txt", "three.txt"):
        (workspace / name).write_text("".join(f"{name} line {i}\n" for i in range(2_000)))
    block, attached, _ = attachment(
        "compare one.txt, two.txt and three.txt", ctx_for(workspace, isolated_home, max_output=4_000)
    )
    assert block.startswith(HEADER) and len(block.encode()) <= 2 * 4_000 + len(HEADER) + 10
    assert block.count("offset=") >= 3  # every cut file says how to read on
    assert list(attached) == ["one.txt", "two.txt", "three.txt"] and all(text in block for text in attached.values())


def test_at_most_a_few_files_travel_with_one_request(workspace, isolated_home):
    names = [f"f{i}.py" for i in range(MAX_FILES + 3)]
    for name in names:
        (workspace / name).write_text("pass\n")
    assert named_files(" ".join(names), ctx_for(workspace, isolated_home)) == names[:MAX_FILES]


def test_the_repls_notes_before_the_users_words_name_no_file(workspace, isolated_home):
    (workspace / "calc.py").write_text("x = 1\n")
    request = "[The user ran /undo: calc.py is back to its content before your edit_file call.]\n\nwhat now?"
    assert named_files(request, ctx_for(workspace, isolated_home)) == []


def test_the_named_file_reaches_the_model_with_the_request_and_the_session_keeps_it_beside(
    server, workspace, isolated_home
):
    (workspace / "INSTRUCTIONS.md").write_text("Return the sum.\n")
    server.add(text("ok"))
    agent = make_agent(server, workspace, session_name="named")
    agent.run_turn("Follow INSTRUCTIONS.md")
    sent = server.chat_requests()[0]["messages"][1]["content"]
    assert sent.startswith("Follow INSTRUCTIONS.md\n\n" + HEADER) and "1\tReturn the sum." in sent
    agent.session.close()
    events = [json.loads(line) for line in agent.session.path.read_text().splitlines()]
    request = next(e for e in events if e["type"] == "message" and e["message"]["role"] == "user")
    assert request["message"]["content"] == "Follow INSTRUCTIONS.md" and "Return the sum." in request["files"]
    with Session(isolated_home, "named") as resumed:
        assert resumed.state.messages[0]["content"] == sent  # resumed, it is what was sent


def test_reading_an_attached_file_again_in_the_same_turn_points_back_instead_of_repeating_it(
    server, workspace, isolated_home
):
    from nanohermes.tools.builtin import BUILTIN_TOOLS
    from tests.support.scripted_server import call

    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    server.add(call("read_file", {"path": "calc.py"}), call("read_file", {"path": "calc.py", "offset": 2}), text("ok"))
    make_agent(server, workspace, tools=BUILTIN_TOOLS).run_turn("what does calc.py do?")
    results = [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert (
        results[0]
        == "read_file calc.py lines 1–2 of 2: unchanged since it was attached to the user's request above, where its text is."
    )
    assert results[1].endswith("2\t    return a - b")  # another part of it is read as usual


def test_an_at_directory_attaches_its_listing_honouring_gitignore(workspace, isolated_home):
    (workspace / "calc").mkdir()
    (workspace / "calc" / "ops.py").write_text("x = 1\n")
    (workspace / "calc" / "build.log").write_text("noise\n")
    (workspace / ".gitignore").write_text("*.log\n")
    ctx = ctx_for(workspace, isolated_home)
    assert named_files("what is in @calc/ and calc?", ctx) == ["calc/"]  # only with an @
    block, attached, _ = attachment("what is in @calc", ctx)
    assert list(attached) == ["calc/"]
    assert "directory calc/: 1 file" in block and "calc/ops.py" in block and "build.log" not in block


def test_a_long_directory_listing_is_cut_with_a_note_saying_how_many_are_left(workspace, isolated_home):
    (workspace / "many").mkdir()
    for i in range(400):
        (workspace / "many" / f"file_{i:03}.txt").write_text("x\n")
    block, _, _ = attachment("@many/", ctx_for(workspace, isolated_home, max_output=2_000))
    assert "many/file_000.txt" in block and "many/file_399.txt" not in block
    assert "more files not shown (glob path=many/ pattern=** lists them)" in block


def test_an_at_path_that_names_nothing_is_missing_and_a_handle_is_no_path(workspace, isolated_home):
    (workspace / "calc").mkdir()
    (workspace / "calc" / "ops.py").write_text("x = 1\n")
    (workspace / "Makefile").write_text("all:\n")
    ctx = ctx_for(workspace, isolated_home)
    request = "ask @alice about @calc/nope.py, @calc/ops.py, @calc/, @Makefile, @ops.py and @docs/"
    assert missing_mentions(request, ctx) == ["@calc/nope.py", "@docs/"]
    assert named_files(request, ctx) == ["calc/ops.py", "calc/", "Makefile"]


def test_a_compaction_clears_the_attached_files_and_a_read_after_it_gets_the_text_again(workspace, isolated_home):
    """At an 8K window two attached files are most of the low-water mark: kept verbatim, every
    compaction re-sent them and came again a step later. Cleared to a line each, the model reads
    one again and gets its text, not a pointer to text that is gone."""
    from nanohermes.tools.builtin import BUILTIN_TOOLS
    from tests.support.scripted_server import Reply, ScriptedServer, is_summary_request, prompt_tokens

    for name in ("big1.py", "big2.py", *(f"other{i}.py" for i in range(8))):
        (workspace / name).write_text("".join(f"value_{i} = compute({i}, '{name}')\n" for i in range(200)))
    state = {"reads": 0, "cleared": False}

    def answer(body: dict) -> Reply:
        usage = {"prompt_tokens": prompt_tokens(body), "completion_tokens": 5}
        if is_summary_request(body):
            return Reply("Goal: explain big1.py and big2.py; read other files.", usage=usage)
        request = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if "value_5 = compute(5, 'big1.py')" not in request:  # the attachment was cleared
            if state["cleared"]:
                return Reply("done", usage=usage)
            state["cleared"] = True
            return Reply(tool_calls=[("read_file", json.dumps({"path": "big1.py"}))], usage=usage)
        state["reads"] += 1
        path = "big2.py" if state["reads"] == 1 else f"other{state['reads'] % 8}.py"
        return Reply(tool_calls=[("read_file", json.dumps({"path": path}))], usage=usage)

    server = ScriptedServer(n_ctx=8_192)
    server.handler = answer
    try:
        make_agent(server, workspace, tools=BUILTIN_TOOLS).run_turn("what do big1.py and big2.py do?")
        last = [m for m in server.chat_requests() if not is_summary_request(m)][-1]["messages"]
    finally:
        server.close()
    request = next(m["content"] for m in last if m["role"] == "user")
    assert request.startswith("what do big1.py and big2.py do?\n\n[the files attached here were cleared")
    assert "\nread_file big1.py lines 1–" in request and "\nread_file big2.py lines 1–" in request
    results = [m["content"] for m in last if m["role"] == "tool"]
    assert "unchanged since it was attached" in " ".join(results)  # big2.py, read while it was attached
    assert results[-1].startswith("read_file big1.py lines 1–") and "5\tvalue_4 = compute(4, 'big1.py')" in results[-1]
