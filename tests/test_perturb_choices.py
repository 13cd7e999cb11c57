"""Multiple-choice variants on real MMLU items: permutation moves the gold letter, masking hides a wrong option."""

from __future__ import annotations

import pytest

from contam.data import Item, load_benchmark
from contam.errors import InputError
from contam.perturb import make_reference_set, mask_option, permute


@pytest.fixture(scope="module")
def mmlu() -> list[Item]:
    return load_benchmark("mmlu")[:60]


def test_permutation_moves_gold_and_keeps_content(mmlu: list[Item]) -> None:
    for item in mmlu:
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
    ref = make_reference_set(mmlu[:10], variants=2, seed=0)
    assert len(ref) == 20 and {v.kind for v in ref} == {"permute"}


def test_bad_answer_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="answer"):
        permute(Item(id="bad", question="q", answer="Z", choices=("a", "b")))
