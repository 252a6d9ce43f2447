"""LoCoMo evidence retrieval through PCAI's real write/index/search path.

Usage::

    .venv/bin/python bench/locomo.py [--data ../shared/bench/locomo10.json] [--convs N]
        [--fusion vector_bonus|weighted|rrf] [--depth N] [--ctx-before N] [--ctx-after N]
        [--no-ctx-date] [--no-summaries] [--keep-cache | --cache-dir DIR]
        [--variant name:field=value,...]

Each conversation is one user key. Session by session, in time order, every turn is appended to
``users/<key>/memory/<YYYY-MM-DD>.md`` with :func:`memory.base.logs.format_record` (who = speaker,
ref = dia_id, time = the session's timestamp plus a few seconds per turn) and the file is indexed
with :meth:`memory.index.indexer.Indexer.sync_file`, exactly as the bot's daily-log job does. Every
question goes through :meth:`HybridSearcher.search_with_vector` (the pipeline
``MemoryService.search`` runs) with the clock at the conversation's last session; result refs map
back to dia_ids. Scoring follows ../shared/bench/README.md. The data file is read from the shared
folder and never copied into the repository.

Each session's summary in the dataset (``session_summary``, written by its authors with a
model) is written as the bot writes an idle summary (:func:`history.idle.write_idle_summary`,
heading naming the session's stretch) and indexed (``--no-summaries`` writes none): the
bench cannot ask a model, and the bot summarises every session that goes idle. A summary hit
counts for nothing itself (it has no dia_id); only the records it lifts do.

The defaults were chosen on conversations 1-2, so besides the all-questions table the bench
prints recall@10 for conversations 1-5 (the tuning set: choose settings on these only) and
6-10 (out of sample) apart; variants print the same split. The last line stays the
all-questions figure: ``locomo recall@10 all=<x> cat1-4=<y>``. Variants are searched
interleaved with the default settings (:mod:`locomo_variants`): their search p95 is printed as
a ratio of the default's in the same pass.

``--keep-cache`` reuses a built data dir from ``bench/.cache/`` keyed by a hash of the indexing
code and settings (for iteration only; report figures from a run without it). ``--cache-dir``
names such a dir directly, for when only the search side changed (the hash covers whole files).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import inspect
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from locomo_variants import parse_sets, pct, recall_line, run_variants  # noqa: E402

import memory  # noqa: E402
from history import extractive  # noqa: E402
from history.idle import AUTO_REL, write_idle_summary  # noqa: E402
from history.summarize import IdleSummary  # noqa: E402
from memory import MemoryConfig, RetrievalConfig  # noqa: E402
from memory.base.logs import format_record, log_header  # noqa: E402
from memory.base.spans import idle_heading  # noqa: E402
from memory.index import sources  # noqa: E402
from memory.index.text import space_cjk  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "locomo10.json"
# Conversations 1-5 (file order) are the tuning set, 6-10 the out-of-sample set.
TUNING_CONVS = 5
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_SESSION_KEY = re.compile(r"^session_(\d+)$")


def parse_when(text: str) -> datetime:
    """ "1:56 pm on 8 May, 2023" -> datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def sessions(conv: dict[str, Any]) -> list[tuple[int, datetime, list[dict[str, Any]]]]:
    """(number, start time, turns) of every session that has turns, in time order."""
    out = []
    for key, turns in conv.items():
        m = _SESSION_KEY.match(key)
        if m and isinstance(turns, list) and turns:
            n = int(m.group(1))
            out.append((n, parse_when(conv[f"session_{n}_date_time"]), turns))
    return sorted(out, key=lambda s: (s[1], s[0]))


def turn_text(turn: dict[str, Any]) -> str:
    """A turn's text, with a shared image's caption as the README says."""
    text = str(turn["text"])
    if turn.get("blip_caption"):
        text += f" [shares image: {turn['blip_caption']}]"
    return text


def normalise_evidence(raw: list[str], known: set[str]) -> list[str]:
    """Split joined ids, fix the malformed ones, drop ids not in the conversation."""
    out: list[str] = []
    for item in raw:
        for part in re.split(r"[;\s]+", str(item)):
            part = part.strip()
            if not part:
                continue
            part = re.sub(r"^D:(\d+)", r"D\1", part)
            m = re.match(r"^D(\d+):0*(\d+)$", part)
            if m:
                part = f"D{m.group(1)}:{m.group(2)}"
            if part in known and part not in out:
                out.append(part)
    return out


def ingest(library: Any, key: str, conv: dict[str, Any]) -> tuple[datetime, set[str]]:
    """Write and index every session as the bot would; returns the last time and dia_ids."""
    indexer = library.indexer
    root = library.data_dir / "users" / key / "memory"
    root.mkdir(parents=True, exist_ok=True)
    known: set[str] = set()
    last = datetime.min
    for _n, start, turns in sessions(conv):
        day = f"{start:%Y-%m-%d}"
        path = root / f"{day}.md"
        body = "" if path.exists() else log_header(day)
        for i, turn in enumerate(turns):
            when = start + timedelta(seconds=20 * i)
            body += format_record(when, str(turn["speaker"]), turn_text(turn), str(turn["dia_id"]))
            known.add(str(turn["dia_id"]))
            last = max(last, when)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(body)
        indexer.sync_file(key, f"memory/{day}.md")
    return last, known


