"""Secrets guard: keys and personal data in datasets and cache fail, masked; fakes are allowlisted.

Token-shaped test values are assembled at run time, so this file itself never
holds a string a secret scanner would flag.
"""

from __future__ import annotations

import pytest
from check_support import check, healthy, messages

from conftest import Project
from harness.check.detectors import cnpj_ok, cpf_ok, detect, detect_lines, luhn_ok, mask, phone_ok

NOTES = "eval-datasets/helper/notes.md"

FOUND = [
    ("OpenAI API key", "sk-" + "proj-" + "Q3b9xT2mK8vL5nR1wZ7yP4aD6"),
    ("Anthropic API key", "sk-" + "ant-" + "api03-" + "h7Gk2Lm9Qw4Er6Ty8Ui0OpAs"),
    ("AWS access key id", "AKIA" + "Q7ZK3M2X9B4N6V8C"),
    ("AWS secret access key", "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYz1x2y3z4w5"),
    ("GitHub token", "gh" + "p_" + "7Hk2Lm9Qw4Er6Ty8Ui0OpAsDf3Gh5Jk1Zx2C"),
    ("Slack token", "xox" + "b-" + "2847561930-Zk8Qw3Er5Ty7"),
    ("bearer token", "Authorization: Bearer " + "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0"),
    ("private key block", "-----BEGIN " + "RSA PRIVATE KEY-----"),
    ("email address", "maria.silva@acme-corp.com.br"),
    ("phone number", "+55 11 91234-5678"),
    ("phone number", "(415) 867-2093"),
    ("card number", "4111 1111 1111 1111"),
    ("CPF", "529.982.247-25"),
    ("CNPJ", "11.222.333/0001-81"),
]

NOT_FOUND = [
    "4111 1111 1111 1112",               # fails Luhn
    "1234 5678 9012 3456",               # no issuer prefix
    "529.982.247-26",                    # CPF check digit wrong
    "111.111.111-11",                    # repeated digits
    "11.222.333/0001-82",                # CNPJ check digit wrong
    "someone@example.com",               # RFC 2606 reserved domain
    "logo@2x.png",                       # a file name
    "202-555-0143",                      # reserved fictional US number
    "2026-11-30T00:14:28Z",              # a timestamp
    "5ecadaf26b724ad73c3238192f29715e58e200752330336a9280f807cf68415a",  # a key
    "input_tokens: 2101, output_tokens: 131",
    "Bearer tokens are explained in the docs",
    "version 1.20.3 on 192.168.100.200",
]


@pytest.mark.parametrize(("kind", "value"), FOUND, ids=[f"{k}-{i}" for i, (k, _) in enumerate(FOUND)])
def test_each_kind_fails_naming_file_line_and_kind_without_the_value(
        project: Project, monkeypatch: pytest.MonkeyPatch, kind: str, value: str) -> None:
    healthy(project, monkeypatch)
    project.write(NOTES, f"# Notes\n\nSupport contact: {value}\n")
    outcome = project.run("check")
    assert outcome.code == 1
    assert f"[secrets] {NOTES}:3: {kind}: {kind} " in outcome.out
    secret = value.split(" = ")[-1].split("Bearer ")[-1]
    assert secret not in outcome.out
    assert "…(" in outcome.out


@pytest.mark.parametrize("text", NOT_FOUND)
def test_structured_near_misses_do_not_fire(text: str) -> None:
    assert detect(text) == []


def test_the_recorded_cache_is_scanned_too(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.scenario("helper/acme/leak", {"answer": "yes", "note": "mail joao.pereira@loja-real.com.br"})
    project.record("--scenario", "helper/acme/leak")
    found = messages(check(project), "secrets")
    assert len(found) == 2  # the script that answered, and the recorded payload
    assert found[0].startswith("[secrets] eval-datasets/helper/script.yaml:")
    assert found[1].startswith("[secrets] eval-cache/cache/helper/acme/leak/0/")
    assert "/contents.data:" in found[1] and "email address joao…(29 chars)" in found[1]


def test_values_glued_by_json_escapes_are_still_found(project: Project,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.write("eval-datasets/helper/acme/raw.json.txt", '{"content": "Hi!\\n+55 11 91234-5678\\nBye"}\n')
    found = messages(check(project), "secrets")
    assert len(found) == 1 and "phone number +55 …(17 chars) at column 19" in found[0]


def test_allowlist_literals_and_patterns_silence_deliberate_fakes(project: Project,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.write(NOTES, "Card 4111-1111-1111-1111\nCPF 529.982.247-25\nMail ana@demo-shop.com.br\n"
                         "Mail bob@demo-shop.com.br\n")
    assert len(messages(check(project), "secrets")) == 4
    project.write(".harness-allowlist", "# deliberate fakes of the demo tenant\n"
                                        "4111 1111 1111 1111\n529.982.247-25\n\n"
                                        r"regex:[a-z]+@demo-shop\.com\.br" "\n")
    result = check(project).of("secrets")
    assert result.ok, result.findings
    assert result.summary.endswith("4 allowlisted value(s)")


def test_the_allowlist_path_can_be_configured(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.write(NOTES, "Mail ana@demo-shop.com.br\n")
    project.write("pyproject.toml", '[project]\nname = "demo"\n[tool.harness]\n'
                                    'allowlist = "config/fakes.txt"\n')
    found = messages(check(project), "secrets")
    assert any("config/fakes.txt: the allowlist named by [tool.harness] allowlist does not exist" in f
               for f in found)
    project.write("config/fakes.txt", "ana@demo-shop.com.br\n")
    assert check(project).of("secrets").ok


def test_an_invalid_allowlist_pattern_fails_with_its_line(project: Project,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.write(".harness-allowlist", "# fakes\nregex:([unclosed\n")
    found = messages(check(project), "secrets")
    assert len(found) == 1 and found[0].startswith("[secrets] .harness-allowlist:2: invalid regex")


def test_check_digit_validators() -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert cpf_ok("52998224725") and not cpf_ok("52998224724") and not cpf_ok("00000000000")
    assert cnpj_ok("11222333000181") and not cnpj_ok("11222333000180")
    assert phone_ok("+55 11 91234-5678 2024") == "+55 11 91234-5678"  # trailing groups are trimmed
    assert mask("maria.silva@acme.com") == "mari…(20 chars)"


def test_a_whole_file_scan_finds_what_a_scan_of_each_line_finds() -> None:
    text = ("key: sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t\r\nBearer\n abcdefghij0123456789xyz\n"
            "aws_secret_access_key =\n" + "A1b2" * 10
            + "\ncall +55 11\u20289 8765 4321 or 4111 1111 1111 1111\n"
            "cpf 529.982.247-25, mail ana.souza@acme.com.br\x85AKIAABCDEFGHIJ012345\n")
    per_line = [(n, hit) for n, line in enumerate(text.splitlines(), start=1) for hit in detect(line)]
    assert per_line and detect_lines(text) == per_line
    assert not any(hit.kind == "bearer token" for _, hit in per_line)  # "Bearer" and its token are two lines
