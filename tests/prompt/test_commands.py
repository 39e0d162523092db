"""Command files: where they are found and what they are called, their placeholders filled, and
their `!` commands found — pure, on real files."""

from hypothesis import given, settings
from hypothesis import strategies as st

from nanohermes.prompt.commands import (
    MAX_SHELL_COMMANDS,
    available_commands,
    discover_commands,
    expand_shell,
    substitute,
)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_commands_from_every_directory_with_namespaces_and_the_workspace_winning(workspace, isolated_home):
    write(isolated_home / "codex-home" / "prompts" / "draft.md", "---\ndescription: draft a PR\n---\nDraft $1")
    write(isolated_home / "codex-home" / "prompts" / "deep" / "no.md", "Codex reads one level only")
    write(isolated_home / "claude-home" / "commands" / "frontend" / "component.md", "Make a component $ARGUMENTS")
    write(isolated_home / "commands" / "review.md", "---\ndescription: global review\n---\nG")
    write(workspace / ".nanohermes" / "commands" / "review.md", "---\ndescription: project review\n---\nP")
    write(workspace / ".claude" / "commands" / "git" / "commit.md", "---\nargument-hint: [message]\n---\nCommit")
    commands, warnings = discover_commands(isolated_home, workspace)
    assert warnings == []
    assert list(commands) == ["frontend:component", "git:commit", "prompts:draft", "review"]
    assert commands["review"].description == "project review"
    assert commands["frontend:component"].description == "Make a component $ARGUMENTS"  # the first line stands in
    assert commands["git:commit"].usage == "/git:commit [message]"
    assert available_commands(isolated_home, workspace)[2] == ("prompts:draft", "draft a PR", "")


def test_a_built_in_name_a_bad_name_and_broken_yaml_are_skipped_and_named(workspace, isolated_home):
    root = workspace / ".nanohermes" / "commands"
    help_file = write(root / "help.md", "I would shadow /help")
    spaced = write(root / "two words.md", "x")
    broken = write(root / "broken.md", "---\ndescription: x\n  bad: y\n---\nx")
    write(root / "fine.md", "fine")
    commands, warnings = discover_commands(isolated_home, workspace, reserved=["/help", "/exit"])
    assert list(commands) == ["fine"]
    joined = "\n".join(warnings)
    assert f"{help_file}: /help is a built-in command" in joined
    assert str(spaced) in joined and f"{broken}: front matter is not valid YAML" in joined


def test_allowed_tools_and_model_are_read_and_kept_apart_from_what_is_allowed(workspace, isolated_home):
    write(
        workspace / ".claude" / "commands" / "push.md",
        "---\nallowed-tools: Bash(git push:*), Bash(rm:*)\nmodel: claude-3-5-haiku-20241022\n---\ngit push",
    )
    command = discover_commands(isolated_home, workspace)[0]["push"]
    assert command.allowed_tools == "Bash(git push:*), Bash(rm:*)" and command.model == "claude-3-5-haiku-20241022"


def test_arguments_fill_their_placeholders():
    body = "Fix issue #$1 with priority $2 ($ARGUMENTS). Cost: $$5. Keep $HOME. Missing: [$3]"
    assert substitute(body, '123 "very high"') == (
        'Fix issue #123 with priority very high (123 "very high"). Cost: $5. Keep $HOME. Missing: []'
    )


def test_codex_named_arguments_fill_named_placeholders_and_only_those():
    body = "Open a PR for $FILE titled $TITLE about $1"
    assert (
        substitute(body, 'FILE=src/a.py TITLE="Fix it" caching') == "Open a PR for src/a.py titled Fix it about caching"
    )


def test_arguments_to_a_body_without_placeholders_follow_it():
    assert substitute("Review the diff.", "focus on tests") == "Review the diff.\n\nARGUMENTS: focus on tests"
    assert substitute("Review the diff.", "  ") == "Review the diff."


@settings(max_examples=30, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=40))
def test_any_arguments_reach_the_prompt_whole(arguments):
    text = substitute("Do: $ARGUMENTS", arguments)
    assert text == f"Do: {arguments.strip()}"


def test_shell_lines_and_inline_commands_run_in_order_and_images_do_not():
    ran = []
    text, count = expand_shell(
        "Status:\n!git status --short\nBranch: !`git branch --show-current`\n![logo](a.png)\n!",
        lambda command: ran.append(command) or f"<{command}>",
    )
    assert ran == ["git status --short", "git branch --show-current"] and count == 2
    assert text == "Status:\n<git status --short>\nBranch: <git branch --show-current>\n![logo](a.png)\n!"


def test_at_most_so_many_shell_commands_run_and_the_rest_are_noted():
    body = "\n".join(f"!echo {i}" for i in range(MAX_SHELL_COMMANDS + 2))
    text, count = expand_shell(body, lambda command: "ran")
    assert count == MAX_SHELL_COMMANDS and text.count("ran") == MAX_SHELL_COMMANDS
    assert "!echo 11" in text and "2 more `!` commands of this command file were not run" in text


def test_a_fifo_or_a_device_as_a_command_file_is_skipped_never_waited_on(workspace, isolated_home):
    import os

    root = workspace / ".nanohermes" / "commands"
    root.mkdir(parents=True)
    os.mkfifo(root / "pipe.md")
    (root / "zero.md").symlink_to("/dev/zero")
    commands, warnings = discover_commands(isolated_home, workspace)
    assert commands == {} and len(warnings) == 2
    assert all("skipped command" in w for w in warnings)


def test_an_invocation_is_the_name_then_everything_after_it_across_lines(workspace, isolated_home):
    from nanohermes.custom_commands import find_invocation

    write(workspace / ".nanohermes" / "commands" / "review.md", "Review $ARGUMENTS")
    commands, _ = discover_commands(isolated_home, workspace)
    assert find_invocation("/review\nsrc/a.py  and b", commands).arguments == "src/a.py  and b"
    assert find_invocation("  /review  ", commands).arguments == ""
    assert find_invocation("/reviewer x", commands) is None and find_invocation("review x", commands) is None
