"""An MCP server's form (elicitation) put to an editor with ACP's `elicitation/create`.

That method is UNSTABLE in ACP: it is in the protocol's schema.unstable.json (schema-v1.19.0, what
agent-client-protocol 0.12 is generated from) and not in its stable schema.json, and the SDK's
AgentSideConnection.create_elicitation sends it. So it is used only with an editor that declared
`clientCapabilities.elicitation.form`; any other editor gets what buttons can ask (session.py: a
permission request), and a form it cannot show is declined with the reason in the call's result.

The form is built from our own reading of the server's schema (asking.Field: its text on one line,
no control characters), and the editor's answer is checked against it before the server gets it.
"""

from __future__ import annotations

from nanohermes.mcp.asking import ACCEPT, CANCEL, DECLINE, Field, Question, Reply

NO_FORMS = (
    "the editor offers no forms (ACP's elicitation/create, unstable, was not in its capabilities), "
    "so the question was declined"
)
NO_PAGES = "an editor is not asked to open a page for a server, so the question was declined"
EDITOR_FAILED = "the editor could not show the form ({}), so the question was declined"
_TYPES = {"integer": int, "number": (int, float), "boolean": bool, "string": str}


def offers_forms(capabilities) -> bool:
    """Whether the editor declared `elicitation: {form: {}}` at initialize."""
    return getattr(getattr(capabilities, "elicitation", None), "form", None) is not None


def form_schema(question: Question) -> dict:
    """The form as ACP's ElicitationSchema (requestedSchema)."""
    properties = {field.name: _property(field) for field in question.fields}
    required = [field.name for field in question.fields if field.required]
    return {"type": "object", "properties": properties, **({"required": required} if required else {})}


def _property(field: Field) -> dict:
    described = {k: v for k, v in (("title", field.title), ("description", field.description)) if v}
    if field.kind == "array":
        return {"type": "array", "items": {"type": "string", "enum": list(field.choices)}, **described}
    spec = {"type": field.kind, **described}
    if field.choices:
        spec["enum"] = list(field.choices)
    if field.default is not None and _fits(field, field.default):
        spec["default"] = field.default
    return spec


async def ask_editor(conn, session_id: str, card: str, question: Question) -> Reply:
    """Put the form to the editor (on the protocol's loop) and read its answer."""
    from acp.schema import ElicitationFormSessionMode, ElicitationSchema

    schema = ElicitationSchema.model_validate(form_schema(question))
    mode = ElicitationFormSessionMode(session_id=session_id, tool_call_id=card or None, requested_schema=schema)
    try:
        response = await conn.create_elicitation(message=f"{question.server} asks: {question.message}", mode=mode)
    except Exception as exc:  # a client that declared forms but failed to show one: the call goes on
        return Reply(DECLINE, note=EDITOR_FAILED.format(str(exc)[:200] or type(exc).__name__))
    return reply_from(response, question)


def reply_from(response, question: Question) -> Reply:
    """The editor's answer as the server's: accepted values checked against the form's fields."""
    action = getattr(response, "action", None)
    if action == CANCEL:
        return Reply(CANCEL)
    if action != ACCEPT:
        return Reply(DECLINE)
    content = dict(getattr(response, "content", None) or {})
    problems = [f.name for f in question.fields if f.name in content and not _fits(f, content[f.name])]
    problems += [f"{f.name} (required)" for f in question.fields if f.required and f.name not in content]
    if problems:
        return Reply(
            DECLINE, note=f"the editor's answer did not fit the form ({', '.join(problems)}), so it was declined"
        )
    known = {f.name for f in question.fields}
    return Reply(ACCEPT, {name: value for name, value in content.items() if name in known})


def buttons(choices: list[tuple[str, dict]]) -> list:
    """A form buttons can ask (asking.form_choices), as a permission request's options."""
    from acp.schema import PermissionOption

    options = [
        PermissionOption(option_id=f"pick{i}", name=name, kind="allow_once") for i, (name, _) in enumerate(choices)
    ]
    return [*options, PermissionOption(option_id="decline", name="Decline", kind="reject_once")]


def reply_for_button(picked: str | None, choices: list[tuple[str, dict]]) -> Reply:
    """The option the editor picked (None: it cancelled) as the server's answer."""
    if picked is None:
        return Reply(CANCEL)
    if not picked.startswith("pick"):
        return Reply(DECLINE)
    return Reply(ACCEPT, choices[int(picked[4:])][1])


def _fits(field: Field, value) -> bool:
    if field.kind == "array":
        return isinstance(value, list) and all(isinstance(v, str) and v in field.choices for v in value)
    if isinstance(value, bool) and field.kind != "boolean":
        return False
    if not isinstance(value, _TYPES.get(field.kind, str)):
        return False
    return not field.choices or value in field.choices
