"""The benchmark scripts still run (their figures are read by people, not asserted here).

Each runs at a tiny size: this guards against a script broken by a change elsewhere
(a benchmark that crashes measures nothing), not against slowness.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize(("script", "args", "expected"), [
    ("ledger_append.py", ["--samples", "12", "--rounds", "2"], "10k vs bare commit"),
    ("runner_overhead.py", ["--tasks", "20", "--repeat", "1"], "ms"),
    ("health.py", ["--events", "2000", "--repeat", "1"], "events"),
    ("hook_latency.py", ["--samples", "1", "--events", "200", "--runs", "3"], "meridian / framework"),
])
def test_benchmark_runs(script: str, args: list[str], expected: str, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    # ledger_append exits 1 when a budget is missed; tiny samples are noise, so only a
    # crash (a traceback, or exit codes other than 0/1) fails here
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert expected in proc.stdout
