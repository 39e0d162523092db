"""Which strategy a turn gets: the `coach` setting — "plain", "small", or "auto" (the default), which
decides by what the model does, decided as each turn starts (a turn keeps its strategy).

auto reads the signs the model gave in its last EVIDENCE replies at this endpoint (kept across
sessions in $NANOHERMES_HOME/coach.json by base URL and model id, as given: nothing is read into a
model's name):
- a bad sign: a tool call written as text (run or not), a native call whose arguments are no JSON
  object or whose tool was not offered, a reply cut for repeating itself, going round in circles (the
  same look with the same result, a call the repeat guard refused);
- a good sign: a reply whose native calls are all well formed.
At least one bad sign in BAD_SHARE of them → small; at least TRUSTED_AFTER signs and fewer bad → plain;
too few signs yet → the window, one signal: small under 16K tokens (the lean tool set, where the
small strategy was measured), plain above. A change of strategy is said once (a notice).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nanohermes import events as ev
from nanohermes.loop.coach.plain import Plain
from nanohermes.loop.coach.protocol import names
from nanohermes.loop.coach.small import Small
from nanohermes.loop.coach.spec import runs_tests
from nanohermes.loop.nudges import CUT_ANSWER_NOTICES
from nanohermes.provider import AssistantTurn
from nanohermes.provider.runaway import tool_call_in_text
from nanohermes.provider.stream import FINISH_REPEATED
from nanohermes.provider.textcalls import tool_calls_from_text
from nanohermes.storage.locking import FileLock, LockTimeout

COACHES = ("auto", "plain", "small")
STRATEGIES = {"plain": Plain, "small": Small}
GOOD, BAD = "+", "-"
EVIDENCE = 20  # replies remembered per model and endpoint: a few sessions' worth, so a model's habit outweighs a slip
BAD_SHARE = 0.2  # one bad reply in five: a frontier model slips far less; Qwen2.5-Coder-1.5B far more
TRUSTED_AFTER = 5  # well-formed replies before the window's guess gives way (a turn's worth of reads and edits)
PROFILE = "coach.json"
LOCK_WAIT_S = 1.0  # a sign not written for a busy lock is a sign lost, never a turn held


@dataclass(frozen=True)
class Choice:
    name: str  # plain | small
    why: str  # in words, for the notice when it changes


def sign_of(reply: AssistantTurn, schemas: list[dict]) -> str | None:
    """What a reply says of the model's tool calls: GOOD, BAD, or None (nothing: a plain answer, or a
    call cut by the output limit, which is the limit's doing)."""
    if reply.finish_reason == FINISH_REPEATED:
        return BAD
    offered = names(schemas)
    if reply.tool_calls:
        if reply.finish_reason in CUT_ANSWER_NOTICES:
            return None
        return GOOD if all(_well_formed(call, offered) for call in reply.tool_calls) else BAD
    if tool_calls_from_text(reply.content, schemas) or tool_call_in_text(reply.content, offered):
        return BAD
    return None


def _well_formed(call: dict, offered: list[str]) -> bool:
    function = call.get("function") or {}
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except (json.JSONDecodeError, TypeError):
        return False
    return function.get("name") in offered and isinstance(arguments, dict)


def decide(setting: str, signs: str, lean: bool) -> Choice:
    """The strategy for the next turn: `setting` unless "auto"; then by `signs` (GOOD/BAD, oldest
    first), the window (`lean`: under 16K tokens) when they are too few."""
    if setting != "auto":
        return Choice(setting, "the coach setting")
    recent = signs[-EVIDENCE:]
    bad = recent.count(BAD)
    if bad and bad >= BAD_SHARE * len(recent):
        return Choice("small", f"{bad} of the model's last {len(recent)} replies with calls were broken or went round")
    if len(recent) >= TRUSTED_AFTER:
        return Choice(
            "plain", f"{len(recent) - bad} of the model's last {len(recent)} replies with calls were well formed"
        )
    if lean:
        return Choice("small", "a window under 16K tokens, and too few of the model's calls seen yet")
    return Choice("plain", "too few of the model's calls seen yet")


class Evidence:
    """The signs of one model at one endpoint: this session's added to those kept (the profile file)."""

    def __init__(self, home: Path | None, key: str):
        self.path, self.key = (home / PROFILE if home is not None else None), key
        self.signs = _read(self.path).get(key, "") if self.path is not None else ""

    def reply(self, reply: AssistantTurn, schemas: list[dict]) -> None:
        if (sign := sign_of(reply, schemas)) is not None:
            self._add(sign)

    def went_round(self) -> None:
        self._add(BAD)

    def _add(self, sign: str) -> None:
        self.signs = (self.signs + sign)[-EVIDENCE:]
        if self.path is None:
            return
        lock = FileLock(self.path.with_suffix(".lock"))
        try:
            lock.acquire(timeout=LOCK_WAIT_S)
        except (LockTimeout, OSError):
            return
        try:
            kept = _read(self.path)
            kept[self.key] = (kept.get(self.key, "") + sign)[-EVIDENCE:]  # another session's signs kept too
            _write(self.path, kept)
        finally:
            lock.release()


class Coaching:
    """A session's coaching: the setting, auto's evidence, and a new strategy object for each turn."""

    def __init__(self, setting: str, evidence: Evidence | None, hooks, workspace: Path | None, emit=None):
        self.setting, self.evidence, self.hooks, self.workspace = setting, evidence, hooks, workspace
        self.emit = emit or (lambda event: None)
        self.last: Choice | None = None

    @classmethod
    def for_config(cls, config, hooks, emit) -> Coaching:
        setting = getattr(config, "coach", "auto")
        key = f"{config.effective_base_url} {config.model}"
        evidence = Evidence(config.home, key) if setting == "auto" else None
        return cls(setting, evidence, hooks, config.workspace, emit)

    def choose(self, lean: bool) -> Choice:
        choice = decide(self.setting, self.evidence.signs if self.evidence else "", lean)
        if self.last is not None and choice.name != self.last.name:
            self.emit(ev.Notice(f"coaching: {choice.name} from this request ({choice.why})"))
        self.last = choice
        return choice

    def for_turn(self, request: str, lean: bool) -> Plain:
        """The strategy for a turn of `request` (the user's own words); `lean`: a window under 16K."""
        strategy = STRATEGIES[self.choose(lean).name]
        return strategy(request, self.hooks, runs_tests(self.hooks), self.evidence, self.workspace)


def _read(path: Path) -> dict[str, str]:
    """The kept signs, by key; a missing or broken file keeps none (it is rebuilt as signs come)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    signs = data.get("signs") if isinstance(data, dict) else None
    if not isinstance(signs, dict):
        return {}
    return {k: v for k, v in signs.items() if isinstance(v, str) and set(v) <= {GOOD, BAD}}


def _write(path: Path, signs: dict[str, str]) -> None:
    """Atomically, unsynced: a lost sign costs nothing but a later choice."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".coach-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"version": 1, "signs": signs}, f)
        os.replace(tmp, path)
    except OSError:
        pass
