"""Tools over long-term knowledge: `remember` (ctx.memory) and `skill` (ctx.skills)."""

from __future__ import annotations

from nanohermes.errors import ToolError
from nanohermes.storage.memory import KINDS, MAX_ENTRY_CHARS, MemoryStoreError
from nanohermes.tools import ToolContext, tool


def _available(service, what: str):
    if service is None:
        raise ToolError(f"{what} is not available in this session")
    return service


@tool(params={"text": f"one fact, preference or decision, at most {MAX_ENTRY_CHARS} chars",
              "kind": f"{', '.join(KINDS)} (default fact)"})
def remember(ctx: ToolContext, text: str, kind: str = "fact") -> str:
    """Save a lasting fact, preference or decision for future sessions."""
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
    return f"skill {found.name} ({found.path})\n\n{body}"


KNOWLEDGE_TOOLS = [remember, skill]
