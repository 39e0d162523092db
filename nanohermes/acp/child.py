"""One session's process (relay.py starts it): `python -m nanohermes.acp.child FLAGS`, the agent
serving the editor's session over its stdin and stdout, FLAGS the JSON of `nanohermes acp`'s."""

from __future__ import annotations

import json
import sys


def main() -> int:
    from nanohermes import signals
    from nanohermes.acp.main import serve_sessions
    from nanohermes.crash import report_crash

    signals.install()
    try:
        return serve_sessions(json.loads(sys.argv[1]) if len(sys.argv) > 1 else {})
    except Exception as exc:  # one paragraph in the editor's log, the traceback in a file
        print(report_crash(exc), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
