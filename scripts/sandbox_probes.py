"""The sandbox tried as an attacker inside would, under each backend: a Markdown table of what held.

Each probe is one real command run through confine() (bubblewrap, then Landlock alone), in a fresh
git workspace with a fake HOME (a key in ~/.ssh) and a state directory holding secrets; the host
side then checks what the command managed (a file written, a listener reached, a secret printed).
"blocked" means the host saw nothing change; "refused to run" means the backend would not run
commands at all with that layout (fail closed). Nothing here touches the real HOME.

Usage: python scripts/sandbox_probes.py
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanohermes.errors import SandboxUnavailable  # noqa: E402
from nanohermes.sandbox import SandboxSettings, confine, policy_for, probe  # noqa: E402

KEY = "PRIVATE-KEY-CANARY"
SECRET = "STATE-SECRET-CANARY"


def world(base: Path, layout: str = "project"):
    """(workspace, home, state) for a layout: a project dir, the workspace at $HOME, or the state
    directory inside the workspace."""
    home = base / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(KEY)
    workspace = home if layout == "home" else base / "ws"
    workspace.mkdir(exist_ok=True)
    state = workspace / ".state" if layout == "state-inside" else home / ".nanohermes"
    (state / "sessions").mkdir(parents=True)
    (state / "config.toml").write_text(f'api_key = "{SECRET}"\n')
    (state / "sessions" / "s.jsonl").write_text(SECRET)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    return workspace, home, state


def run(policy, command: str, backend: str, cwd: Path) -> tuple[str, subprocess.CompletedProcess | None]:
    try:
        launch = confine(["bash", "-c", command], policy, cwd, prefer=backend)
    except SandboxUnavailable:
        return "refused to run", None
    try:
        done = subprocess.run(
            launch.argv,
            cwd=cwd,
            env={**launch.environ(os.environ), "HOME": str(policy.user_home)},
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            pass_fds=launch.pass_fds,
        )
    finally:
        launch.release()
    return "", done


def probes(base: Path, backend: str, extra: dict) -> list[tuple[str, str]]:
    rows = []

    def fresh(layout="project", **settings):
        folder = Path(tempfile.mkdtemp(dir=base))
        workspace, home, state = world(folder, layout)
        os.environ["HOME"] = str(home)
        policy = policy_for(SandboxSettings(**settings, **extra), workspace, state, temp_dir=folder / "tmp")
        return policy, workspace, home, state, folder

    def row(name, command, escaped, layout="project", **settings):
        policy, workspace, home, state, folder = fresh(layout, **settings)
        refused, done = run(policy, command(locals()), backend, workspace)
        rows.append((name, refused or ("ESCAPED" if escaped(locals(), done) else "blocked")))

    row(
        "write outside the workspace",
        lambda v: f"echo x > {v['folder']}/out",
        lambda v, d: (v["folder"] / "out").exists(),
    )
    row("read ~/.ssh/id_rsa", lambda v: "cat ~/.ssh/id_rsa", lambda v, d: KEY in d.stdout)
    row(
        "the .git swap (mv, cp, core.hooksPath)",
        lambda v: "mv .git .git_old; cp -r .git_old .git; mkdir -p .githooks; git config core.hooksPath .githooks",
        lambda v, d: "hooksPath" in (v["workspace"] / ".git" / "config").read_text(),
    )
    row(
        "write .git/hooks/post-checkout",
        lambda v: "echo x > .git/hooks/post-checkout",
        lambda v, d: (v["workspace"] / ".git/hooks/post-checkout").exists(),
    )
    row(
        "create .nanohermes/config.toml",
        lambda v: "mkdir -p .nanohermes && echo x > .nanohermes/config.toml",
        lambda v, d: (v["workspace"] / ".nanohermes/config.toml").exists(),
    )
    row(
        "create .claude/settings.json",
        lambda v: "mkdir -p .claude && echo x > .claude/settings.json",
        lambda v, d: (v["workspace"] / ".claude/settings.json").exists(),
    )
    row(
        "read the state directory's config.toml",
        lambda v: f"cat {v['state']}/config.toml",
        lambda v, d: SECRET in d.stdout,
    )
    row(
        "write the state directory's permissions/",
        lambda v: f"mkdir -p {v['state']}/permissions && echo x > {v['state']}/permissions/p.json",
        lambda v, d: (v["state"] / "permissions/p.json").exists(),
    )

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.setblocking(False)
    row(
        "TCP connect to the host's 127.0.0.1",
        lambda v: f"exec 3<>/dev/tcp/127.0.0.1/{port}",
        lambda v, d: _accepted(listener),
    )
    unix_path = base / "outside.sock"
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(unix_path))
    unix.listen(4)
    unix.setblocking(False)
    connect = f"python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"{unix_path}\")'"
    row("connect to a Unix socket (a docker.sock)", lambda v: connect, lambda v, d: _accepted(unix))
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0nanohermes-probe")
    abstract.listen(4)
    abstract.setblocking(False)
    connect = "python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"\\0nanohermes-probe\")'"
    row("connect to an abstract Unix socket", lambda v: connect, lambda v, d: _accepted(abstract))
    row(
        "signal the agent (kill -0)",
        lambda v: f"kill -0 {os.getpid()} && echo SIGNALLED",
        lambda v, d: "SIGNALLED" in d.stdout,
    )
    row(
        "workspace = $HOME: read ~/.ssh/id_rsa",
        lambda v: "cat .ssh/id_rsa",
        lambda v, d: KEY in d.stdout,
        layout="home",
    )
    row(
        "state directory inside the workspace: read it",
        lambda v: "cat .state/config.toml",
        lambda v, d: SECRET in d.stdout,
        layout="state-inside",
    )
    web = socket.create_server(("127.0.0.2", 0))
    web.setblocking(False)
    fetch = "curl -s -m 20 -o /dev/null http://{host}:{port}/"
    wport = web.getsockname()[1]
    row(
        "allow_domains: an unlisted host (127.0.0.3)",
        lambda v: fetch.format(host="127.0.0.3", port=wport),
        lambda v, d: _accepted(web),
        allow_domains=("127.0.0.2",),
    )
    listed, _ = fresh(allow_domains=("127.0.0.2",))[:2], None
    policy, workspace = listed
    refused, _ = run(policy, fetch.format(host="127.0.0.2", port=wport), backend, workspace)
    rows.append(
        (
            "allow_domains: the listed host (127.0.0.2) reached",
            refused or ("reached" if _accepted(web) else "not reached"),
        )
    )
    for sock in (listener, unix, abstract, web):
        sock.close()
    return rows


def _accepted(listener: socket.socket) -> bool:
    try:
        listener.accept()[0].close()
        return True
    except (BlockingIOError, OSError):
        return False


def main() -> None:
    caps = probe()
    columns = [("bubblewrap", "bwrap", {}), ("Landlock only", "landlock", {})]
    columns.append(("Landlock only, level = read-only", "landlock", {"level": "read-only"}))
    columns.append(("Landlock, landlock_gaps = accept", "landlock", {"landlock_gaps": "accept"}))
    columns = [c for c in columns if (caps.bwrap if c[1] == "bwrap" else caps.landlock_abi >= 4)]
    backends = [title for title, _, _ in columns]
    home = os.environ.get("HOME", "")
    results = {}
    for title, backend, extra in columns:
        base = Path(tempfile.mkdtemp(prefix="nanohermes-probes-"))
        try:
            results[title] = dict(probes(base, backend, extra))
        finally:
            os.environ["HOME"] = home
            shutil.rmtree(base, ignore_errors=True)
    names = list(next(iter(results.values())))
    print(f"| probe | {' | '.join(backends)} |")
    print("|---|" + "---|" * len(backends))
    for name in names:
        print(f"| {name} | {' | '.join(results[b][name] for b in backends)} |")


if __name__ == "__main__":
    main()
