"""Every message an ACP agent sends, checked against the protocol's own JSON schema.

acp_schema.json is schema/v1/schema.json of agentclientprotocol/agent-client-protocol at tag
schema-v1.19.0 (what agent-client-protocol 0.12 is generated from), its descriptions removed. Each
definition names the method it belongs to (`x-method`) and the side that handles it (`x-side`),
so a message is checked against exactly its method's definition, not any that happens to fit
(a method only the UNSTABLE schema defines, elicitation/create, against acp_schema_unstable.json:
schema/v1/schema.unstable.json at the same tag, stripped the same way):
a request or notification the agent sends by its method, a response by the method of the client's
request it answers, an error as the protocol's Error (its code one of the ErrorCodes).

Beyond the schema, the order the protocol's docs give: a tool call's status goes pending →
in_progress → completed or failed, never back, and a permission request never moves it back either.

SchemaCheck is an observer for the SDK's connection (`observers=[check]`): it sees each message
as parsed from, or as written to, the agent's pipes.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from jsonschema import Draft202012Validator

SCHEMA = Path(__file__).with_name("acp_schema.json")
# schema/v1/schema.unstable.json at the same tag, stripped the same way: the methods the stable
# schema lacks (elicitation/create) are checked against it, and listed in SchemaCheck.unstable.
UNSTABLE_SCHEMA = Path(__file__).with_name("acp_schema_unstable.json")
STATUS_ORDER = {"pending": 0, "in_progress": 1, "completed": 2, "failed": 2}


@cache
def _defs(unstable: bool = False) -> dict:
    return json.loads((UNSTABLE_SCHEMA if unstable else SCHEMA).read_text())["$defs"]


@cache
def _validator(name: str, unstable: bool = False) -> Draft202012Validator:
    return Draft202012Validator({"$defs": _defs(unstable), "$ref": f"#/$defs/{name}"})


@cache
def _envelope() -> Draft202012Validator:
    root = json.loads(SCHEMA.read_text())
    agent = next(branch for branch in root["anyOf"] if "AgentRequest" in json.dumps(branch))
    return Draft202012Validator({**agent, "$defs": root["$defs"]})


def definition(method: str, side: str, response: bool, unstable: bool = False) -> str | None:
    """The definition of `method`'s params (handled on `side`) or of its result."""
    for name, body in _defs(unstable).items():
        if body.get("x-method") == method and body.get("x-side") == side and name.endswith("Response") == response:
            return name
    return None


def problems(name: str, value, unstable: bool = False) -> list[str]:
    return [f"{name}: {e.json_path}: {e.message[:300]}" for e in _validator(name, unstable).iter_errors(value)]


class SchemaCheck:
    def __init__(self) -> None:
        self.sent_by_agent: list[dict] = []
        self.deviations: list[str] = []
        self.unstable: list[str] = []  # methods sent that only the unstable schema defines
        self._asked: dict = {}  # the client's request ids -> their methods
        self._status: dict[tuple[str, str], str] = {}  # (session, tool call) -> its latest status

    def __call__(self, event) -> None:
        message = event.message
        if event.direction.value == "outgoing":  # the client's own messages: only their methods are needed
            if "method" in message and "id" in message:
                self._asked[message["id"]] = message["method"]
            return
        self.sent_by_agent.append(message)
        self.deviations += self.check(message)

    def check(self, message: dict) -> list[str]:
        found = [f"envelope: {e.message[:300]}" for e in _envelope().iter_errors(message)]
        method = message.get("method")
        if method is not None:
            name, unstable = definition(method, "client", response=False), False
            if name is None and (name := definition(method, "client", response=False, unstable=True)):
                unstable = True
                self.unstable.append(method)
            if name is None:
                return found + [f"{method}: not a method a client handles"]
            found += problems(name, message.get("params"), unstable)
            found += self._order(method, message.get("params") or {})
        elif "error" in message:
            found += problems("Error", message["error"])
        else:
            asked = self._asked.get(message.get("id"))
            name = definition(asked, "agent", response=True) if asked else None
            if name is None:
                return found + [f"a response to {asked or 'no request'} (id {message.get('id')!r})"]
            found += problems(name, message.get("result"))
        return found

    def _order(self, method: str, params: dict) -> list[str]:
        if method == "session/update":
            update = params.get("update") or {}
            if update.get("sessionUpdate") not in ("tool_call", "tool_call_update"):
                return []
        elif method == "session/request_permission":
            update = params.get("toolCall") or {}
        else:
            return []
        key = (params.get("sessionId"), update.get("toolCallId"))
        status, before = update.get("status"), self._status.get(key)
        if status is None:
            return []
        self._status[key] = status
        if before is not None and STATUS_ORDER[status] < STATUS_ORDER[before]:
            return [f"tool call {key[1]}: {before} → {status}"]
        if before is not None and STATUS_ORDER[before] == 2 and status != before:
            return [f"tool call {key[1]}: {status} after it ended {before}"]
        return []
