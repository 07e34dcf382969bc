"""The recall index's word splitting is SQLite's unicode61 splitting, whatever the text."""

from __future__ import annotations

from importers.fuzzing import CASES, rng_for

from regista.store.extract import WORD, add_words

ALPHABET = "abcXYZ019 _-.,:/\\\"'→—é É ß ǅ 日本 ١٢ \t\n\x00😀İ"


def _reference(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def test_known_texts_split_as_the_reference() -> None:
    for text in [
        "     1→def refund(order):",
        "ORD-1042 Ünïcödé ÉCOLE straße",
        "snake_case camelCase x86_64 İstanbul",
        "",
        "日本語のテキスト and ascii",
    ]:
        got: set[str] = set()
        add_words(text, got)
        assert got == _reference(text), text


def test_random_texts_split_as_the_reference() -> None:
    rng = rng_for("add-words")
    for _ in range(CASES * 4):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))
        got: set[str] = set()
        add_words(text, got)
        assert got == _reference(text), repr(text)
