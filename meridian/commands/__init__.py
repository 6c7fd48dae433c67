"""One module per sub-command: ``add_arguments(parser)`` and ``run(args) -> int``.

Keep top-level imports light; import heavy modules inside ``run``.
"""
