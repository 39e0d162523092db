"""The REPL's question before a workspace's hooks run (hooks/trust.py keeps the answer)."""

from __future__ import annotations

from collections.abc import Callable

QUESTION = "Trust this workspace's hooks? They run until their definitions or scripts change. [y/N] "


def trust_question(say: Callable[[str], None], ask: Callable[[str], str]) -> Callable[[tuple], bool]:
    """`trust(hooks)` for build_runtime: the hooks shown, then a yes/no; a "no" holds for the
    rest of this process (/resume does not ask again)."""
    declined: set[tuple] = set()

    def trust(hooks: tuple) -> bool:
        if hooks in declined:
            return False
        files = sorted({spec.source.removeprefix("the workspace's ") for spec in hooks})
        say(
            f"This workspace defines hooks in {' and '.join(files)}: commands NanoHermes would run in the "
            "sandbox on these events:"
        )
        for spec in hooks:
            matcher = f" [{spec.matcher}]" if spec.matcher else ""
            say(f"  {spec.event}{matcher}: {spec.command}")
        if ask(QUESTION).strip().lower() in ("y", "yes"):
            return True
        declined.add(hooks)
        return False

    return trust