def write_summaries(library: Any, key: str, sample: dict[str, Any]) -> int:
    """Write each session's LoCoMo summary as the bot writes an idle summary, then index them.

    The dataset's per-session summaries (written by its authors with a model) stand in for the
    model's idle summary, which the bench cannot ask for; the heading names the session's
    stretch exactly as the bot's does. Idempotent: a written heading is not written again, and
    the indexer embeds only the new blocks. Returns how many sessions have one.
    """
    given = sample.get("session_summary") or {}
    written = 0
    for n, start, turns in sessions(sample["conversation"]):
        text = str(given.get(f"session_{n}_summary") or "").strip()
        if not text:
            continue
        end = start + timedelta(seconds=20 * (len(turns) - 1))
        words = tuple(extractive.keywords([text], 5))
        write_idle_summary(
            library.data_dir, key, idle_heading(start, end), IdleSummary(text, words)
        )
        written += 1
    library.indexer.sync_file(key, AUTO_REL)
    return written


def user_key(conv: dict[str, Any]) -> str:
    """One user key per conversation ("conv-26" -> "locomo_conv_26")."""
    return "locomo_" + re.sub(r"[^A-Za-z0-9]", "_", str(conv["sample_id"]))


def cache_key(args: argparse.Namespace) -> str:
    """Hash of the indexing code and the context settings (what the built data dir depends on)."""
    h = hashlib.sha256()
    for rel in (
        "memory/index/sources.py",
        "memory/index/indexer.py",
        "memory/index/chunks.py",
        "memory/index/chunking.py",
        "memory/base/logs.py",
        "memory/index/embedders.py",
    ):
        h.update((ROOT / rel).read_bytes())
    # Only the parts of these files that shape the built index.
    h.update(inspect.getsource(space_cjk).encode())
    h.update(inspect.getsource(ingest).encode())
    h.update(repr((args.ctx_before, args.ctx_after, args.ctx_date, args.ctx_chars)).encode())
    return h.hexdigest()[:16]


