"""The sensitive-data guard: secrets in Chinese and English are found, ordinary text is not."""

from __future__ import annotations

import pytest

from memory.base.guards import (
    REDACTED,
    china_id_valid,
    luhn_valid,
    mask,
    scan,
    secrets_in,
    ssn_valid,
    taiwan_id_valid,
)


def _cn_id(body: str) -> str:
    """Append the ISO 7064 check digit, computed independently of the module's table."""
    weights = [2 ** (17 - i) % 11 for i in range(17)]
    total = sum(int(c) * w for c, w in zip(body, weights, strict=True))
    return body + "10X98765432"[total % 11]


CN_ID = _cn_id("11010519900307123")
FAKE_OPENAI = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"
FAKE_GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
FAKE_SLACK = "xoxb-" + "1234567890-abcdefghij"


@pytest.mark.parametrize(
    ("text", "kind", "secret"),
    [
        ("我的密碼是 hunter22", "password", "hunter22"),
        ("wifi密碼：Qw3rty!9", "password", "Qw3rty!9"),
        ("my password is hunter22", "password", "hunter22"),
        ("Password: S3cret-Pass", "password", "S3cret-Pass"),
        ("pwd=abc12345 記一下", "password", "abc12345"),
        ("信用卡號 4111 1111 1111 1111 記住", "card_number", "4111 1111 1111 1111"),
        ("my card is 5500-0000-0000-0004", "card_number", "5500-0000-0000-0004"),
        ("卡號4012888888881881", "card_number", "4012888888881881"),
        (f"這是我的 key {FAKE_OPENAI}", "api_key", FAKE_OPENAI),
        (f"github token {FAKE_GITHUB}", "api_key", FAKE_GITHUB),
        ("AWS key AKIAIOSFODNN7EXAMPLE ok", "api_key", "AKIAIOSFODNN7EXAMPLE"),
        (f"slack {FAKE_SLACK}", "api_key", FAKE_SLACK),
        ("api key: 3f9a8b7c6d5e4f3a2b1c", "api_key", "3f9a8b7c6d5e4f3a2b1c"),
        ("金鑰是 Zx81Qp02Lm73Nb64Vc55", "api_key", "Zx81Qp02Lm73Nb64Vc55"),
        ("身分證字號 A123456789", "national_id", "A123456789"),
        ("我的身分證是A123456789喔", "national_id", "A123456789"),
        (f"身份证 {CN_ID}", "national_id", CN_ID),
        ("SSN 123-45-6789", "national_id", "123-45-6789"),
        ("social security number is 123456789", "national_id", "123456789"),
        ("卡片背面安全碼 123", "card_security_code", "123"),
    ],
)
def test_secret_is_found_with_its_kind(text: str, kind: str, secret: str) -> None:
    findings = scan(text)
    assert [(f.kind, text[f.start : f.end]) for f in findings] == [(kind, secret)]
    assert secret not in mask(text)
    assert REDACTED in mask(text)


def test_private_key_block_is_found_whole() -> None:
    text = (
        "備份這個：\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----\n謝謝"
    )
    [finding] = scan(text)
    assert finding.kind == "private_key"
    assert mask(text) == f"備份這個：\n{REDACTED}\n謝謝"


@pytest.mark.parametrize(
    "text",
    [
        "我喜歡喝咖啡，不加糖",
        "I forgot my password again, remind me to reset it",
        "the password is required for login",
        "密碼要每三個月更換一次",
        "密碼是多少？",
        "我的手機是 0912-345-678",
        "訂單編號 20240101123456",
        "會議在 2026-11-22 10:00",
        "4111 1111 1111 1112 is not a valid card",
        "A123456788 是錯的身分證",
        "we use a token bucket algorithm for rate limiting",
        "SSN format is 000-12-3456",
        "專案 API key 要放在 vault 裡",
        "spin is fun; I like to pin is not a thing",
    ],
)
def test_ordinary_text_is_not_flagged(text: str) -> None:
    assert scan(text) == []
    assert mask(text) == text


def test_several_secrets_are_all_found_and_masked() -> None:
    text = f"密碼：abc12345，卡號 4111111111111111，key {FAKE_OPENAI}"
    kinds = [f.kind for f in scan(text)]
    assert kinds == ["password", "card_number", "api_key"]
    masked = mask(text)
    for secret in ("abc12345", "4111111111111111", FAKE_OPENAI):
        assert secret not in masked


def test_checksums() -> None:
    assert luhn_valid("4111111111111111")
    assert not luhn_valid("4111111111111112")
    assert taiwan_id_valid("A123456789")
    assert not taiwan_id_valid("A123456780")
    assert china_id_valid(CN_ID)
    wrong = CN_ID[:-1] + ("0" if CN_ID[-1] != "0" else "1")
    assert not china_id_valid(wrong)
    assert ssn_valid("123-45-6789")
    assert not ssn_valid("666-45-6789")
    assert not ssn_valid("123-00-6789")


def test_a_known_secret_is_masked_in_any_grouping_of_its_digits() -> None:
    # The user said "PIN 1 2 3 4"; a model's summary writes it as 1234, or 12-34.
    known = secrets_in("my PIN is 1 2 3 4")
    assert known == {"1 2 3 4"}
    for echo in ("PIN noted: 1234", "it is 12-34", "the code 1 2 3 4 works"):
        assert "1" not in mask(echo, known).replace(REDACTED, ""), echo
