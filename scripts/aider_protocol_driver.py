"""aider's side of scripts/bench_aider133.py, run by aider's own Python: one exercise, aider's protocol
(aider_protocol.py), the coder set up as aider's benchmark/benchmark.py of 2024-11 sets it up — the solution
files in the chat, no git, no streaming, no shell suggestions, no other file mentioned loaded — and both tries
in one process, so the second sees the first (as in aider's benchmark). Prints one JSON line: the outcomes.

    AIDER_PYTHON scripts/aider_protocol_driver.py EXERCISE WORKDIR JUDGE_DIR MODEL BASE_URL METADATA EDIT_FORMAT
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import aider_protocol as protocol


def main() -> None:
    exercise, workdir, judge_dir = (Path(a) for a in sys.argv[1:4])
    model, base_url, metadata, edit_format = sys.argv[4:8]
    os.environ["OPENAI_API_BASE"] = base_url
    from aider import models
    from aider.coders import Coder
    from aider.io import InputOutput

    models.register_litellm_models([metadata])
    io = InputOutput(pretty=False, yes=True, chat_history_file=str(judge_dir.parent / "aider.chat.md"))
    main_model = models.Model(f"openai/{model}")
    fnames = [str(workdir / name) for name in protocol.solution_files(exercise)]
    coder = Coder.create(
        main_model, edit_format, io, fnames=fnames, use_git=False, stream=False, suggest_shell_commands=False
    )
    coder.get_file_mentions = lambda text: set()  # as aider's benchmark: no other file loaded
    message, outcomes, seconds = protocol.first_message(exercise), [], []
    for _ in range(protocol.TRIES):
        started = time.monotonic()
        coder.run(with_message=message, preproc=False)
        seconds.append(round(time.monotonic() - started, 1))
        errors = protocol.run_tests(exercise, workdir, judge_dir)
        outcomes.append(errors is None)
        if errors is None:
            break
        message = protocol.next_message(errors, exercise)
    print(json.dumps({"outcomes": outcomes, "seconds": seconds, "malformed": coder.num_malformed_responses}))


if __name__ == "__main__":
    main()
