"""The sandbox in one line at start (what runs unasked, and how to take it back), in full with /sandbox.

The start line says what a user needs before the first prompt: whether the model's commands run
without a question, inside what, and that /rewind undoes what they did. It is fitted to the
terminal's width by dropping the details first (the backend, the network), which /sandbox and
`nanohermes doctor` give whole. Pure: the runtime's facts in, text out.
"""

from __future__ import annotations

from nanohermes.ui.command_table import handles

BACKEND_NAMES = {"bwrap": "bubblewrap", "landlock": "Landlock", "seatbelt": "Seatbelt"}
NOT_ENFORCED = "sandbox NOT ENFORCED here: commands will not run · /sandbox says why and how to fix it"
OFF_UNASKED = "sandbox off: the model's commands run unasked, with your rights · /rewind undoes them"
OFF_ASKED = "sandbox off: the model's commands ask before they run · /rewind undoes them"


def sandbox_line(backend: str, network: str, mode: str, width: int = 120) -> str:
    """`backend`: Runtime.sandbox_backend; `network`: "network off", "network on", "network: pypi.org"
    (shown when there is room); the line fits in `width` columns when it can."""
    if backend == "off":
        return OFF_UNASKED if mode == "auto" else OFF_ASKED
    if not backend:
        return NOT_ENFORCED
    what = "commands run read-only in the sandbox" if mode == "plan" else "commands run unasked in the sandbox"
    details = f"{BACKEND_NAMES.get(backend, backend)}, {network}"
    candidates = (
        f"{what} ({details}) · /rewind undoes them · /sandbox",
        f"{what} ({details}) · /rewind undoes them",
        f"{what} · /rewind undoes them",
        what,
    )
    return next((line for line in candidates if len(line) + 2 <= width), candidates[-1])


def network_words(policy) -> str:
    if policy is None or policy.network:
        return "network on"
    if policy.allow_domains:
        shown = ", ".join(policy.allow_domains[:2]) + (", …" if len(policy.allow_domains) > 2 else "")
        return f"network: {shown}"
    return "network off"


@handles("/sandbox")
def sandbox_command(repl, arg: str) -> bool:
    runtime = repl.runtime
    repl.say(f"sandbox: {runtime.sandbox_summary}")
    repl.say(
        "· the model's commands run in it without asking (plan mode: read-only); yours (!command) run as you; "
        "/rewind undoes what commands changed; `nanohermes doctor` proves it live",
        "dim",
    )
    return True
