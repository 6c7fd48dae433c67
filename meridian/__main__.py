import sys

from meridian.cli import main

sys.exit(main())
