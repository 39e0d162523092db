"""The policy and the argv it makes: plain data in, plain data out."""

from __future__ import annotations

from pathlib import Path

import pytest

from nanohermes.configure import load_config
from nanohermes.errors import ConfigError
from nanohermes.sandbox import SandboxSettings, build_policy, parse_sandbox_table
from nanohermes.sandbox.actors import helper_policy
from nanohermes.sandbox.bwrap import Spot, bwrap_argv
from nanohermes.sandbox.launch import landlock_argv
from nanohermes.sandbox.policy import git_dirs_of
from nanohermes.sandbox.seatbelt import seatbelt_argv

WS, STATE, HOME, TMP = Path("/w/proj"), Path("/h/.nanohermes"), Path("/h"), Path("/t/nh-1")


def _policy(**settings):
    return build_policy(SandboxSettings(**settings), workspace=WS, state_dir=STATE, user_home=HOME, temp_dir=TMP)


def test_the_default_is_workspace_write_with_the_network_off():
    policy = _policy()
    assert (policy.level, policy.network) == ("workspace-write", False)
    assert policy.writable == (WS, TMP)
    assert policy.is_writable(WS / "src" / "a.py") and policy.is_writable(TMP / "x")
    assert not policy.is_writable(Path("/etc/passwd")) and not policy.is_writable(HOME / "notes")


def test_git_nanohermes_and_claude_stay_read_only_as_wholes_inside_the_workspace():
    policy = _policy()
    for path in (".git", ".git/hooks/pre-commit", ".git/config", ".git/index", ".nanohermes/skills/x/SKILL.md"):
        assert policy.is_protected(WS / path) and not policy.is_writable(WS / path)
    assert policy.is_protected(WS / ".claude" / "settings.json")
    assert policy.is_writable(WS / ".github" / "x") and policy.is_writable(WS / "git" / "x")


def test_credentials_and_the_whole_state_directory_are_hidden():
    policy = _policy()
    for path in (".ssh/id_rsa", ".aws/credentials", ".config/gh/hosts.yml", ".netrc", ".gnupg/x"):
        assert policy.is_hidden(HOME / path)
    for path in ("config.toml", "sessions/a.jsonl", "mcp/oauth/x.json", "permissions/p.json", "memory.json"):
        assert policy.is_hidden(STATE / path)


def test_a_worktrees_git_directory_and_its_common_directory_are_read_only(tmp_path):
    main, work = tmp_path / "main", tmp_path / "wt"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    (main / ".gitmodules").write_text('[submodule "lib"]\n\tpath = vendor/lib\n\turl = x\n')
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")
    (work / ".gitmodules").write_text('[submodule "lib"]\n\tpath = vendor/lib\n\tpath = ../escape\n')
    found = git_dirs_of(work)
    assert found[:2] == (main / ".git" / "worktrees" / "wt", main / ".git")
    assert work / "vendor" / "lib" / ".git" in found  # a submodule's pointer file
    assert not any("escape" in str(p) for p in found)  # only paths inside the workspace


def test_hidden_setting_adds_to_the_defaults():
    policy = _policy(hidden=("~/.kube", "/srv/secrets"))
    assert policy.is_hidden(HOME / ".kube" / "config") and policy.is_hidden(Path("/srv/secrets/db"))
    assert policy.is_hidden(HOME / ".ssh" / "id_rsa")


def test_read_only_level_leaves_only_the_temp_dir_writable():
    policy = _policy(level="read-only")
    assert policy.writable == (TMP,)
    assert not policy.is_writable(WS / "a.py")


def test_the_most_specific_rule_wins_for_a_temp_dir_under_the_state_directory():
    policy = build_policy(
        SandboxSettings(), workspace=WS, state_dir=STATE, user_home=HOME, temp_dir=STATE / "tmp" / "s1"
    )
    assert policy.is_writable(STATE / "tmp" / "s1" / "x") and not policy.is_writable(STATE / "memory.json")


def test_network_can_be_allowed_for_one_command():
    assert _policy().with_network().network and not _policy().network


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ({"level": "strict"}, "level must be one of"),
        ({"network": "no"}, "network must be true or false"),
        ({"hidden": ["relative/path"]}, "hidden must be a list of absolute or ~ paths"),
        ({"levle": "off"}, "unknown key(s) levle"),
        ("off", "must be a table"),
    ],
)
def test_a_bad_table_is_a_config_error_naming_the_key(table, says):
    with pytest.raises(ConfigError, match=None) as error:
        parse_sandbox_table(table, Path("/h/config.toml"))
    assert says in str(error.value)


def test_config_toml_sandbox_table_is_parsed_when_the_configuration_loads(isolated_home, workspace):
    (isolated_home / "config.toml").write_text('[sandbox]\nlevel = "read-only"\nnetwork = true\nhidden = ["~/.kube"]\n')
    config = load_config(workspace=str(workspace))
    assert config.sandbox == SandboxSettings("read-only", True, ("~/.kube",))
    assert config.sandbox.with_level("off").level == "off"
    with pytest.raises(ConfigError):
        config.sandbox.with_level("none")


def test_without_a_sandbox_table_the_config_holds_none_for_the_defaults(workspace):
    assert load_config(workspace=str(workspace)).sandbox is None


def _argv(policy, spots=None):
    spots = {p: Spot("dir") for p in (*policy.read_only, *policy.hidden)} | (spots or {})
    return bwrap_argv("/usr/bin/bwrap", policy, spots, WS, ["bash", "-c", "make"])


def _mounts(args):
    """(flag, target) for each mount, in order."""
    pairs = {"--bind": 2, "--ro-bind": 2, "--tmpfs": 1, "--remount-ro": 1}
    return [(a, args[i + pairs[a]]) for i, a in enumerate(args) if a in pairs]


