"""The built wheel, from a clone without symlinks, works the way users get it."""

from __future__ import annotations

import subprocess
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from meridian import DISTRIBUTION, resources
from tests.packaging.conftest import ROOT, Installed

# top-level folder of the source tree -> where the wheel carries it
DATA_FOLDERS = {
    ".meridian-template": "meridian/_data/template",
    "suites": "meridian/_data/suites",
    "hooks": "meridian/_data/hooks",
}


def _tracked(path: str, root: Path = ROOT) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--", path], cwd=root, capture_output=True,
                         text=True, check=True).stdout
    return sorted(name for name in out.split("\0") if name)


def test_the_repository_tracks_no_symlinks() -> None:
    out = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    links = [line.split("\t", 1)[1] for line in out.splitlines() if line.startswith("120000 ")]
    assert links == []


def test_the_clone_has_no_symlinks_and_the_wheel_carries_every_data_file(
        installed_wheel: Installed) -> None:
    assert not [p for p in installed_wheel.clone.rglob("*") if p.is_symlink()]
    with zipfile.ZipFile(installed_wheel.wheel) as archive:
        names = set(archive.namelist())
        for folder, packaged in DATA_FOLDERS.items():
            files = _tracked(folder, installed_wheel.clone)
            assert files, folder
            for name in files:
                inside = packaged + name[len(folder):]
                assert inside in names, f"{name} is not in the wheel as {inside}"
                assert archive.read(inside) == (installed_wheel.clone / name).read_bytes(), name
    assert "meridian/cli.py" in names and "meridian/py.typed" in names
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", ".venv"))]


