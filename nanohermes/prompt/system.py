"""The system message of a session.

It is built on start, resume and /reset only, so it is byte-identical across the requests of a
session; memories change per message, so they travel with the user message they are relevant to
(the Agent works the block out: memory/entry_points.py block_for), never in the system message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from nanohermes.config import Config
from nanohermes.prompt import build_system_prompt, gather_prompt_inputs
from nanohermes.prompt.skills import Skills
from nanohermes.text import valid_unicode


class SystemPrompt:
    def __init__(
        self,
        config: Config,
        skills: Skills,
        warn: Callable[[str], None],
        mcp_listing: Callable[[str], str] | None = None,
    ):
        """`mcp_listing(mode)`: the MCP section now (it changes only when a server's tools do)."""
        self.config, self.skills, self.warn = config, skills, warn
        self.mcp_listing = mcp_listing or (lambda mode: "")
        # The model's window, once known (the runtime points this at the Agent's): the skills listing
        # follows it (prompt/skills.py), set before the first request, so the prefix stays stable.
        self.window: Callable[[], int | None] = lambda: config.context_window
        self.text = ""
        self.rebuild()

    def rebuild(self) -> None:
        listing = self.mcp_listing(self.config.mode)
        inputs, warnings = gather_prompt_inputs(
            self.config, skills=self.skills, mcp_listing=listing, window=self.window()
        )
        self.inputs = inputs
        self.text = valid_unicode(build_system_prompt(inputs))  # a workspace name that is not UTF-8, say
        for warning in warnings:
            self.warn(warning)

    def system(self) -> str:
        """The system message; the same text request after request, but for a mode switch, an MCP
        server whose tools changed (its listing is rebuilt once per change) and the window learned
        before the first request (the skills listing's budget)."""
        listing, skills = self.mcp_listing(self.config.mode), self.skills.listing(self.window())
        if listing != self.inputs.mcp_listing or skills != self.inputs.skills_listing:
            self.inputs = replace(self.inputs, mcp_listing=listing, skills_listing=skills)
            self.text = valid_unicode(build_system_prompt(self.inputs))
        return self.text

    def set_mode(self, mode: str) -> None:
        """A mode switch changes the mode line (and, in plan mode, the MCP servers listed)."""
        self.config = replace(self.config, mode=mode)
        self.inputs = replace(self.inputs, mode=mode, mcp_listing=self.mcp_listing(mode))
        self.text = valid_unicode(build_system_prompt(self.inputs))
