"""Allow ``python -m gpukb``."""

from gpukb.cli import main

raise SystemExit(main())
