"""Real installs for the adoption tests: a wheelhouse, fresh virtualenvs, an offline pip.

The wheelhouse is built once per session (this is the only step that may reach
the package index: it builds the harness wheel from a copy of this checkout and
fetches the dependency wheels). Every install after that is
``pip --no-index --find-links <wheelhouse>`` with the machine's pip configuration
switched off and every proxy pointing at a closed port, so an install or a
command that tried the network would fail instead of quietly succeeding.
"""

from __future__ import annotations

import ensurepip
import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no shared lock, each xdist worker builds its own wheelhouse
    fcntl = None  # type: ignore[assignment]

#: The checkout (not conftest's, so CI can build the wheelhouse as a script, before the
#: harness is installed: ``python tests/adoption_support.py FOLDER``).
REPO_ROOT = Path(__file__).resolve().parent.parent
#: A folder where CI built the wheelhouse beside its first step (.ci/run); used when it holds
#: one for the current source, otherwise the session builds its own as ever.
PREBUILT = "HARNESS_TEST_WHEELHOUSES"

#: What the wheelhouse holds besides the harness and its dependencies: a build backend for
#: the adopter's own project and the test runner of its unit tests.
EXTRA_WHEELS = ("setuptools>=77", "wheel", "pytest", "openai", "anthropic")
#: The agent frameworks the README names, on those SDKs (tests/test_adoption_frameworks_e2e.py).
FRAMEWORK_WHEELS = ("langchain-openai", "langchain-anthropic", "pydantic-ai-slim[openai,anthropic]",
                    "openai-agents", "litellm")
_SOURCE = ("pyproject.toml", "setup.py", "README.md", "harness", "docs")
#: A proxy nobody listens on: any network attempt fails fast and visibly.
_DEAD_PROXY = "http://127.0.0.1:9"


def copy_source(dest: Path) -> Path:
    """The files a build of the harness reads, without caches, results or the venv."""
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in _SOURCE:
        source = REPO_ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=ignore)
        else:
            shutil.copy2(source, dest / name)
    return dest


def build_wheelhouse(dest: Path) -> Path:
    """A folder of wheels: the harness (built from a copy of this checkout) and everything it and
    the adopter's project need, so every later install can run with ``--no-index``."""
    source = copy_source(dest.parent / "harness-source")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_NO_INDEX")}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(dest),
                    str(source), *EXTRA_WHEELS, *FRAMEWORK_WHEELS], env=env, check=True,
                   capture_output=True,
                   text=True, timeout=600)
    return dest


