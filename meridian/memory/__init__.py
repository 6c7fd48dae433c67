"""Schema-validated memory on the state branch: semantic, episodic, corrections.

- ``schemas``: the pydantic models (registered for ledger validation) and JSON Schema.
- ``store``: ``add`` (validate, dedupe, pattern validation, amendments), listing, export.
- ``verify``: ``check_memory(ledger)``, every stored line re-checked.
- ``calibration``: ``record_gate_pass`` and the project's estimate multiplier.

Submodules are imported explicitly so that importing one does not pull in the rest.
"""
