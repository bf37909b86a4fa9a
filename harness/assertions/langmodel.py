"""The ``language`` assertion's model: py3langid's, loaded once per process and cheaply.

py3langid ships its model as one xz-compressed npz (4.5 MB, 68 MB unpacked);
decompressing it costs about 0.6 s of CPU in every process that runs a
``language`` item, the largest single cost of an offline run of the committed
examples. So the first load unpacks the arrays once into a cache outside the
project (``$HARNESS_MODEL_CACHE``, else ``$XDG_CACHE_HOME/offline-evals``, else
``~/.cache/offline-evals``; ``%LOCALAPPDATA%`` on Windows), in a folder named by
py3langid's version and the sha256 of the model file, and every later load maps
those ``.npy`` files instead (about 20 ms: the DFA table is used in place, never
copied). The arrays are the wheel's own, byte for byte, so identification is
unchanged; a missing, partial or unreadable copy is rebuilt from the wheel, and
a cache that cannot be written (read-only home, ``HARNESS_MODEL_CACHE=off``)
only means the slow load. Nothing is fetched: the source is always the wheel.
"""

from __future__ import annotations

import copy
import hashlib
import os
import shutil
import sys
import tempfile
import threading
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["cache_folder", "full_identifier", "identifier_for"]

#: The arrays of a py3langid 0.4 model (``py3langid.modelio.save_model``).
_ARRAYS = ("ptc", "pc", "classes", "nextmove", "nextmove_row", "out_feat")
#: Set to a folder to keep the unpacked model there, or to ``off`` to keep none.
CACHE_ENV = "HARNESS_MODEL_CACHE"

_LOCK = threading.Lock()
#: The thread counts numpy's BLAS reads once, when it loads (OpenBLAS in the wheels, MKL).
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _numpy() -> Any:
    """numpy, imported by :func:`_load_numpy` (every use in this module goes through here)."""
    _load_numpy()
    import numpy

    return numpy


def _load_numpy() -> None:
    """Import numpy with its BLAS on one thread, unless numpy is already loaded or a thread
    count is set (the user's or the agent's choice stands).

    The model's arithmetic is one small vector-matrix product per text; a BLAS thread pool
    adds nothing to it, and OpenBLAS's idle threads spin after every product: in an offline
    run of the examples that was 0.05 s of CPU (15%) on two cores, never seen in the wall
    time, and more on a CI runner whose test processes already share the cores. The variables
    are put back as they were once numpy is loaded: nothing the agent starts inherits them.
    """
    if "numpy" in sys.modules:
        return
    unset = [name for name in _BLAS_THREADS if name not in os.environ]
    try:
        for name in unset:
            os.environ[name] = "1"
        import numpy  # noqa: F401  (loaded here, with the thread counts above)
    finally:
        for name in unset:
            os.environ.pop(name, None)


def _model_file() -> Path:
    _load_numpy()  # py3langid imports numpy
    from py3langid.langid import MODEL_DIR, MODEL_FILE  # type: ignore[import-untyped, import-not-found, unused-ignore]

    folder: Path = Path(MODEL_DIR)
    return folder / str(MODEL_FILE)


def _cache_root() -> Path | None:
    """Where unpacked models live, or ``None`` when the user turned the cache off."""
    chosen = os.environ.get(CACHE_ENV, "")
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(chosen)
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "offline-evals"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "offline-evals"


def cache_folder(model: Path | None = None) -> Path | None:
    """The folder of the unpacked copy of ``model`` (the wheel's by default): named by the
    package version and the file's hash, so an upgraded or patched model never reads an old
    copy. ``None`` when the cache is off."""
    root = _cache_root()
    if root is None:
        return None
    model = model or _model_file()
    digest = hashlib.sha256(model.read_bytes()).hexdigest()[:16]
    return root / f"py3langid-{_version()}-{digest}"


def _version() -> str:
    """py3langid's version: the package's own ``__version__`` (importlib.metadata scans the
    installed distributions for it, about 4 ms in every process), else its metadata."""
    _load_numpy()  # py3langid imports numpy
    import py3langid  # type: ignore[import-untyped, import-not-found, unused-ignore]

    found = getattr(py3langid, "__version__", None)
    return found if isinstance(found, str) and found else metadata.version("py3langid")


def _mapped(folder: Path) -> dict[str, Any] | None:
    """The arrays of an unpacked copy, memory-mapped; ``None`` if any is missing or broken."""
    np = _numpy()

    try:
        return {name: np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)
                for name in _ARRAYS}
    except (OSError, ValueError):
        return None


def _unpack(model: Path) -> dict[str, Any]:
    """The arrays of the compressed model, read the slow way (what py3langid does)."""
    import lzma

    np = _numpy()

    with lzma.open(model) as source, tempfile.TemporaryFile(suffix=".npz") as spool:
        shutil.copyfileobj(source, spool, length=1 << 20)
        spool.seek(0)
        with np.load(spool, allow_pickle=False) as data:
            missing = set(_ARRAYS).difference(data.files)
            if missing:
                raise ValueError(f"{model}: unsupported py3langid model layout, missing "
                                 f"{sorted(missing)}")
            return {name: np.asarray(data[name]) for name in _ARRAYS}


def _store(folder: Path, arrays: dict[str, Any]) -> None:
    """Write the unpacked copy: into a sibling temporary folder, then renamed into place,
    so a reader sees the whole copy or none (a concurrent writer's copy wins); a cache that
    cannot be written is left alone."""
    np = _numpy()

    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
    except OSError:  # no cache (read-only home, a file in the way): only the slow load
        return
    try:
        for name in _ARRAYS:
            np.save(staging / f"{name}.npy", arrays[name], allow_pickle=False)
        os.replace(staging, folder)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)


def _arrays() -> dict[str, Any]:
    """The model's arrays: mapped from the unpacked copy, made first if need be."""
    model = _model_file()
    try:
        folder = cache_folder(model)
    except OSError:
        folder = None
    if folder is not None:
        found = _mapped(folder) if folder.is_dir() else None
        if found is not None:
            return found
    arrays = _unpack(model)
    if folder is not None:
        if folder.is_dir():  # partial or broken: replaced
            shutil.rmtree(folder, ignore_errors=True)
        _store(folder, arrays)
    return arrays


@cache
def full_identifier() -> Any:
    """A py3langid ``LanguageIdentifier`` over every language of the model (loaded once)."""
    np = _numpy()
    from py3langid.langid import LanguageIdentifier  # type: ignore[import-untyped, import-not-found, unused-ignore]

    arrays = _arrays()
    # The DFA tables are walked one entry per byte: a memoryview indexes a mapped file in place
    # and gives Python ints, as the lists py3langid builds do, without copying 104,583 entries
    # of the output table into a list (the row table is iterated once, also from a view).
    return LanguageIdentifier(np.asarray(arrays["ptc"]), np.asarray(arrays["pc"]),
                              arrays["classes"].tolist(), memoryview(arrays["nextmove"]),
                              memoryview(arrays["out_feat"]), norm_probs=False,
                              tk_row=memoryview(arrays["nextmove_row"]))


@cache
def identifier_for(among: tuple[str, ...]) -> Any:
    """An identifier restricted to ``among`` (sorted codes); every set shares one model.

    A shallow copy of the full identifier, restricted by py3langid's own ``set_languages``
    (which rebinds the class columns and labels, never changes the arrays it was given): a
    second constructor call would shift every row offset of the DFA again (about 8 ms)."""
    with _LOCK:
        identifier = copy.copy(full_identifier())
        identifier.set_languages(list(among))
        return identifier
