"""What a server may ask of the client: the workspace as its root, and the user's answers to a
form (elicitation), as plain data the front ends read. Pure: the hub does the asking.

A server's question is its text: untrusted. The message and the field names are shown on one
line without control characters, and an answer is only ever what the user typed, checked
against the field's type. A front end that cannot ask (`-p`) declines, and the call's result
says so, so the model learns the server wanted the user.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nanohermes.mcp.listing import one_line

MESSAGE_CHARS = 500  # a server's question, as shown
FIELD_TEXT_CHARS = 120  # a field's title or description
MAX_FIELDS = 20  # a form longer than this is no question for a person at a terminal
ACCEPT, DECLINE, CANCEL = "accept", "decline", "cancel"
CANNOT_ASK = "this session cannot ask the user (a -p run), so the question was declined"
_KINDS = {"string", "number", "integer", "boolean"}  # what the protocol lets a form ask for


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # string | number | integer | boolean | array (several of the choices)
    title: str = ""
    description: str = ""
    required: bool = False
    choices: tuple[str, ...] = ()  # an enum: one of these
    default: object = None


@dataclass(frozen=True)
class Question:
    """A server's form (or, with `url`, a page the server asks the user to open)."""

    server: str
    message: str
    fields: tuple[Field, ...] = ()
    url: str = ""


@dataclass(frozen=True)
class Reply:
    action: str  # accept | decline | cancel
    content: dict | None = None  # with accept: each field's value
    note: str = ""  # why a front end declined without asking: said in the call's result (declined_note)


# The front end's "ask the user": the REPL asks at the terminal; None (-p) declines.
Asker = Callable[[Question], Reply]


def roots_for(workspace: Path) -> list[tuple[str, str]]:
    """The roots a server is told of: the workspace, as (file URI, name)."""
    path = Path(workspace).resolve()
    return [(path.as_uri(), path.name or str(path))]


def question_from(server: str, message: str, schema: dict | None, url: str = "") -> Question:
    """The question as front ends show it; fields of a kind the protocol does not allow are left out."""
    props = (schema or {}).get("properties") or {}
    required = set((schema or {}).get("required") or ())
    fields = []
    for name, spec in list(props.items())[:MAX_FIELDS]:
        spec = spec if isinstance(spec, dict) else {}
        kind = spec.get("type") if spec.get("type") in _KINDS else "string"
        items = spec.get("items") if isinstance(spec.get("items"), dict) else {}
        if spec.get("type") == "array":  # a multiple choice: its items' enum
            kind, spec = "array", {**spec, **{k: v for k, v in items.items() if k in ("enum", "anyOf", "oneOf")}}
        choices = tuple(one_line(str(c), FIELD_TEXT_CHARS) for c in _choices(spec))
        title = one_line(str(spec.get("title") or ""), FIELD_TEXT_CHARS)
        about = one_line(str(spec.get("description") or ""), FIELD_TEXT_CHARS)
        fields.append(Field(one_line(name, 64), kind, title, about, name in required, choices, spec.get("default")))
    return Question(one_line(server, 64), one_line(message, MESSAGE_CHARS), tuple(fields), one_line(url, 500))


def _choices(spec: dict) -> list:
    """An enum's values: `enum`, or the `const`s of a titled `oneOf` / `anyOf`."""
    if isinstance(spec.get("enum"), list):
        return spec["enum"]
    options = spec.get("oneOf") or spec.get("anyOf") or []
    return [o["const"] for o in options if isinstance(o, dict) and "const" in o]


def parse_value(field: Field, text: str):
    """The typed text as the field's value; ValueError saying what fits."""
    text = text.strip()
    if field.kind == "array":  # several of the choices, comma-separated
        picked = [part.strip() for part in text.split(",") if part.strip()]
        wrong = [p for p in picked if field.choices and p not in field.choices]
        if wrong or not picked:
            raise ValueError(f"one or more of: {', '.join(field.choices)} (comma-separated)")
        return picked
    if field.choices:
        if text not in field.choices:
            raise ValueError(f"one of: {', '.join(field.choices)}")
        return text
    if field.kind == "boolean":
        if text.lower() in ("y", "yes", "true"):
            return True
        if text.lower() in ("n", "no", "false"):
            return False
        raise ValueError("yes or no")
    if field.kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError("a whole number") from None
    if field.kind == "number":
        try:
            return float(text)
        except ValueError:
            raise ValueError("a number") from None
    return text


def form_choices(question: Question) -> list[tuple[str, dict]] | None:
    """A question a front end with buttons only can put: (label, the accepted content) for a plain
    confirmation (no fields), or for each value of its one field of choices or yes/no; None for
    anything else (text to type, several fields, a page to open)."""
    if question.url or len(question.fields) > 1:
        return None
    if not question.fields:
        return [("Accept", {})]
    field = question.fields[0]
    if field.kind == "boolean":
        return [("Yes", {field.name: True}), ("No", {field.name: False})]
    if field.choices and field.kind != "array":
        return [(choice, {field.name: choice}) for choice in field.choices]
    return None


def declined_note(question: Question, reason: str) -> str:
    """What the call's result says when a question could not be put to the user."""
    return f"[{question.server} asked the user: {question.message!r}; {reason}]"
