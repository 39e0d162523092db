"""The layer rule of NANOHERMES.md: lower layers never import higher ones. Every import counts —
at module level, inside a function, and under `if TYPE_CHECKING:` (an annotation that names a
higher layer is a dependency all the same). Within a layer its parts may import each other;
scripts/import_cycles.py keeps those free of circles."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "nanohermes"

# Bottom to top. A unit is a top-level module or package of nanohermes/.
LAYERS = (
    (
        "bottom",
        {"__init__", "errors", "bounded", "text", "synthetic", "calls", "fileio", "config", "events", "signals"}
        | {"redact", "stops", "cost", "crash"},
    ),
    ("stores", {"sandbox", "storage", "memory", "context", "repo_files", "workspace"}),
    ("parts", {"tools", "permissions", "provider", "piped"}),
    ("parts over the tools", {"prompt", "mcp", "hooks", "lsp"}),
    ("the loop", {"loop", "custom_commands"}),
    ("wiring", {"configure", "configured_tools", "runtime"}),
    # the one slash-command table, and the commands both front ends run, as plain data
    ("slash commands", {"slash"}),
    # `local` (a llama.cpp server started for the session) comes with --local
    ("front ends", {"ui", "acp", "cli", "cli_base", "subcommands", "launch", "__main__", "doctor", "local"}),
)
RANK = {unit: rank for rank, (_, units) in enumerate(LAYERS) for unit in units}


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import of nanohermes the file makes, wherever it stands."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return [(line, name) for line, name in found if name == "nanohermes" or name.startswith("nanohermes.")]


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_module_stands_on_a_layer():
    unplaced = sorted({unit_of(module_of(path)) for path in sources()} - set(RANK))
    assert not unplaced, f"put these in a layer of LAYERS (and NANOHERMES.md): {unplaced}"


def test_lower_layers_never_import_higher_ones():
    upward = []
    for path in sources():
        here = unit_of(module_of(path))
        for line, name in imports(path):
            there = unit_of(name)
            if RANK.get(there, -1) > RANK.get(here, len(LAYERS)):
                where = f"{path.relative_to(ROOT)}:{line}"
                upward.append(f"{where} ({LAYERS[RANK[here]][0]}) imports {name} ({LAYERS[RANK[there]][0]})")
    assert not upward, "imports that run up a layer:\n" + "\n".join(upward)


def test_nanohermes_md_states_the_same_layers():
    text = (ROOT / "NANOHERMES.md").read_text(encoding="utf-8")
    block = text.split("Layers, top to bottom", 1)[1].split("\n\n", 1)[0]
    stated = {}
    for line in block.splitlines()[1:]:
        name, _, units = line.removeprefix("- ").partition(":")
        stated[name.strip()] = {u.removesuffix(".py").removesuffix("/") for u in re.findall(r"`([^`]+)`", units)}
    assert stated == {name: units for name, units in LAYERS}
