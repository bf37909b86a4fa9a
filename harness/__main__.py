"""``python -m harness``: the command-line entry point."""

from harness.frontends.cli import main

raise SystemExit(main())
