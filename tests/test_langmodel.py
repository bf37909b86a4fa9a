"""The language model's unpacked copy (harness/assertions/langmodel.py).

The copy must hold the wheel's arrays byte for byte (so identification cannot
change), be found again by the next process, be rebuilt when broken, and never
be written when the user turned it off.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from py3langid.langid import MODEL_FILE, LanguageIdentifier
from py3langid.modelio import expand_nextmove, load_model

from harness.assertions import langmodel

TEXTS = {
    "pt": "Sua viagem está reservada por três noites, com café da manhã incluído.",
    "en": "Your trip is booked for three nights, breakfast included.",
    "es": "Su viaje está reservado por tres noches, con el desayuno incluido.",
    "fr": "Votre voyage est réservé pour trois nuits, petit déjeuner compris.",
    "de": "Ihre Reise ist für drei Nächte gebucht, Frühstück inklusive.",
}


def _in_a_child(script: str, languages: object) -> Any:
    """What ``script`` prints as JSON, run in a fresh process (the copy is mapped there, not
    built) with the languages and :data:`TEXTS` as its two JSON arguments."""
    done = subprocess.run([sys.executable, "-c", script, json.dumps(languages),
                           json.dumps(list(TEXTS.values()))],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.fixture
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "models"
    monkeypatch.setenv(langmodel.CACHE_ENV, str(root))
    return root


def test_the_first_load_writes_the_wheels_arrays_and_the_next_maps_them(cache_root: Path) -> None:
    unpacked = langmodel._arrays()
    assert not isinstance(unpacked["nextmove"], np.memmap)  # made from the wheel
    folder = langmodel.cache_folder()
    assert folder is not None and folder.parent == cache_root
    assert folder.name.startswith("py3langid-0.")
    from importlib import metadata  # the package's __version__ names it, as its metadata would

    assert folder.name.startswith(f"py3langid-{metadata.version('py3langid')}-")
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{n}.npy" for n in langmodel._ARRAYS)
    mapped = langmodel._arrays()
    assert isinstance(mapped["nextmove"], np.memmap)
    ptc, pc, classes, nextmove, row, output = load_model(
        Path(sys.modules["py3langid.langid"].__file__).parent / MODEL_FILE)
    assert np.array_equal(mapped["ptc"], ptc) and np.array_equal(mapped["pc"], pc)
    assert mapped["classes"].tolist() == classes
    assert bytes(memoryview(mapped["nextmove"])) == bytes(nextmove)
    assert mapped["nextmove_row"].tolist() == list(row)
    assert mapped["out_feat"].tolist() == output
    assert expand_nextmove(mapped["nextmove"], mapped["nextmove_row"]) == expand_nextmove(
        nextmove, row)


def test_identification_from_the_copy_is_the_wheels(cache_root: Path) -> None:
    langmodel._arrays()  # the copy exists; the child maps it
    among = sorted(TEXTS)
    reference = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
    reference.set_languages(among)
    script = (
        "import json, sys\n"
        "from harness.assertions import langmodel\n"
        "ident = langmodel.identifier_for(tuple(json.loads(sys.argv[1])))\n"
        "assert type(ident.tk_nextmove) is memoryview, type(ident.tk_nextmove)\n"
        "print(json.dumps([list(ident.classify(t)) for t in json.loads(sys.argv[2])]))\n"
    )
    found = _in_a_child(script, among)
    assert found == [list(reference.classify(t)) for t in TEXTS.values()]
    assert [language for language, _ in found] == list(TEXTS)


def test_every_candidate_set_of_one_process_identifies_as_the_wheel(cache_root: Path) -> None:
    """The sets share one model (each a shallow copy of the full identifier): restricting one
    leaves the full identifier and every other set as py3langid's own would be."""
    langmodel._arrays()
    sets = [sorted(TEXTS), ["de", "en"], sorted({"pt", "es", "it", "fr"})]
    script = (
        "import json, sys\n"
        "from harness.assertions import langmodel\n"
        "texts = json.loads(sys.argv[2])\n"
        "found = [[list(langmodel.identifier_for(tuple(s)).classify(t)) for t in texts]\n"
        "         for s in json.loads(sys.argv[1])]\n"
        "full = langmodel.full_identifier()\n"
        "found.append([len(full.nb_classes)] + [list(full.classify(t)) for t in texts])\n"
        "print(json.dumps(found))\n"
    )
    found = _in_a_child(script, sets)
    for among, got in zip(sets, found, strict=False):
        reference = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
        reference.set_languages(among)
        assert got == [list(reference.classify(t)) for t in TEXTS.values()], among
    whole = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
    assert found[-1] == [len(whole.nb_classes)] + [list(whole.classify(t)) for t in TEXTS.values()]


def test_a_broken_copy_is_rebuilt(cache_root: Path) -> None:
    langmodel._arrays()
    folder = langmodel.cache_folder()
    assert folder is not None
    broken = folder / "nextmove.npy"
    broken.write_bytes(broken.read_bytes()[:1000])  # an interrupted copy, a full disk
    again = langmodel._arrays()
    assert not isinstance(again["nextmove"], np.memmap)  # read from the wheel, not the stump
    assert isinstance(langmodel._arrays()["nextmove"], np.memmap)
    assert broken.stat().st_size > 30_000_000


def test_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(langmodel.CACHE_ENV, "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert langmodel.cache_folder() is None
    arrays = langmodel._arrays()
    assert arrays["classes"].size == 142
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_cache_only_means_the_slow_load(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv(langmodel.CACHE_ENV, str(blocker / "models"))
    arrays = langmodel._arrays()
    assert arrays["classes"].size == 142
    assert blocker.read_text(encoding="utf-8") == "not a folder"


_THREADS = r"""
import json, os, sys
from harness.assertions import langmodel
langmodel.identifier_for(("en", "pt")).classify("Qual delas você prefere para a entrega?")
names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
print(json.dumps({"threads": len(names), "env": os.environ.get("OPENBLAS_NUM_THREADS")}))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or (os.cpu_count() or 1) < 2,
                    reason="counts the process's threads in /proc, on a machine of 2 cores or more")
@pytest.mark.parametrize("given", [None, "2"])
def test_the_model_loads_numpy_with_one_blas_thread_unless_told_otherwise(
        given: str | None, tmp_path: Path) -> None:
    """OpenBLAS's idle threads spin after each of the model's tiny products: 0.05 s of CPU in
    an offline run of the examples (19 identifications), none of it useful. numpy is loaded
    with one BLAS thread and the variable is put back (nothing the agent starts inherits it);
    a thread count the user set stands."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    env["HARNESS_MODEL_CACHE"] = str(tmp_path)
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run([sys.executable, "-c", _THREADS], capture_output=True, text=True,
                          env=env, check=True, timeout=120)
    found = json.loads(done.stdout)
    assert found == {"threads": 1 if given is None else int(given), "env": given}