def source_digest() -> str:
    """sha256 over the names and bytes of every file a build of the harness reads (the files
    :func:`copy_source` copies): the key of a shared wheelhouse, so a changed file never reuses
    a wheel built from the old one (nor a wheelhouse of another list of wheels)."""
    digest = hashlib.sha256("\0".join((*EXTRA_WHEELS, *FRAMEWORK_WHEELS)).encode())
    for name in _SOURCE:
        source = REPO_ROOT / name
        files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
        for path in files:
            relative = path.relative_to(REPO_ROOT)
            if "__pycache__" in relative.parts or path.suffix == ".pyc" or any(
                    part.endswith(".egg-info") for part in relative.parts):
                continue
            digest.update(relative.as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def shared_wheelhouse(session_root: Path) -> Path:
    """The wheelhouse of this pytest session, built by whichever xdist worker asks first.

    ``session_root`` is the folder every worker of one session shares (the parent of each
    worker's own temp base). An exclusive file lock makes the others wait for the build
    instead of building it again (it is the slowest set-up of the suite: a wheel build and a
    download of the SDK stacks); the folder is named by :func:`source_digest` and counted as
    built only once its marker file exists, so a build that failed half way is redone.
    """
    folder = session_root / f"wheelhouse-{source_digest()[:16]}"
    wheels, done = folder / "wheels", folder / "built"
    if fcntl is None:
        return build_wheelhouse(session_root / f"wheelhouse-{os.getpid()}" / "wheels")
    session_root.mkdir(parents=True, exist_ok=True)
    with open(session_root / f"{folder.name}.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            build_wheelhouse(wheels)
            done.write_text("complete\n", encoding="utf-8")
    return wheels


def session_wheelhouse(session_root: Path) -> Path:
    """The wheelhouse the adoption tests use: in the folder :data:`PREBUILT` names when it is
    set (CI started the build there while it installed the project; a build still under way
    is waited for through the lock, one for older sources is never used: the folder is named
    by the source digest), else in ``session_root``."""
    prebuilt = os.environ.get(PREBUILT)
    return shared_wheelhouse(Path(prebuilt) if prebuilt else session_root)


def harness_wheel(wheelhouse: Path) -> Path:
    (wheel,) = wheelhouse.glob("offline_evals-*.whl")
    return wheel


@dataclass(frozen=True)
class Venv:
    """A fresh virtualenv and the offline environment its commands run in."""

    root: Path
    wheelhouse: Path

    @property
    def bin(self) -> Path:
        return self.root / ("Scripts" if os.name == "nt" else "bin")

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def env(self) -> dict[str, str]:
        """What an activated venv on an offline CI runner sees: pip reads only the wheelhouse."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PIP_", "PYTHON", "PYTEST_", "VIRTUAL_ENV"))}
        env.update({
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            "VIRTUAL_ENV": str(self.root),
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(self.wheelhouse),
            "PIP_CONFIG_FILE": os.devnull,  # no machine-wide index, find-links or constraints
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            # no byte-compiling of every installed file (the SDK stacks are thousands of
            # modules, most never imported): the interpreter compiles what a step imports, on
            # first import, as it would anyway; what gets installed is the same
            "PIP_NO_COMPILE": "1",
            "HTTP_PROXY": _DEAD_PROXY, "HTTPS_PROXY": _DEAD_PROXY, "ALL_PROXY": _DEAD_PROXY,
            "http_proxy": _DEAD_PROXY, "https_proxy": _DEAD_PROXY, "all_proxy": _DEAD_PROXY,
            "NO_PROXY": "", "no_proxy": "",
        })
        return env

    def run(self, *args: str | Path, cwd: Path | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """A command with this venv first on PATH (``pip``, ``python``, ``harness``)."""
        return subprocess.run([str(a) for a in args], cwd=cwd, env=self.env(), capture_output=True,
                              text=True, timeout=timeout, check=False)

    def shell(self, script: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """A workflow ``run:`` step, as GitHub's default shell runs it (``bash -e``)."""
        return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                              cwd=cwd, env=self.env(), capture_output=True, text=True,
                              timeout=timeout, check=False)


def _bundled_pip() -> Path | None:
    """The folder of the pip wheel ``ensurepip`` would install, if this Python ships one."""
    folder = Path(ensurepip.__file__).parent / "_bundled"
    return folder if any(folder.glob("pip-*.whl")) else None


def make_venv(path: Path, wheelhouse: Path) -> Venv:
    """A fresh virtualenv holding pip and nothing else.

    ``python -m venv`` runs ``ensurepip``, which on 3.11 also installs setuptools and compiles
    both (about 5 s of CPU per venv, four per adoption run); here the venv is made without pip
    and the same bundled pip wheel is installed into it, offline, by this interpreter's pip
    (about 1.5 s). What the test then sees is what ``python3.12 -m venv`` gives: the bundled
    pip, no setuptools (a build backend comes from the wheelhouse, into pip's isolated build
    environment, as on any runner). A Python without a bundled wheel gets ``python -m venv``."""
    bundled = _bundled_pip()
    if bundled is None:
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, capture_output=True,
                       timeout=300)
        return Venv(path, wheelhouse)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True,
                   capture_output=True, timeout=300)
    venv = Venv(path, wheelhouse)
    ok(subprocess.run([sys.executable, "-m", "pip", "--python", str(venv.python), "install",
                       "--quiet", "--no-index", "--find-links", str(bundled), "pip"],
                      env={**venv.env(), "PIP_FIND_LINKS": str(bundled)}, capture_output=True,
                      text=True, timeout=300, check=False))
    return venv


def ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """``done``, or a failure that shows the command's whole output."""
    assert done.returncode == 0, f"{done.args}\nexit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Adopter", "GIT_AUTHOR_EMAIL": "adopter@example.invalid",
           "GIT_COMMITTER_NAME": "Adopter", "GIT_COMMITTER_EMAIL": "adopter@example.invalid"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=True, timeout=120)
    return done.stdout.strip()


if __name__ == "__main__":
    print(shared_wheelhouse(Path(sys.argv[1])))