def split_of(index: int) -> str:
    """The set a conversation (0-based position in the file) belongs to."""
    return "conv 1-5 (tuning)" if index < TUNING_CONVS else "conv 6-10 (out-of-sample)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help=f"locomo10.json (not in the repository; default {DEFAULT_DATA})",
    )
    ap.add_argument("--convs", type=int, default=0, help="only the first N conversations")
    ap.add_argument("--fusion", default=None)
    ap.add_argument("--depth", type=int, default=None, help="min_candidates per retriever")
    ap.add_argument("--ctx-before", type=int, default=sources.LOG_CONTEXT_BEFORE)
    ap.add_argument("--ctx-after", type=int, default=sources.LOG_CONTEXT_AFTER)
    ap.add_argument("--ctx-chars", type=int, default=sources.LOG_CONTEXT_CHARS)
    ap.add_argument("--no-ctx-date", dest="ctx_date", action="store_false")
    ap.add_argument("--set", action="append", default=[], help="retrieval field=value")
    ap.add_argument(
        "--no-summaries",
        dest="summaries",
        action="store_false",
        help="do not write and index the sessions' summaries as idle summaries",
    )
    ap.add_argument("--keep-cache", action="store_true")
    ap.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="reuse this built data dir (only when the indexing code has not changed since)",
    )
    ap.add_argument(
        "--variant", action="append", default=[], help="name:field=v,field=v (extra configs)"
    )
    args = ap.parse_args()
    sources.LOG_CONTEXT_BEFORE = args.ctx_before
    sources.LOG_CONTEXT_AFTER = args.ctx_after
    sources.LOG_CONTEXT_CHARS = args.ctx_chars
    sources.LOG_CONTEXT_DATE = args.ctx_date

    if not args.data.is_file():
        ap.error(f"LoCoMo data not found at {args.data}; pass --data PATH/locomo10.json")
    data = json.loads(args.data.read_text(encoding="utf-8"))
    if args.convs:
        data = data[: args.convs]
    if args.cache_dir:
        args.keep_cache = True
        data_dir = args.cache_dir
        built = (data_dir / "done.json").exists()
    elif args.keep_cache:
        data_dir = ROOT / "bench" / ".cache" / f"locomo-{cache_key(args)}-{len(data)}"
        built = (data_dir / "done.json").exists()
    else:
        data_dir = Path(tempfile.mkdtemp(prefix="pcai-locomo-"))
        built = False
    overrides: dict[str, Any] = {}
    if args.fusion:
        overrides["fusion"] = args.fusion
    if args.depth:
        overrides["min_candidates"] = args.depth
    overrides.update(parse_sets(RetrievalConfig(), args.set))
    retrieval = dataclasses.replace(RetrievalConfig(), **overrides)
    # The index is built by the ingest below (or reused from the cache), not at open.
    library = memory.open(data_dir, settings=MemoryConfig(retrieval=retrieval), ensure_index=False)
    searcher = library.searcher
    embedder = library.embedder
    print(f"retrieval: {retrieval}")
    print(
        f"log context: before={args.ctx_before} after={args.ctx_after} "
        f"chars={args.ctx_chars} date={args.ctx_date}"
    )

    t_ingest = time.perf_counter()
    meta: dict[str, Any] = {}
    if built:
        meta = json.loads((data_dir / "done.json").read_text())
        # A cached index from an older PCAI is brought up to date as the bot does at start
        # (e.g. the per-user FTS tables of index schema 3 refilled from the Markdown).
        library.ensure_index()
    for conv in data:
        key = user_key(conv)
        if not built:
            last, known = ingest(library, key, conv["conversation"])
            meta[key] = {"last": last.isoformat(), "known": sorted(known)}
    if not built and args.keep_cache:
        (data_dir / "done.json").write_text(json.dumps(meta))
    ingest_s = time.perf_counter() - t_ingest
    print(
        f"ingest: {len(data)} conversations, {library.store.count()} chunks, "
        f"{ingest_s:.1f} s{' (cached)' if built else ''}"
    )
    if args.summaries:
        t_sum = time.perf_counter()
        written = sum(write_summaries(library, user_key(conv), conv) for conv in data)
        print(
            f"idle summaries: {written} sessions, {library.store.count()} chunks, "
            f"{time.perf_counter() - t_sum:.1f} s"
        )

    per_cat: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    embed_ms: list[float] = []
    search_ms: list[float] = []
    asked: list[tuple[str, datetime, str, Any, set[str], int, str]] = []
    per_split: dict[str, dict[bool, list[float]]] = defaultdict(lambda: {True: [], False: []})
    for index, conv in enumerate(data):
        key = user_key(conv)
        now = datetime.fromisoformat(meta[key]["last"]).astimezone()
        known = set(meta[key]["known"])
        for qa in conv["qa"]:
            gold = normalise_evidence(qa.get("evidence", []), known)
            if not gold:
                continue
            t0 = time.perf_counter()
            qvec = embedder.embed_query(str(qa["question"]))
            embed_ms.append((time.perf_counter() - t0) * 1000)
            cat = int(qa["category"])
            asked.append((key, now, str(qa["question"]), qvec, set(gold), cat, split_of(index)))
            res = searcher.search_with_vector(key, str(qa["question"]), qvec, 10, now=now)
            search_ms.append(res.search_ms)
            ranked: list[str] = []
            for hit in res.hits:
                for ref in hit.chunk.refs:
                    if ref not in ranked:
                        ranked.append(ref)
            ranked = ranked[:10]
            g = set(gold)
            row = per_cat[int(qa["category"])]
            row["r5"].append(len(g & set(ranked[:5])) / len(g))
            row["r10"].append(len(g & set(ranked[:10])) / len(g))
            per_split[split_of(index)][cat != 5].append(row["r10"][-1])
            row["hit10"].append(1.0 if g & set(ranked) else 0.0)
            first = next((i for i, r in enumerate(ranked, 1) if r in g), None)
            row["mrr"].append(1.0 / first if first else 0.0)

    def line(name: str, rows: list[dict[str, list[float]]]) -> float:
        n = sum(len(r["r10"]) for r in rows)
        m = {x: sum(sum(r[x]) for r in rows) / max(n, 1) for x in ("r5", "r10", "hit10", "mrr")}
        print(
            f"{name:<14} n={n:<5} recall@5={m['r5']:.3f} recall@10={m['r10']:.3f} "
            f"hit@10={m['hit10']:.3f} MRR={m['mrr']:.3f}"
        )
        return m["r10"]

    for cat in sorted(per_cat):
        line(f"{cat} {CATEGORIES.get(cat, '?')}", [per_cat[cat]])
    r_all = line("all", list(per_cat.values()))
    r_14 = line("cat1-4", [per_cat[c] for c in per_cat if c != 5])
    for name in sorted(per_split):
        print(recall_line(name, per_split[name]))
    print(
        f"search latency (query embedding excluded): p50={pct(search_ms, 0.5):.1f} ms "
        f"p95={pct(search_ms, 0.95):.1f} ms"
    )
    totals = [a + b for a, b in zip(embed_ms, search_ms, strict=True)]
    print(
        f"query embedding: p50={pct(embed_ms, 0.5):.1f} ms p95={pct(embed_ms, 0.95):.1f} ms; "
        f"total p50={statistics.median(totals):.1f} ms"
    )
    if args.variant:
        print("variants, each question searched by all of them in rotating order:")
        run_variants(searcher, retrieval, asked, args.variant)
    library.close()
    if not args.keep_cache:
        shutil.rmtree(data_dir, ignore_errors=True)
    print(f"locomo recall@10 all={r_all:.3f} cat1-4={r_14:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
