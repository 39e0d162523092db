"""The `nanohermes` command's entry point: `nanohermes --version` answers before anything heavy
is imported (typer alone takes ~40 ms; the bare interpreter ~20 ms); every other command line
goes to cli.main()."""

from __future__ import annotations

import sys

EXIT_FAILURE = 1  # cli.EXIT_FAILURE, without importing cli


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from nanohermes import __version__

        try:
            print(f"nanohermes {__version__}", flush=True)
        except OSError:  # stdout closed: nothing to say it on
            sys.exit(EXIT_FAILURE)
        sys.exit(0)
    from nanohermes.cli import main as cli_main

    cli_main()
