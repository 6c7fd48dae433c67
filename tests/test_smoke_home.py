from pathlib import Path

from meridian.ledger import Ledger


def test_ledger_writer_uses_test_identity(repo: Path) -> None:
    ledger = Ledger.open(repo)
    assert ledger.writer == "Meridian Test <test@meridian.invalid>"
