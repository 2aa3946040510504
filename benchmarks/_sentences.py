"""Deterministic synthetic sentences for word-count benchmarks.

Every benchmark (sparkstorm topologies and the reference implementations in
``_references.py``) must count *the same* input, so the vocabulary and the
sentences are derived only from fixed seeds: no files, no network, no clock.
"""

from __future__ import annotations

import random

VOCABULARY_SIZE = 1000
VOCABULARY_SEED = 20240601
MIN_WORDS = 5
MAX_WORDS = 12

_CONSONANTS = "bcdfghjklmnprstvwz"
_VOWELS = "aeiou"


def _pseudo_word(rng: random.Random) -> str:
    """One pronounceable word of 2-4 consonant-vowel syllables.

    Pronounceable words keep benchmark output readable when counts are printed.
    """
    syllables = rng.randint(2, 4)
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(syllables))


def _make_vocabulary(size: int = VOCABULARY_SIZE, seed: int = VOCABULARY_SEED) -> tuple[str, ...]:
    """Build ``size`` distinct pseudo-words from a seeded RNG.

    Distinctness matters: duplicates would silently shrink the key space and make
    the number of distinct counted keys differ from ``len(WORDS)``.
    """
    rng = random.Random(seed)
    seen: dict[str, None] = {}  # insertion-ordered set -> stable order
    while len(seen) < size:
        seen.setdefault(_pseudo_word(rng), None)
    return tuple(seen)


WORDS: tuple[str, ...] = _make_vocabulary()

_LENGTHS: tuple[int, ...] = tuple(range(MIN_WORDS, MAX_WORDS + 1))


def make_sentences(count: int, seed: int = 42) -> list[str]:
    """Return ``count`` sentences of 5-12 (uniform) words drawn uniformly from ``WORDS``.

    All lengths and all words are drawn in two bulk ``Random.choices`` calls and
    then sliced, because a per-sentence ``randint``/``choices`` loop is several
    times slower and generating 1M sentences should take only a few seconds.
    """
    if count < 0:
        msg = f"count must be >= 0, got {count}"
        raise ValueError(msg)
    rng = random.Random(seed)
    lengths = rng.choices(_LENGTHS, k=count)
    words = rng.choices(WORDS, k=sum(lengths))
    sentences: list[str] = []
    append = sentences.append
    join = " ".join
    pos = 0
    for n in lengths:
        end = pos + n
        append(join(words[pos:end]))
        pos = end
    return sentences


def total_words(sentences: list[str]) -> int:
    """Number of whitespace-separated words; the expected checksum of any word count."""
    return sum(len(s.split()) for s in sentences)
