"""A gated project: the repository, its config, gate graph and state branch.

Its own module so that commands which only read state (``meridian status``) open a
project without importing the lifecycle (evaluators, checks, their models).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from meridian import gitio
from meridian.config import Config, load_config
from meridian.errors import MeridianError
from meridian.gates.graph import Graph, load_graph
from meridian.ledger import Ledger


@dataclass
class Project:
    root: Path
    repo: gitio.Repository
    config: Config
    graph: Graph
    ledger: Ledger


def open_project(path: str | os.PathLike[str] = ".") -> Project:
    """The repository at ``path`` with its config, gate graph and state branch."""
    repo = gitio.open_repo(path)
    workdir = gitio.workdir(repo)
    if workdir is None:
        raise MeridianError(f"{repo.path}: a bare repository has no work tree to gate")
    root = workdir.resolve()
    config = load_config(root)
    return Project(root=root, repo=repo, config=config, graph=load_graph(root, config),
                   ledger=Ledger(repo, config.branch))
