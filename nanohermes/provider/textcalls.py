"""Tool calls a reply wrote as text, taken as calls when nothing else is in the reply.

Small models often write a call instead of making it: Qwen2.5-Coder puts
`{"name": "edit_file", "arguments": {…}}` in a ```json block, Hermes-style models write
`<tool_call>{…}</tool_call>`, Llama 3.1 `<function=name>{…}</function>`, Qwen3-Coder
`<function=name><parameter=k>v</parameter></function>`; a server whose parser misses the
format hands it over as text. Sent back with "make a real call", a small model often writes it
again. When the whole reply is such calls (whitespace around them and nothing else), each
naming an offered tool with arguments its schema accepts, they are the calls: the loop runs
them and records them as calls. Anything less certain (prose around them, an unknown tool, a
missing or unknown argument) is None, and the loop keeps its nudge. A line break or tab written
raw inside a JSON string (JSON wants it escaped) is taken as the one it means: Qwen2.5-Coder
writes a file's content so. Pure: text in, calls out.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Iterable

_NAME = r"[A-Za-z_][\w.-]*"
# ```json … ``` or ``` … ```: the body up to the closing fence
_FENCE = re.compile(r"```[ \t]*(?P<lang>[A-Za-z]*)[ \t]*\n(?P<body>.*?)```", re.DOTALL)
FENCE_LANGUAGES = ("", "json")  # a ```python block is code to show, never a call
# a missing </tool_call> at the very end: some servers stop on the closing tag and drop it
_TOOL_CALL = re.compile(r"<tool_call>(?P<body>.*?)(?:</tool_call>|\Z)", re.DOTALL)
_FUNCTION = re.compile(rf"<function=(?P<name>{_NAME})>(?P<body>.*?)</function>", re.DOTALL)
_PARAMETER = re.compile(rf"\s*<parameter=(?P<name>{_NAME})>(?P<value>.*?)</parameter>", re.DOTALL)
_SPACE = re.compile(r"\s*")
_CALL_KEYS = ({"name", "arguments"}, {"name", "parameters"})  # OpenAI's and Llama's spelling
_OPTIONAL_KEYS = {"type", "id"}  # {"type": "function", …} as Llama 3.2 writes it; an id it made up
_DECODER = json.JSONDecoder(strict=False)  # control characters in strings taken literally
_loads = _DECODER.decode
_LINE_NUMBER = re.compile(r"^ *\d+\t", re.MULTILINE)  # read_file numbers each line it shows: "12\t"


def tool_calls_from_text(text: str, tools: Iterable[dict]) -> list[dict] | None:
    """The calls `text` consists of, in the OpenAI shape ({"id", "type": "function", "function":
    {"name", "arguments": JSON text}}), or None unless the text is exactly one or more calls in
    a known format, separated by whitespace only, every one to a tool of `tools` (OpenAI tool
    schemas, as sent with the request) with arguments its parameters accept."""
    schemas = {t["function"]["name"]: t["function"].get("parameters") or {} for t in tools if "function" in t}
    written: list[tuple[str, dict]] = []
    at = _SPACE.match(text).end()
    if at == len(text):
        return None
    while at < len(text):
        block = _block(text, at, schemas)
        if block is None:
            return None
        calls, at = block
        written += calls
        at = _SPACE.match(text, at).end()
    if not written or not all(name in schemas and _accepts(schemas[name], args) for name, args in written):
        return None
    return [
        {
            "id": f"call_{secrets.token_hex(12)}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
        }
        for name, args in written
    ]


def echoes(text: str, shown: Iterable[str]) -> bool:
    """Whether `text` (a reply) is, whitespace aside, a part of what the model was shown as data: a
    tool result, a file attached to a request. Such calls are what a file or a command's output said
    (a README's example, a test fixture), read back, not calls the model chose to make."""
    wanted = " ".join(text.split())
    return bool(wanted) and any(wanted in " ".join(_LINE_NUMBER.sub("", seen).split()) for seen in shown)


def _block(text: str, at: int, schemas: dict[str, dict]) -> tuple[list[tuple[str, dict]], int] | None:
    """The calls of the block that starts at `at` and where it ends, or None."""
    if fence := _FENCE.match(text, at):
        calls = _json_calls(fence["body"]) if fence["lang"].lower() in FENCE_LANGUAGES else None
        end = fence.end()
    elif tagged := _TOOL_CALL.match(text, at):
        body = tagged["body"].strip()
        calls = _function_blocks(body, schemas) if body.startswith("<function=") else _json_calls(body)
        end = tagged.end()
    elif function := _FUNCTION.match(text, at):
        calls, end = _function_blocks(function.group(), schemas), function.end()
    else:  # a bare JSON object or list, as Llama 3 writes its calls
        try:
            value, end = _DECODER.raw_decode(text, at)
        except json.JSONDecodeError:
            return None
        calls = _calls_of(value)
    return (calls, end) if calls else None


def _json_calls(body: str) -> list[tuple[str, dict]] | None:
    try:
        return _calls_of(_loads(body))
    except json.JSONDecodeError:
        return None


def _calls_of(value) -> list[tuple[str, dict]] | None:
    """One call object, or a list of them: [(name, arguments)]; None if anything else."""
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return None
        keys = set(item) - _OPTIONAL_KEYS
        if keys not in _CALL_KEYS or item.get("type", "function") != "function":
            return None
        args = item.get("arguments", item.get("parameters"))
        if isinstance(args, str):  # the OpenAI wire shape: arguments as JSON text
            try:
                args = _loads(args)
            except json.JSONDecodeError:
                return None
        if not isinstance(args, dict):
            return None
        calls.append((item["name"], args))
    return calls or None


def _function_blocks(body: str, schemas: dict[str, dict]) -> list[tuple[str, dict]] | None:
    """`<function=name>…</function>` blocks, whitespace between: a JSON object or `<parameter=k>`
    blocks inside each (or nothing, for a tool without arguments)."""
    calls, at = [], 0
    while at < len(body):
        function = _FUNCTION.match(body, at)
        if function is None:
            return None
        inner = function["body"].strip()
        if inner.startswith("{"):
            try:
                args = _loads(inner)
            except json.JSONDecodeError:
                return None
        else:
            args = _parameters(inner, (schemas.get(function["name"]) or {}).get("properties") or {})
        if not isinstance(args, dict):
            return None
        calls.append((function["name"], args))
        at = _SPACE.match(body, function.end()).end()
    return calls or None


def _parameters(inner: str, properties: dict) -> dict | None:
    """Qwen3-Coder's `<parameter=k>v</parameter>`: v is text without the line breaks around it,
    read as JSON where the property is not a string (10, true, {…}) and it parses as such."""
    args, at = {}, 0
    while at < len(inner):
        parameter = _PARAMETER.match(inner, at)
        if parameter is None or parameter["name"] in args:
            return None
        value = parameter["value"].removeprefix("\n").removesuffix("\n")
        args[parameter["name"]] = value
        if (properties.get(parameter["name"]) or {}).get("type", "string") != "string":
            try:
                args[parameter["name"]] = _loads(value)
            except json.JSONDecodeError:
                pass  # "ten" for a number: the schema check refuses it
        at = _SPACE.match(inner, parameter.end()).end()
    return args


def _accepts(schema: dict, args: dict) -> bool:
    """Whether the tool would take these arguments: every key one of its properties, every
    required one present, each value of its type as loosely as tools/__init__.py coerces ("10"
    for 10, "true" for true; a number finite and not negative)."""
    properties = schema.get("properties") or {}
    if set(args) - set(properties):
        return False
    if any(args.get(name) is None for name in schema.get("required") or ()):
        return False
    return all(value is None or _loosely(properties[name].get("type"), value) for name, value in args.items())


def _loosely(kind, value) -> bool:
    if kind in ("integer", "number"):
        if isinstance(value, bool):
            return False
        try:
            number = float(value)
        except (TypeError, ValueError):
            return False
        return math.isfinite(number) and number >= 0 and (kind == "number" or number == int(number))
    if kind == "boolean":
        return isinstance(value, bool) or str(value).lower() in ("true", "false")
    if kind == "object":
        return isinstance(value, (dict, str))
    if kind == "array":
        return isinstance(value, list)
    return True  # a string (the tool takes the JSON text of anything else), or an untyped property