def test_bwrap_argv_mounts_parents_before_children_and_protected_paths_after_the_workspace():
    args, placeholders = _argv(_policy())
    mounts = _mounts(args)
    assert mounts.index(("--bind", str(WS))) < mounts.index(("--ro-bind", str(WS / ".git")))
    assert ("--tmpfs", str(HOME / ".ssh")) in mounts and ("--tmpfs", str(STATE)) in mounts
    assert mounts[-1] == ("--remount-ro", str(STATE))  # tmpfs made read-only after all mounts
    assert args[-5:] == ["--chdir", str(WS), "--", "bash", "-c", "make"][-5:]
    assert placeholders == ()


def test_with_home_as_the_workspace_the_state_directory_and_keys_are_hidden_inside_it():
    policy = build_policy(SandboxSettings(), workspace=HOME, state_dir=STATE, user_home=HOME, temp_dir=TMP)
    spots = {p: Spot("dir") for p in (*policy.read_only, *policy.hidden)}
    mounts = _mounts(bwrap_argv("/usr/bin/bwrap", policy, spots, HOME, ["true"])[0])
    assert mounts.index(("--bind", str(HOME))) < mounts.index(("--tmpfs", str(STATE)))
    assert mounts.index(("--ro-bind", str(STATE))) < mounts.index(("--tmpfs", str(STATE)))  # hidden wins
    assert mounts.index(("--bind", str(HOME))) < mounts.index(("--tmpfs", str(HOME / ".ssh")))


def test_bwrap_argv_isolates_user_pid_and_network_and_keeps_the_process_group():
    args, _ = _argv(_policy())
    for flag in ("--unshare-user", "--unshare-pid", "--unshare-net"):
        assert flag in args
    assert args[args.index("--cap-drop") + 1] == "ALL"
    assert "--new-session" not in args  # it would take the command out of the group a Ctrl-C kills
    assert "--die-with-parent" not in args  # it would kill a background task when its starting thread ends
    assert "--unshare-net" not in _argv(_policy(network=True))[0]


def test_a_missing_protected_path_gets_a_placeholder_at_its_first_missing_part():
    spots = {WS / p: Spot("missing", first_missing=WS / p) for p in (".nanohermes", ".claude", ".git")}
    args, placeholders = _argv(_policy(), spots)
    assert set(placeholders) == {WS / ".nanohermes", WS / ".claude", WS / ".git"}
    assert ("--ro-bind", str(WS / ".git")) in _mounts(args)
    assert args[args.index(str(WS / ".git")) + 1] == str(WS / ".git")  # the placeholder directory, over itself


def test_hidden_paths_that_do_not_exist_are_not_mounted():
    spots = {HOME / ".aws": Spot("missing", first_missing=HOME / ".aws"), HOME / ".netrc": Spot("file")}
    mounts = _mounts(_argv(_policy(), spots)[0])
    assert not any(target == str(HOME / ".aws") for _, target in mounts)
    assert ("--ro-bind", str(HOME / ".netrc")) in mounts


def test_landlock_argv_passes_the_rules_to_the_launcher():
    argv = landlock_argv("/usr/bin/python3", _policy(), ["bash", "-c", "make"])
    assert argv[:3] == ["/usr/bin/python3", "-S", "-I"]
    assert ["--write", str(WS)] == argv[4:6] and "--no-tcp" in argv
    assert argv[argv.index("--hide") + 1] == str(HOME / ".ssh")
    assert argv[-4:] == ["--", "bash", "-c", "make"]


def test_the_seatbelt_profile_takes_paths_as_parameters_never_as_text():
    policy = build_policy(
        SandboxSettings(), workspace=Path('/w/a"b) (allow default'), state_dir=STATE, user_home=HOME, temp_dir=TMP
    )
    argv = seatbelt_argv("/usr/bin/sandbox-exec", policy, ["make"])
    profile = argv[2]
    assert "(allow default" not in profile and "(deny default)" in profile
    assert '-DWRITABLE_0=/w/a"b) (allow default' in argv
    assert "(allow network" not in profile
    assert "(allow network" in seatbelt_argv("/usr/bin/sandbox-exec", policy.with_network(), ["make"])[2]
    assert argv[-2:] == ["--", "make"]


def test_a_helpers_worktree_in_the_hidden_state_directory_is_its_writable_root_its_git_read_only():
    worktree, tmp = STATE / "worktrees" / "s1" / "task1", TMP / "task1"
    gitdir = WS / ".git" / "worktrees" / "task1"
    policy = helper_policy(_policy(), worktree, tmp, (gitdir, WS / ".git"))
    assert policy.writable == (worktree, tmp) and policy.is_writable(worktree / "src" / "a.py")
    assert not policy.is_writable(WS / "a.py") and not policy.is_writable(gitdir / "HEAD")
    assert policy.is_protected(worktree / ".git") and policy.is_hidden(STATE / "sessions" / "s1.jsonl")
    spots = {p: Spot("dir") for p in policy.hidden} | {p: Spot("file") for p in policy.read_only}
    mounts = _mounts(bwrap_argv("/usr/bin/bwrap", policy, spots, worktree, ["true"])[0])
    order = [("--tmpfs", str(STATE)), ("--bind", str(worktree)), ("--ro-bind", str(worktree / ".git"))]
    assert [m for m in mounts if m in order] == order  # seen through the hidden directory, its .git kept
    assert mounts[-1] == ("--remount-ro", str(STATE))
    assert helper_policy(None, worktree, tmp, ()) is None  # the sandbox off: nothing confines it
