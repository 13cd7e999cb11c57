"""Answer extraction and equivalence on real GSM8K golds and the shapes models write."""

from __future__ import annotations

from fractions import Fraction

import pytest

from contam.data import load_benchmark
from contam.probe.answers import answers_equal, extract_answer, extract_boxed, normalize_answer, parse_number


@pytest.mark.parametrize(
    "text,expected",
    [
        ("so 9 * 2 = 18. \\boxed{18}", "18"),
        ("\\boxed{\\frac{\\sqrt{2}}{2}} and later \\boxed{7}", "7"),
        ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("The final answer is: \\[ \\boxed{42", "42"),  # cut by the token limit
        ("The final answer is: \\[ \\boxed{42}\n\\]", "42"),
        ("Janet sells 9 eggs.\n#### 1,008", "1,008"),
        ("The answer is: 14.", "14"),
        ("Therefore, the final answer is 3.5 hours", "3.5 hours"),
        ("She has 3 apples, then 5, then 12 left", "12"),
        ("no number here", None),
        ("", None),
    ],
)
def test_extract_answer(text: str, expected: str | None) -> None:
    assert extract_answer(text) == expected


def test_extract_boxed_nested_and_none() -> None:
    assert extract_boxed("x \\boxed{a{b}c} y") == "a{b}c"
    assert extract_boxed("no box") is None
    assert extract_boxed("\\fbox{5}") == "5"


@pytest.mark.parametrize(
    "a,b",
    [
        ("18", "18"),
        ("\\$18.00", "18"),
        ("$1,234", "1234"),
        ("1,000,000", "1000000"),
        ("0.5", "\\frac{1}{2}"),
        ("\\dfrac{3}{4}", "0.75"),
        ("2 1/2", "2.5"),
        ("2\\frac{1}{2}", "5/2"),
        ("50%", "50"),
        ("50\\%", "50"),
        ("18 dollars", "18"),
        ("5 cm", "5"),
        ("x = 5", "5"),
        ("\\text{5 hours}", "5"),
        ("-3", "-3.0"),
        ("0.3333333", "1/3"),
        ("Paris", "paris."),
        ("\\text{B}", "b"),
    ],
)
def test_equal(a: str, b: str) -> None:
    assert answers_equal(a, b) and answers_equal(b, a)


@pytest.mark.parametrize("a,b", [("18", "17"), ("-3", "3"), ("3 and 4", "3"), ("0.33", "1/3"), ("", ""), (None, "3"), ("5", "five")])
def test_not_equal(a: str | None, b: str) -> None:
    assert not answers_equal(a, b)


def test_parse_number_values() -> None:
    assert parse_number("1,234.50") == Fraction(2469, 2)
    assert parse_number("-7") == -7
    assert parse_number("3/0") is None
    assert parse_number("twelve") is None
    assert normalize_answer("\\left( 3 \\right)") == "( 3 )"


def test_every_gsm8k_gold_parses_and_matches_its_boxed_form() -> None:
    items = load_benchmark("gsm8k")
    for it in items:
        v = parse_number(it.answer)
        assert v is not None, it.id
        # the gold, written as a model would box it with a thousands separator, must grade correct
        boxed = f"The final answer is: \\[ \\boxed{{{int(v):,}}}" if v.denominator == 1 else f"\\boxed{{{it.answer}}}"
        assert answers_equal(extract_answer(boxed), it.answer), it.id
        # and the worked solution's own '#### N' line extracts to the gold
        assert answers_equal(extract_answer(it.solution), it.answer), it.id
