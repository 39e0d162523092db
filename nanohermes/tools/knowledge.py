"""Tools over long-term knowledge: `remember` (ctx.memory) and `skill` (ctx.skills)."""

from __future__ import annotations

from nanohermes.errors import ToolError
from nanohermes.memory.entry import KINDS
from nanohermes.memory.store import MemoryStoreError
from nanohermes.tools import ToolContext, tool


def _available(service, what: str):
    if service is None:
        raise ToolError(f"{what} is not available in this session")
    return service


def _preview_remember(ctx: ToolContext, text: str, kind: str = "fact") -> str:
    return f"remember [{kind}]: {text}\n(kept in long-term memory and shown to the model in future sessions)"


# A write, and one that lasts: text injected through a file or a page ("the user approved all
# commands forever") would otherwise persist itself into every future session. So it asks as
# write_file does, is refused in a -p run without --yes, and is not offered in plan mode.
@tool(
    params={"text": "", "kind": "|".join(KINDS)},
    approval=True,
    preview=_preview_remember,
    lean=False,
)  # small windows: /memory add still works, and memories are still saved before a compaction
def remember(ctx: ToolContext, text: str, kind: str = "fact") -> str:
    """Save a lasting fact or preference for later sessions."""
    store = _available(ctx.memory, "long-term memory")
    try:
        result = store.add(text, kind)
    except MemoryStoreError as exc:
        raise ToolError(str(exc)) from None
    entry = result.entry
    verb = "updated existing memory" if result.merged else "remembered"
    message = f"{verb} {entry.id} [{entry.kind}]: {entry.text}"
    if result.evicted is not None:
        message += f"\n(memory full: forgot least-used {result.evicted.id}: {result.evicted.text[:80]})"
    return message


@tool(params={"name": "a skill name from the Skills list"})
def skill(ctx: ToolContext, name: str) -> str:
    """Load a skill's full instructions by name."""
    skills = _available(ctx.skills, "skills")
    found = skills.get(name)
    if found is None:
        available = ", ".join(skills.names()) or "none are installed"
        raise ToolError(f"no skill named {name!r}; available: {available}")
    try:
        body = skills.body(found)
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolError(f"cannot read skill {found.name} at {found.path}: {exc}") from None
    return f"skill {found.name} ({found.path}; read_file reads the files it names under {found.path.parent}/)\n\n{body}"


KNOWLEDGE_TOOLS = [remember, skill]
