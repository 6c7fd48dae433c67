"""Run by .ci/run inside .venv-lowest: prove this environment holds the lowest versions
pyproject.toml allows, then run the fast subset of the tests with them.

Exit status: pytest's, or 1 when an installed version is not the pinned lowest one.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.packaging.lowest import FAST_SUBSET, lowest_pins  # noqa: E402


def main() -> int:
    wrong = [f"{name}: installed {version(name)}, lowest allowed {pin}"
             for name, pin in lowest_pins().items() if version(name) != pin]
    if wrong:
        print("ci: not the lowest versions:\n  " + "\n  ".join(wrong), file=sys.stderr)
        return 1
    print("ci: lowest versions installed: "
          + ", ".join(f"{name}=={pin}" for name, pin in lowest_pins().items()))
    return subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            *FAST_SUBSET], cwd=ROOT)


if __name__ == "__main__":
    raise SystemExit(main())
