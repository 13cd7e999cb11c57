"""Symbol-replaced rewrites (a key term swapped for a stand-in word, defined in a quoted preamble, as
MMLU-SR builds them): the definitions are removed before the semantic level compares, and the flag
says so."""

from __future__ import annotations

import numpy as np
import pytest

from contam.data import load_benchmark
from contam.scan.definitions import strip_definitions
from contam.scan.semantic import SemanticConfig, SemanticScanner


@pytest.fixture(scope="module")
def mmlu() -> tuple[list, SemanticScanner]:
    items = load_benchmark("mmlu")
    return items, SemanticScanner(SemanticConfig()).fit(items)


def test_each_quoted_definition_is_removed_wherever_it_stands() -> None:
    text = (
        "Suppose 'Dragon' means 'The highest power of the variable.'Suppose 'Cat' means 'A larger field.'"
        "Find the Dragon for the given Cat Q(sqrt(2)) over Q.\nA. 0\nB. Suppose 'Dog' means 'opposite in effect' zero has no Dog"
    )
    out, n = strip_definitions(text)
    assert n == 3
    assert out == "Find the Dragon for the given Cat Q(sqrt(2)) over Q.\nA. 0\nB. zero has no Dog"


def test_an_apostrophe_inside_a_meaning_does_not_end_it() -> None:
    out, n = strip_definitions("Suppose 'King' means \"the Hindu goddess's consort\" Where was King born?")
    assert (out, n) == ("Where was King born?", 1)
    out, n = strip_definitions("Suppose 'Ball' means 'a goddess's shrine in one place' Where was Ball built?")
    assert (out, n) == ("Where was Ball built?", 1)


@pytest.mark.parametrize(
    "text",
    [
        "Let x denote the number of apples; this means 'more'.",
        'The word "spin" means "to turn" in physics.',  # unquoted end of sentence: a definition in prose is left alone
        "Suppose x means the price. How much is 2x?",
        "",
        "José's café — ‘quoted’ — and 12 means nothing.",
    ],
)
def test_prose_without_a_quoted_definition_is_untouched(text: str) -> None:
    assert strip_definitions(text) == (text, 0)


def test_no_shipped_benchmark_item_reads_as_a_definition() -> None:
    for name in ("gsm8k", "gsm8k-train", "mmlu", "humaneval"):
        assert not [it.id for it in load_benchmark(name) if strip_definitions(it.text)[1]], name


def test_a_symbol_replaced_rewrite_is_found_and_its_flag_says_the_definitions_were_set_aside(mmlu: tuple[list, SemanticScanner]) -> None:
    items, sem = mmlu
    by_id = {it.id: it for it in items}
    src = by_id["mmlu/sociology/178"]
    # The recipe of MMLU-SR, written here by hand: the key term swapped for an unrelated word.
    body = src.text.replace("family unit", "Lantern")
    assert body != src.text
    rewrite = "Suppose 'Lantern' means 'a group of people related by blood or marriage living together.' " + body
    s = sem.score([rewrite])
    assert s.definitions is not None and int(s.definitions[0]) == 1
    assert items[int(s.nearest[0, 0])].id == src.id
    whole = float(sem.embed([rewrite])[0] @ sem.embed([src.text])[0])
    assert s.sim[0] > whole  # the definition pulled the whole text away from its item
    flag = sem.flag("d1", 0, s, text=rewrite)
    kinds = {e.kind: e for e in flag.evidence}
    assert "definitions" in kinds and "1 quoted term definition" in kinds["definitions"].text
    assert flag.scores["definitions_removed"] == 1.0


def test_questions_that_share_a_passage_are_told_apart_by_the_rest_of_the_text(mmlu: tuple[list, SemanticScanner]) -> None:
    # 59 groups of MMLU items share their first 512 characters (one history passage, several
    # questions): their embedded views are identical, so the cosine ties and the text decides.
    items, sem = mmlu
    group = [it for it in items if "Great Nation of Futurity" in it.question]
    assert len(group) >= 3 and len({it.question[:512] for it in group}) == 1
    s = sem.score([it.text for it in group])
    assert np.all(s.nearest_sim[:, 0] - s.nearest_sim[:, 1] < 1e-6)  # the tie is real
    assert [items[int(j)].id for j in s.nearest[:, 0]] == [it.id for it in group]
