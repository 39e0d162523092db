"""/permissions: every rule and answer in force, where each comes from, and taking answers back.

Rules live in files and flags (config.toml, the project's .nanohermes/config.toml, --allow and
--deny): /permissions shows them; they change where they are written. Answers ("always", saved
for this project, and "session") are numbered and can be revoked here."""

from __future__ import annotations

from nanohermes.loop.approvals import Approvals
from nanohermes.ui.command_table import handles
from nanohermes.ui.escape import neutralize
from nanohermes.ui.toolview import Line

USAGE = "usage: /permissions [revoke N | clear] (N from /permissions)"
NOTHING = (
    'no "always" answers saved for this project and none for this session (answer a or s to a question to add one)'
)


def permissions_lines(approvals: Approvals, arg: str) -> list[Line]:
    """List the rules and answers; `revoke N` or `clear` takes answers back."""
    words = arg.split()
    if words[:1] == ["clear"] and len(words) == 1:
        approvals.clear()
        return [[('all answers revoked: "always" ones saved for this project and this session\'s', "")]]
    if words[:1] == ["revoke"] and len(words) == 2:
        grants = approvals.grants
        if not words[1].isdigit() or not 1 <= int(words[1]) <= len(grants):
            return [[(USAGE, "yellow")]]
        grant = grants[int(words[1]) - 1]
        approvals.revoke(grant)
        return [[(f"revoked: {neutralize(grant.describe())}", "")]]
    if words:
        return [[(USAGE, "yellow")]]
    return _listing(approvals)


def _listing(approvals: Approvals) -> list[Line]:
    lines: list[Line] = []
    if approvals.mode == "auto":
        lines.append([("mode auto: nothing asks, but for the ask and deny rules below", "dim")])
    if approvals.rules:
        lines.append([("rules (change them where they are written):", "")])
        width = max(len(rule.text()) for rule in approvals.rules)
        lines += [
            [(f"  {rule.effect:<5} ", "bold"), (neutralize(rule.text()).ljust(width), ""), (f"  {rule.source}", "dim")]
            for rule in approvals.rules
        ]
    saved = approvals.saved.grants() if approvals.saved is not None else []
    if approvals.saved is not None and approvals.saved.problem:
        lines.append([(neutralize(approvals.saved.problem), "yellow")])
    number = 0
    for title, grants in (
        ("saved for this project (every session here, until revoked):", saved),
        ("this session only (until /reset):", approvals.session),
    ):
        if grants:
            lines.append([(title, "")])
        for grant in grants:
            number += 1
            lines.append([(f"{number:>3}. ", "dim"), (neutralize(grant.describe()), "")])
    if number:
        lines.append([("  /permissions revoke N · /permissions clear", "dim")])
    else:
        lines.append([(NOTHING, "dim")])
    return lines


@handles("/permissions")
def _permissions(repl, arg: str) -> bool:
    repl.show(permissions_lines(repl.runtime.agent.approvals, arg))
    return True
