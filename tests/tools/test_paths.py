"""Path resolution, on real trees in temp dirs (the walk: test_workspace.py)."""

import pytest

from nanohermes.errors import ToolError
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.builtin import BUILTIN_TOOLS
from nanohermes.tools.paths import closest_paths, resolve_path

TOOLS = {t.name: t for t in BUILTIN_TOOLS}


@pytest.fixture
def ctx(workspace, isolated_home):
    return ToolContext(workspace=workspace, home=isolated_home)


def write(path, text="x\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_relative_path_resolves_inside_workspace(ctx, workspace):
    write(workspace / "src" / "a.py")
    assert resolve_path(ctx, "src/a.py") == (workspace / "src" / "a.py").resolve()
    assert resolve_path(ctx, str(workspace / "src" / "a.py")) == (workspace / "src" / "a.py").resolve()


def test_dotdot_leaving_workspace_is_refused(ctx, workspace):
    write(workspace.parent / "secret.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path(ctx, "../secret.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path(ctx, "src/../../secret.txt", must_exist=False)


def test_absolute_path_outside_workspace_is_refused(ctx):
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path(ctx, "/etc/passwd")


def test_symlink_whose_target_leaves_workspace_is_refused(ctx, workspace, tmp_path):
    outside = write(tmp_path / "outside" / "data.txt")
    (workspace / "link.txt").symlink_to(outside)
    (workspace / "linkdir").symlink_to(outside.parent, target_is_directory=True)
    with pytest.raises(ToolError, match=r"symlink to .*outside the workspace"):
        resolve_path(ctx, "link.txt")
    with pytest.raises(ToolError, match=r"symlink to .*outside the workspace"):
        resolve_path(ctx, "linkdir/data.txt")
    result = dispatch(ctx, TOOLS, "read_file", {"path": "link.txt"})
    assert not result.ok and "outside the workspace" in result.content


def test_symlink_inside_workspace_is_followed(ctx, workspace):
    real = write(workspace / "real.txt")
    (workspace / "alias.txt").symlink_to(real)
    assert resolve_path(ctx, "alias.txt") == real.resolve()


def test_symlink_loop_is_a_clear_error(ctx, workspace):
    (workspace / "a").symlink_to(workspace / "b")
    (workspace / "b").symlink_to(workspace / "a")
    with pytest.raises(ToolError):
        resolve_path(ctx, "a/x")


def test_allow_outside_workspace_permits_outside_paths(workspace, isolated_home, tmp_path):
    outside = write(tmp_path / "elsewhere.txt")
    ctx = ToolContext(workspace=workspace, home=isolated_home, allow_outside_workspace=True)
    assert resolve_path(ctx, str(outside)) == outside.resolve()


def test_home_is_refused_even_when_outside_paths_are_allowed(workspace, isolated_home):
    write(isolated_home / "memory.json", "{}")
    ctx = ToolContext(workspace=workspace, home=isolated_home, allow_outside_workspace=True)
    with pytest.raises(ToolError, match="state directory"):
        resolve_path(ctx, str(isolated_home / "memory.json"))


def test_home_inside_workspace_is_refused_and_so_is_a_symlink_into_it(workspace):
    home = workspace / ".nanohermes"
    write(home / "sessions" / "s.jsonl", "{}\n")
    (workspace / "sneaky").symlink_to(home)
    ctx = ToolContext(workspace=workspace, home=home)
    for path in (".nanohermes/sessions/s.jsonl", "sneaky/sessions/s.jsonl"):
        with pytest.raises(ToolError, match="state directory"):
            resolve_path(ctx, path)
    assert not dispatch(ctx, TOOLS, "write_file", {"path": ".nanohermes/x", "content": "x"}).ok
    assert not (home / "x").exists()


def test_missing_path_names_same_file_elsewhere_and_suggests_glob(ctx, workspace):
    write(workspace / "pkg" / "core" / "engine.py")
    with pytest.raises(ToolError) as err:
        resolve_path(ctx, "engine.py")
    message = str(err.value)
    assert message.startswith("engine.py does not exist.")
    assert "pkg/core/engine.py" in message
    assert message.endswith("before answering; don't guess.")


def test_missing_path_suggests_similar_names_in_the_parent(ctx, workspace):
    write(workspace / "src" / "utils" / "helpers.py")
    write(workspace / "src" / "main.py")
    found = closest_paths(ctx, workspace / "src" / "utls" / "helper.py")
    assert "src/utils/" in found or "src/utils/helpers.py" in found
    assert "src/main.py" in closest_paths(ctx, workspace / "src" / "mian.py")


def test_missing_path_in_empty_workspace_says_it_is_empty(ctx):
    with pytest.raises(ToolError, match=r"^nothing\.py does not exist\. The workspace has no files\.$"):
        resolve_path(ctx, "nothing.py")
