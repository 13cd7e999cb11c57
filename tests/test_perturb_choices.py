"""Multiple-choice variants on real MMLU items: permutation moves the gold letter, masking hides a wrong option."""

from __future__ import annotations

import pytest

from contam.data import Item, load_benchmark
from contam.errors import InputError
from contam.perturb import make_variant_set, mask_option, permute
from contam.perturb.choices import pinned_options


@pytest.fixture(scope="module")
def mmlu() -> list[Item]:
    return load_benchmark("mmlu")[:60]


def test_permutation_moves_gold_and_keeps_content(mmlu: list[Item]) -> None:
    for item in mmlu:
        if ord(item.answer) - 65 in pinned_options(item):
            continue  # refused: see test_options_that_refer_to_others_keep_their_place
        for i in range(3):
            v = permute(item, seed=0, index=i)
            gold_text = item.choices[ord(item.answer) - 65]
            assert v.answer != item.answer
            assert v.choices[ord(v.answer) - 65] == gold_text
            assert sorted(v.choices) == sorted(item.choices)
            assert permute(item, seed=0, index=i) == v  # deterministic


def test_mask_hides_a_wrong_option(mmlu: list[Item]) -> None:
    for item in mmlu:
        v = mask_option(item, seed=1)
        letter = v.metadata["masked_letter"]
        assert letter != item.answer
        assert v.answer == item.choices[ord(letter) - 65]
        assert v.choices[ord(letter) - 65] == "[MASK]" and "[MASK]" in v.question


def test_auto_kind_uses_permutation(mmlu: list[Item]) -> None:
    ok = [it for it in mmlu if ord(it.answer) - 65 not in pinned_options(it)][:10]
    ref = make_variant_set(ok, variants=2, seed=0)
    assert len(ref) == 20 and {v.kind for v in ref} == {"permute"}


def test_permutation_moves_only_the_gold_letter(mmlu: list[Item]) -> None:
    """Issue 16: a permutation changes nothing a reader sees but the order of the options: the
    question is the same string, every option text is the same string, the gold text sits under
    the new letter, and options that point at others keep their place."""
    items = load_benchmark("mmlu")
    checked = refused = 0
    for item in items:
        pins = pinned_options(item)
        gold = ord(item.answer) - 65
        if gold in pins:
            with pytest.raises(InputError, match="refers to other options"):
                permute(item, seed=4)
            refused += 1
            continue
        v = permute(item, seed=4)
        assert v.question == item.question
        assert sorted(v.choices) == sorted(item.choices) and v.choices[ord(v.answer) - 65] == item.choices[gold]
        assert v.answer != item.answer
        for p in pins:  # "All of the above", "Both (a) and (b)" stay where they pointed from
            assert v.choices[p] == item.choices[p]
        checked += 1
    assert checked > 700 and refused >= 1
    # A real item whose options refer to others: "Neither (a) nor (b)." and " Both (a) and (b)." stay put.
    it = next(x for x in items if any("Both (a) and (b)" in c for c in x.choices) and ord(x.answer) - 65 not in pinned_options(x))
    v = permute(it, seed=0)
    assert [v.choices[p] for p in pinned_options(it)] == [it.choices[p] for p in pinned_options(it)]


def test_masked_option_keeps_the_question_intact(mmlu: list[Item]) -> None:
    for item in mmlu:
        v = mask_option(item, seed=2)
        k = ord(v.metadata["masked_letter"]) - 65
        assert item.question in v.question  # the question itself, verbatim
        assert all(c == item.choices[i] for i, c in enumerate(v.choices) if i != k)  # other options untouched, in place
        assert v.answer == item.choices[k] and k != ord(item.answer) - 65


def test_bad_answer_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="answer"):
        permute(Item(id="bad", question="q", answer="Z", choices=("a", "b")))
