"""``init``'s workflow installs what the adopter runs: read from real installs' PEP 610 metadata.

Every case installs the harness for real into a fresh virtualenv (from the
session's wheelhouse, offline): by name from a find-links folder (index case),
from a git repository at a branch, editable from a checkout, and from a wheel
file. The translation of metadata pip cannot produce here (an https git URL, a
remote archive) is checked on the real git install's metadata with only the URL
swapped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from adoption_support import Venv, copy_source, git, harness_wheel, make_venv, ok

from harness import __version__
from harness.adoption.install_source import InstallSource, source_from_direct_url
from harness.adoption.workflow import has_installable_project, workflow_text

pytestmark = pytest.mark.slow(seconds=25)

_PROBE = """\
import dataclasses, json
from importlib import metadata
from harness.adoption.install_source import installed_source
source = installed_source()
dist = metadata.distribution("offline-evals")
print(json.dumps({**dataclasses.asdict(source), "warning": source.warning,
                  "direct_url": json.loads(dist.read_text("direct_url.json") or "null")}))
"""


@pytest.fixture(scope="module")
def venv(wheelhouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    env = make_venv(tmp_path_factory.mktemp("venv") / "v", wheelhouse)
    ok(env.run("pip", "install", "offline-evals"))  # the dependencies, once
    return env


def _probe(venv: Venv, cwd: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(ok(venv.run("python", "-c", _PROBE, cwd=cwd)).stdout)
    return data


def test_installed_by_name_from_an_index_pins_name_and_version(venv: Venv, tmp_path: Path) -> None:
    ok(venv.run("pip", "install", "--force-reinstall", "--no-deps", "offline-evals"))
    found = _probe(venv, tmp_path)
    assert found["direct_url"] is None
    assert (found["kind"], found["requirement"], found["local"], found["warning"]) == (
        "index", f"offline-evals=={__version__}", False, None)


@pytest.fixture(scope="module")
def git_checkout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repository of the harness source with one commit on ``main``."""
    repo = copy_source(tmp_path_factory.mktemp("git") / "harness")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "harness")
    return repo, git(repo, "rev-parse", "HEAD")


def test_installed_from_git_pins_the_commit_not_the_branch(
        venv: Venv, tmp_path: Path, git_checkout: tuple[Path, str]) -> None:
    repo, commit = git_checkout
    ok(venv.run("pip", "install", "--force-reinstall", "--no-deps",
                f"git+file://{repo}@main"))
    found = _probe(venv, tmp_path)
    direct = found["direct_url"]
    assert isinstance(direct, dict)
    assert direct["vcs_info"]["commit_id"] == commit
    assert direct["vcs_info"]["requested_revision"] == "main"
    assert found["kind"] == "vcs"
    assert found["requirement"] == f"git+file://{repo}@{commit}"
    # a git repository on this disk is as unreachable from CI as a folder: marked and warned
    assert found["local"] is True and "LOCAL" in str(found["warning"])
    # the same metadata with the repository on a forge: a plain pinned line, no warning
    remote = source_from_direct_url({**direct, "url": "https://git.example.org/team/harness.git"},
                                    __version__)
    assert remote.requirement == f"offline-evals @ git+https://git.example.org/team/harness.git@{commit}"
    assert not remote.local and remote.warning is None
    sub = source_from_direct_url({**direct, "url": "https://git.example.org/m.git",
                                  "subdirectory": "tools/harness"}, __version__)
    assert sub.requirement.endswith(f"@{commit}#subdirectory=tools/harness")


def test_installed_editable_is_a_marked_line_and_init_warns(
        venv: Venv, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    checkout = copy_source(tmp_path_factory.mktemp("editable") / "harness")
    ok(venv.run("pip", "install", "--force-reinstall", "--no-deps", "-e", checkout))
    found = _probe(venv, tmp_path)
    assert found["direct_url"] == {"dir_info": {"editable": True}, "url": checkout.as_uri()}
    assert (found["kind"], found["requirement"], found["local"]) == ("local", str(checkout), True)
    assert "(editable)" in str(found["description"])

    adopter = tmp_path / "adopter"
    adopter.mkdir()
    done = ok(venv.run("harness", "init", cwd=adopter))
    assert f"the local path {checkout} (editable), which a CI runner cannot reach" in done.stderr
    assert f"pip install offline-evals=={__version__}" in done.stderr
    text = (adopter / ".github/workflows/evals.yml").read_text()
    assert "# LOCAL: init ran with the harness installed from the local path" in text
    steps = yaml.safe_load(text)["jobs"]["evals"]["steps"]
    install = next(s for s in steps if s.get("name", "").startswith("Install the harness"))
    assert install == {"name": "Install the harness (LOCAL path, replace it)",
                       "run": f"pip install {checkout}"}


def test_installed_from_a_wheel_file_is_local(venv: Venv, tmp_path: Path, wheelhouse: Path) -> None:
    wheel = harness_wheel(wheelhouse)
    ok(venv.run("pip", "install", "--force-reinstall", "--no-deps", wheel))
    found = _probe(venv, tmp_path)
    assert (found["kind"], found["requirement"], found["local"]) == ("local", str(wheel), True)
    assert f"from the local file {wheel}" == found["description"]


def test_a_remote_archive_keeps_its_hash() -> None:
    source = source_from_direct_url(
        {"url": "https://files.example.org/offline_evals-0.1.0-py3-none-any.whl",
         "archive_info": {"hashes": {"sha256": "ab12"}, "hash": "sha256=ab12"}}, "0.1.0")
    assert source.requirement == ("offline-evals @ https://files.example.org/"
                                  "offline_evals-0.1.0-py3-none-any.whl#sha256=ab12")
    assert not source.local


@pytest.mark.parametrize("source", [
    source_from_direct_url(None, "0.1.0"),
    source_from_direct_url({"url": "https://h.example.org/a b.git", "vcs_info": {
        "vcs": "git", "commit_id": "c0ffee"}}, "0.1.0"),
    source_from_direct_url({"url": "file:///home/me/my%20harness", "dir_info": {}}, "0.1.0"),
])
def test_every_install_line_reads_back_from_the_yaml_unchanged(source: InstallSource) -> None:
    workflow = yaml.safe_load(workflow_text(source, install_project=True, python_version="3.10"))
    steps = workflow["jobs"]["evals"]["steps"]
    assert steps[1]["with"]["python-version"] == "3.10"  # a string, not the float 3.1
    runs = [s.get("run") for s in steps if s.get("run")]
    assert runs == [source.pip_command, "pip install .", "python -m harness run",
                    "python -m harness check"]


@pytest.mark.parametrize(("files", "expected"), [
    ({}, False),
    ({"pyproject.toml": "[tool.ruff]\nline-length = 100\n"}, False),
    ({"pyproject.toml": '[project]\nname = "x"\n'}, True),
    ({"pyproject.toml": '[build-system]\nrequires = ["poetry-core"]\n'}, True),
    ({"setup.py": "from setuptools import setup\nsetup()\n"}, True),
    ({"setup.cfg": "[metadata]\nname = x\n"}, True),
])
def test_the_project_is_installed_only_when_there_is_one(
        tmp_path: Path, files: dict[str, str], expected: bool) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert has_installable_project(tmp_path) is expected
