import sys

from .bindings.cli import main

sys.exit(main())
