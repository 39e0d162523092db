"""Ranking short texts: tokens (English words with light stemming, CJK characters and
bigrams), BM25 over them, and the near-duplicate test. Pure functions; store.py stores."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

BM25_K1 = 1.2  # term-frequency saturation (the usual 1.2–2.0; short texts want the low end)
BM25_B = 0.75  # length normalisation (the usual default)
NEAR_DUPLICATE_JACCARD = 0.8  # "prefers pytest" ~ "the user prefers pytest."; "use tabs" !~ "never use tabs"

# Words that match everything and so rank nothing. Negations stay: "never use tabs" != "use tabs".
_STOPWORDS = frozenset(
    "a an and are as at be by for from has have i in is it its me my of on or our so that the their then there "
    "these this to was we were what when which who will with you your s t".split()
)
_CJK_STOP_CHARS = frozenset("的了是在和与或我你他她它们这那吗呢吧啊也就都而及着")
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"  # kana, CJK, hangul
_TOKEN_RE = re.compile(rf"[a-z0-9]+|[{_CJK}]+")
_NORMALISE_RE = re.compile(r"[\W_]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased English words (minus stop words), CJK characters and CJK bigrams."""
    tokens: list[str] = []
    for match in _TOKEN_RE.finditer(text.lower()):
        run = match.group()
        if run.isascii():
            if run not in _STOPWORDS:
                tokens.append(stem(run))
            continue
        tokens.extend(ch for ch in run if ch not in _CJK_STOP_CHARS)
        tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


# Longest first. Crude, but "formatting"/"formatted"/"formats" all meet "format", which is
# what a query and a memory written weeks apart need; a full stemmer is not worth a dependency.
_SUFFIXES = ("ingly", "ings", "ing", "edly", "ed", "ies", "es", "s")
MIN_STEM = 3


def stem(word: str) -> str:
    """Strip one common English inflection when a stem of at least MIN_STEM letters remains."""
    if not word.isalpha() or word.endswith(("ss", "us", "is")):
        return word  # class, status, analysis
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
            base = word[: -len(suffix)]
            if suffix == "ies":
                return base + "y"
            if suffix == "es" and not base.endswith(("s", "x", "z", "ch", "sh")):
                return word[:-1]  # "uses" -> "use", but "fixes" -> "fix", "classes" -> "class"
            if suffix in ("ing", "ed") and len(base) > MIN_STEM and base[-1] == base[-2] and base[-1] not in "lsz":
                return base[:-1]  # "running" -> "run", but "passing" -> "pass"
            return base
    return word


def normalise(text: str) -> str:
    return _NORMALISE_RE.sub(" ", text.lower()).strip()


def is_near_duplicate(a: str, b: str) -> bool:
    """Same text up to case/punctuation/spacing, or token sets overlapping ≥ NEAR_DUPLICATE_JACCARD."""
    if normalise(a) == normalise(b):
        return True
    ta, tb = set(tokenize(a)), set(tokenize(b))
    if not ta or not tb:
        return False
    return len(ta & tb) / len(ta | tb) >= NEAR_DUPLICATE_JACCARD


@dataclass(frozen=True)
class Bm25Index:
    postings: dict[str, list[tuple[int, int]]]  # term -> [(doc, term frequency)]
    length_norm: list[float]  # per doc: k1 * (1 - b + b * len / avg_len), precomputed
    n_docs: int


def build_index(docs: Sequence[Sequence[str]], k1: float = BM25_K1, b: float = BM25_B) -> Bm25Index:
    postings: dict[str, list[tuple[int, int]]] = {}
    for doc_id, doc in enumerate(docs):
        for term, tf in Counter(doc).items():
            postings.setdefault(term, []).append((doc_id, tf))
    avg_len = (sum(len(d) for d in docs) / len(docs)) if docs else 0.0
    norms = [k1 * (1 - b + b * (len(d) / avg_len if avg_len else 0.0)) for d in docs]
    return Bm25Index(postings, norms, len(docs))


def bm25_rank(index: Bm25Index, query: Sequence[str], top_k: int, k1: float = BM25_K1) -> list[tuple[int, float]]:
    """(doc, score) for the top_k docs with score > 0, best first; ties keep document order."""
    scores: dict[int, float] = {}
    for term in set(query):
        posting = index.postings.get(term)
        if not posting:
            continue
        df = len(posting)
        idf = math.log(1 + (index.n_docs - df + 0.5) / (df + 0.5))
        for doc, tf in posting:
            scores[doc] = scores.get(doc, 0.0) + idf * tf * (k1 + 1) / (tf + index.length_norm[doc])
    ranked = sorted((item for item in scores.items() if item[1] > 0), key=lambda item: (-item[1], item[0]))
    return ranked[:top_k]
