"""What an editor picks with its own controls, where the REPL has /mode and /model (the table's rows
for the REPL only, slash/table.py): the session modes, and the config options — the mode again, for
editors that prefer options, and the model, from the models the server lists. Pure."""

from __future__ import annotations

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption, SessionMode, SessionModeState

from nanohermes.config import MODES

MODE_NAMES = {
    "ask": ("Ask", "Writes, edits, commands outside the sandbox and MCP calls ask for approval."),
    "accept-edits": ("Accept edits", "Writes and edits are made without asking; commands outside the sandbox ask."),
    "plan": ("Plan", "Read-only tools: investigate and propose a plan, change nothing."),
    "auto": ("Auto", "Act without asking."),
}


def modes(current: str) -> SessionModeState:
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id=mode, name=MODE_NAMES[mode][0], description=MODE_NAMES[mode][1]) for mode in MODES
        ],
    )


def options(mode: str, model: str, served: list[str]) -> list:
    """The mode and the model as select options; `model` first among those the server serves."""
    models = list(dict.fromkeys([model, *served]))
    return [
        SessionConfigOptionSelect(
            id="mode",
            name="Mode",
            category="mode",
            type="select",
            current_value=mode,
            options=[
                SessionConfigSelectOption(value=m, name=MODE_NAMES[m][0], description=MODE_NAMES[m][1]) for m in MODES
            ],
        ),
        SessionConfigOptionSelect(
            id="model",
            name="Model",
            category="model",
            type="select",
            current_value=model,
            options=[SessionConfigSelectOption(value=m, name=m) for m in models],
        ),
    ]
