"""benchmarks/per_tuple_floor.py: its floors do the word count's work, not less."""

from __future__ import annotations

import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from per_tuple_floor import floor_count, floor_split


def test_the_split_floor_emits_every_word_anchored_to_its_sentence() -> None:
    sentences = ["the cow jumped", "over the moon", "cow"]
    _, ((words, roots, edges),) = floor_split(sentences, random.Random(3), tasks=1)
    assert words == ["the", "cow", "jumped", "over", "the", "moon", "cow"]
    assert roots[0] == roots[1] == roots[2] != roots[3] == roots[4] == roots[5] != roots[6]
    assert len(set(edges)) == len(words)  # a fresh edge per emitted word


def test_the_split_floor_sends_each_word_to_the_task_its_fields_grouping_picks() -> None:
    words = [f"word{i}" for i in range(40)]
    _, targets = floor_split([" ".join(words)], random.Random(3), tasks=3)
    for task, (mine, _, _) in enumerate(targets):
        assert mine == [word for word in words if hash(word) % 3 == task]


def test_the_count_floor_counts_every_word_through_the_bolt() -> None:
    words = ["the", "cow", "jumped", "over", "the", "moon", "cow"]
    _, counts = floor_count(words, [1] * 3 + [2] * 3 + [3], list(range(7)))
    assert counts == Counter(words)
