"""The semantic level's anomaly fit is cached (issue 31: a fixed ~5 CPU-s per scan) without
changing a number, and the number-word reading of far rephrasings (issue 30)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from contam.scan.anomaly import ProfileOutlier
from contam.scan.combiner import text_features
from contam.scan.textmatch import number_recall, spelled_numbers


def _profiles(n: int = 300, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sort(rng.uniform(0.1, 0.6, size=(n, 6)), axis=1)[:, ::-1]


def _rows(home: Path) -> int:
    db = sqlite3.connect(str(home / "embeddings.sqlite"))
    try:
        return db.execute("SELECT COUNT(*) FROM fitted").fetchone()[0]
    finally:
        db.close()


def test_a_cached_fit_gives_the_fresh_fits_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTAM_HOME", str(tmp_path))
    monkeypatch.delenv("CONTAM_EMBED_CACHE", raising=False)
    prof = _profiles()
    fresh = ProfileOutlier().fit(prof, cache=False)
    first = ProfileOutlier().fit(prof)  # fits and stores
    assert _rows(tmp_path) == 1
    again = ProfileOutlier().fit(prof)  # reads back
    probe = _profiles(50, seed=2)
    assert np.array_equal(fresh.distance(probe), again.distance(probe))
    assert np.array_equal(first.distance(probe), again.distance(probe)) and again.cutoff == fresh.cutoff
    # other settings or other profiles are another key
    ProfileOutlier(pca_components=2).fit(prof)
    ProfileOutlier().fit(prof[:-1])
    assert _rows(tmp_path) == 3


def test_a_damaged_entry_is_refitted_and_the_switch_turns_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTAM_HOME", str(tmp_path))
    monkeypatch.delenv("CONTAM_EMBED_CACHE", raising=False)
    prof = _profiles()
    want = ProfileOutlier().fit(prof, cache=False).distance(prof)
    ProfileOutlier().fit(prof)
    db = sqlite3.connect(str(tmp_path / "embeddings.sqlite"))
    db.execute("UPDATE fitted SET v = ?", (b"not an npz",))
    db.commit()
    db.close()
    assert np.array_equal(ProfileOutlier().fit(prof).distance(prof), want)
    other = tmp_path / "off"
    monkeypatch.setenv("CONTAM_HOME", str(other))
    monkeypatch.setenv("CONTAM_EMBED_CACHE", "0")
    assert np.array_equal(ProfileOutlier().fit(prof).distance(prof), want)
    assert not other.exists()


def test_too_few_profiles_flag_nothing() -> None:
    model = ProfileOutlier().fit(_profiles(5), cache=False)
    assert not model.fitted and model.cutoff == float("inf")
    assert model.distance(_profiles(3)).tolist() == [0.0, 0.0, 0.0]


def test_numbers_written_in_words_meet_their_digits() -> None:
    # GSM8K test/96 and MathCheck-GSM's GPT-4 rewrite of it (other people's text): "2/3" is "two-thirds"
    item = "Harry slept 9 hours last night. His friend James slept only 2/3 of what Harry slept. How many more hours did Harry sleep than James?"
    rewrite = (
        "Last night, Harry managed to get 9 hours of sleep. His buddy, James, however, could only sleep for "
        "two-thirds the duration Harry did. What is the difference in sleeping hours between Harry and James?"
    )
    assert number_recall(rewrite, [item]) == 1.0
    assert text_features(rewrite, [item])[1] == 0.5  # was -0.17: only the 9 matched
    assert spelled_numbers("Toulouse has double the sheep; Charleston has fourfold, a dozen or one-third.") == {"2", "4", "12", "1", "3"}
    # a lone "one" is a pronoun as often as a number; ordinary words are no numbers
    assert spelled_numbers("No one knows which one is tenth or often wonderful.") == frozenset()
