import sys

from .bindings.cli.main import main

sys.exit(main())