def test_the_wheel_metadata_names_the_distribution_its_license_and_dependencies(
        installed_wheel: Installed) -> None:
    # (the clone is the committed tree the wheel was built from)
    project = tomllib.loads((installed_wheel.clone / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION == "meridian-gates"
    with zipfile.ZipFile(installed_wheel.wheel) as archive:
        info = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(info).decode())
        licenses = [n for n in archive.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert licenses and archive.read(licenses[0]) == (installed_wheel.clone / "LICENSE").read_bytes()
    assert metadata["Name"] == "meridian-gates"
    assert metadata["License-Expression"] == "MIT"
    runtime = [r for r in metadata.get_all("Requires-Dist") if "extra ==" not in r]
    assert sorted(str(Requirement(r)) for r in runtime) == \
        sorted(str(Requirement(r)) for r in project["dependencies"])
    assert installed_wheel.wheel.name.startswith("meridian_gates-")


def test_the_installed_wheel_reads_its_data_from_the_package(installed_wheel: Installed,
                                                            tmp_path: Path) -> None:
    code = ("from meridian import resources, templates\n"
            "from meridian.hooks import install\n"
            "print(templates.template_root()); print(install.stub_dir())\n"
            "print(resources.resource_dir('suites', 'reference.yaml'))\n")
    proc = subprocess.run([str(installed_wheel.python), "-c", code], cwd=tmp_path,
                          env=installed_wheel.env, capture_output=True, text=True, check=True)
    site = installed_wheel.venv / "lib"
    for line, name in zip(proc.stdout.splitlines(), ("template", "hooks", "suites"), strict=True):
        path = Path(line)
        assert path.is_relative_to(site) and path.parts[-2:] == ("_data", name), line


def test_the_source_tree_reads_the_top_level_folders() -> None:
    from meridian.hooks.install import stub_dir
    from meridian.templates import template_root

    assert template_root() == ROOT / ".meridian-template"
    assert stub_dir() == ROOT / "hooks"
    assert resources.resource_dir("suites", "reference.yaml") == ROOT / "suites"


def test_a_missing_data_folder_names_the_places_and_the_reinstall_line(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from meridian.errors import MeridianError

    monkeypatch.setattr(resources, "PACKAGE", tmp_path / "meridian")
    with pytest.raises(MeridianError) as info:
        resources.resource_dir("template", "gates")
    assert str(info.value) == (
        f"Meridian's .meridian-template data is missing from this installation (looked for "
        f"gates in {tmp_path / 'meridian' / '_data' / 'template'}, "
        f"{tmp_path / '.meridian-template'}); reinstall it: "
        "pip install --force-reinstall meridian-gates")


def test_demo_runs_from_the_installed_wheel(installed_wheel: Installed, tmp_path: Path) -> None:
    proc = installed_wheel.run("demo", "--dir", str(tmp_path / "tour"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "gate core: PASSED" in proc.stdout
    assert "REGRESSIONS (0)" in proc.stdout
    assert "Demo finished in" in proc.stdout


def _project(tmp_path: Path, installed: Installed) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    for argv in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "initial"]):
        subprocess.run(["git", *argv], cwd=project, env=installed.env, check=True)
    return project


@pytest.mark.parametrize("template", ["web-app", "cli"])
def test_init_with_a_template_hooks_and_ci_from_the_installed_wheel(
        installed_wheel: Installed, tmp_path: Path, template: str) -> None:
    project = _project(tmp_path, installed_wheel)
    proc = installed_wheel.run("init", "--template", template, "--ci", "github", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    source = ROOT / ".meridian-template"
    assert (project / ".meridian" / "gates.yaml").read_text() == \
        "# yaml-language-server: $schema=schemas/gates.schema.json\n" + \
        (source / "gates" / f"{template}.yaml").read_text()
    for schema in (source / "schemas").glob("*.json"):  # the editors' copy, from the wheel
        assert (project / ".meridian" / "schemas" / schema.name).read_bytes() == schema.read_bytes()
    assert (project / ".github" / "workflows" / "meridian.yml").read_text() == \
        (source / "ci" / "github-actions.yml").read_text()
    hook = (project / ".git" / "hooks" / "pre-commit").read_text()
    # the stub as shipped, with the interpreter and its isolation flags filled in (-I: a
    # wheel installed in a venv, not in the user site)
    assert hook == (ROOT / "hooks" / "pre-commit").read_text().replace(
        "@MERIDIAN_PYTHON@", str(installed_wheel.python)).replace("@MERIDIAN_FLAGS@", "-I")
    status = installed_wheel.run("status", cwd=project)
    assert status.returncode == 0, status.stdout + status.stderr
    listed = installed_wheel.run("init", "--list-templates", cwd=project)
    assert listed.stdout.split() == ["cli", "library", "ml-research", "web-app"]


def test_a_bundled_suite_runs_by_name_from_the_installed_wheel(installed_wheel: Installed,
                                                              tmp_path: Path) -> None:
    project = _project(tmp_path, installed_wheel)
    assert installed_wheel.run("init", "--no-hooks", cwd=project).returncode == 0
    listed = installed_wheel.run("eval", "suites", cwd=project)
    assert listed.returncode == 0 and "reference" in listed.stdout
    proc = installed_wheel.run("eval", "run", "reference", "--agent", "reference-v1",
                               "--offline", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "reference / reference@v1" in proc.stdout
    assert not (project / "suites").exists()  # nothing of Meridian's source tree is needed


def test_the_sdist_holds_every_tracked_file(installed_wheel: Installed, tmp_path: Path) -> None:
    """A user (or a distribution packager) who builds from the sdist and runs its tests gets
    the whole source: the tests read .ci/, benchmarks/ and the top-level data folders."""
    import sys
    import tarfile

    dist = tmp_path / "sdist"
    build = "import sys; from hatchling.build import build_sdist; print(build_sdist(sys.argv[1]))"
    out = subprocess.run([sys.executable, "-c", build, str(dist)],
                         cwd=installed_wheel.clone, capture_output=True, text=True, timeout=300,
                         check=False)
    assert out.returncode == 0, out.stderr
    with tarfile.open(dist / out.stdout.strip().splitlines()[-1]) as archive:
        top = archive.getnames()[0].split("/", 1)[0]
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert top == "meridian_gates-0.1.0"
    missing = [name for name in _tracked(".", installed_wheel.clone)
               if name not in names and name != ".gitignore"]
    assert missing == [], f"tracked but not in the sdist: {missing[:20]}"


def test_schema_regeneration_from_an_installed_wheel_refuses_without_a_directory(
        installed_wheel: Installed, tmp_path: Path) -> None:
    proc = subprocess.run([str(installed_wheel.python), "-m", "meridian.schemas"], cwd=tmp_path,
                          env=installed_wheel.env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 2 and "not running from a source checkout" in proc.stderr
    assert list(tmp_path.iterdir()) == []
