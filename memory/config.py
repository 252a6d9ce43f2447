"""Configuration values of the memory package, with the defaults that ship.

These are plain frozen dataclasses; ``bot.settings`` fills them from the environment and the
optional TOML file, and hands them to the services that need them. :class:`MemoryConfig`
bundles what :func:`memory.open` needs; a library user who passes nothing gets the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# Where the two databases live under the data folder (users' Markdown lives under users/).
INDEX_FILE = Path("knowledge") / "pcai_memory.sqlite"
STATE_FILE = Path("pcai.db")


def index_path(data_dir: Path) -> Path:
    """The derived search index (chunks, FTS5, vectors): rebuilt from the Markdown if lost."""
    return data_dir / INDEX_FILE


def state_db_path(data_dir: Path) -> Path:
    """Operational state (pending memories, counters, short-term rows): never rebuilt."""
    return data_dir / STATE_FILE


# The byte budget every per-user cache of a process shares (``PCAI_CACHE_MB``): about 180
# people's vectors at a thousand chunks each; past it, the least recently seen go first.
DEFAULT_CACHE_MB = 256


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    """Retrieval settings (docs/retrieval.md, "Staged scoring"), search depth, fusion choice."""

    vector_weight: float = 0.7
    bm25_weight: float = 0.3
    min_score: float = 0.3
    hard_min_score: float = 0.35
    # Measured on LoCoMo (bench/RESULTS.md; docs/retrieval.md, "Defaults chosen by measurement"):
    # with e5's compressed cosine scale a 14-day recency and a 60-day decay (floor x0.5) swamp
    # the similarity differences (recall@10 0.77 -> 0.43); recency now only favours the last
    # day or so, decay is off (0 = off), and MMR only demotes true near-copies (neighbouring
    # log records share context, so 0.85 hit them).
    recency_half_life_days: float = 1.0
    recency_weight: float = 0.10
    length_norm_anchor: int = 500
    time_decay_half_life_days: float = 0.0
    mmr_threshold: float = 0.99
    filter_noise: bool = True
    # "vector_bonus": vector score as the base, +bm25_hit_bonus when BM25 also hit (the original
    # design's "RRF"); "weighted": vector_weight * sim + bm25_weight * bm25/best; "rrf": true
    # reciprocal-rank fusion.
    fusion: str = "weighted"
    bm25_hit_bonus: float = 0.15
    rrf_k: int = 60
    # Each retriever fetches max(k * candidate_multiplier, min_candidates) candidates; 4 found
    # no more on LoCoMo than 2 and cost the search 1.5x (bench/RESULTS.md).
    candidate_multiplier: int = 2
    min_candidates: int = 20
    # BM25 query terms found in more than this share of indexed rows (and in more than
    # fts_common_min_rows rows) are dropped: they carry little IDF but cost a scan of that
    # share of the table; at most fts_max_terms of the rarest are kept
    # (memory.index.text.selective_terms; bench/RESULTS.md). 0 turns either off.
    fts_max_df_ratio: float = 0.1
    fts_common_min_rows: int = 5000
    fts_max_terms: int = 12
    # ... and the kept terms match at most this many rows together (the rarest always kept):
    # FTS5 scores every row it matches; at 100,000 chunks the search's p95 went from 33 to 25
    # ms, LoCoMo's recall unchanged (bench/RESULTS.md). 0: off.
    fts_max_rows: int = 5_000
    top_k: int = 5
    # Neighbour lift (memory.search.hybrid): a daily-log record d records away from one of the
    # neighbour_hits best fused matches (d <= neighbour_span, same day) scores at least
    # neighbour_share ** d of that match's fused score; 0 hits or share turns it off. Chosen on
    # LoCoMo conversations 1-5 (recall@10 0.736 -> 0.791; bench/RESULTS.md); share 0.95 ->
    # 0.9 in session 37 (all 0.783 -> 0.792, conv 1-5 0.801 -> 0.810, 6-10 0.765 -> 0.774).
    neighbour_hits: int = 5
    neighbour_span: int = 2
    neighbour_share: float = 0.9
    # Session lift (memory.search.sessions): the daily-log candidates in the stretch of one of
    # the session_hits best fused idle summaries gain session_weight x that summary's fused
    # score; 0 turns it off. Chosen on LoCoMo conversations 1-5 (bench/RESULTS.md).
    session_hits: int = 3
    session_weight: float = 0.1
    # Reply lift (memory.search.replies): of the reply_hits best fused daily-log records, each
    # one that asks (ends with "?") lifts the record after it, its reply, to at least
    # reply_share x its score; 0 hits or share turns it off. Chosen on LoCoMo conversations
    # 1-5 (bench/RESULTS.md, "Reply lift").
    reply_hits: int = 20
    reply_share: float = 1.02
    # Time words (memory.search.when): when the query names a time ("in May 2023", "last
    # week", "去年聖誕節"), a kept hit dated in those days or the date_slack_days after (when
    # people tell of it) gains date_weight, after the thresholds: it reorders, never lets in.
    # 0 turns it off. Chosen on LoCoMo conversations 1-5 (bench/RESULTS.md).
    date_weight: float = 0.1
    date_slack_days: int = 7
    # Memories fetched on their own (memory.search.hybrid): besides the depth nearest chunks
    # of every kind, each query vector fetches the memory_candidates nearest of the person's
    # confirmed memories, so a growing daily log cannot crowd them out of the candidates
    # (MADial-Bench, bench/RESULTS.md). The thresholds judge them as any chunk. 0: off.
    memory_candidates: int = 36
    # The retrieval score orders the kept hits (docs/retrieval.md, "Retrieval score").
    # Its recency term is exp(-rate * days); 0 holds it at 1, since the recency stage above
    # already counts age and a rate of 0.05 lowers LoCoMo recall (bench/RESULTS.md).
    signal_recency_rate: float = 0.0
    # A low_priority entry's score is multiplied by this (still found, ranked lower).
    low_priority_factor: float = 0.8


@dataclass(frozen=True, slots=True)
class IndexConfig:
    """How the Markdown is cut into indexed chunks (docs/retrieval.md, "Candidates")."""

    chunk_tokens: int = 400
    chunk_overlap_tokens: int = 80
    # Small batches: the embedder lock is held per batch, so a query waits ~80 ms at most.
    embed_batch_size: int = 8


@dataclass(frozen=True, slots=True)
class AdaptiveConfig:
    """Adaptive retrieval and its periodic forced search.

    See docs/retrieval.md, "Adaptive retrieval".
    """

    min_chars: int = 5
    min_cjk_chars: int = 6
    min_other_chars: int = 15
    force_every_turns: int = 5


@dataclass(frozen=True, slots=True)
class PendingConfig:
    """Proposed memories wait 30 minutes for confirmation; the conflict check's limits.

    See docs/memory-lifecycle.md, "The write path".
    """

    ttl_minutes: int = 30
    # Conflict check: the top-K similar memories are compared, and one whose
    # cosine similarity reaches this is "very similar" (measured with e5-small: rewordings of
    # the same preference score 0.91-0.93, unrelated memories 0.75-0.88).
    conflict_top_k: int = 5
    conflict_similarity: float = 0.9


@dataclass(frozen=True, slots=True)
class LifecycleConfig:
    """Health score thresholds and deletion of long-archived entries.

    See docs/memory-lifecycle.md, "Health and lifecycle".
    """

    recency_half_life_days: float = 14.0
    low_priority_below: float = 0.3
    archive_below: float = 0.15
    delete_archived_after_days: int = 60
    access_saturation: int = 20
    # After a person restores an entry, the nightly job leaves it alone for this many days.
    restore_grace_days: int = 14
    # Nothing is archived unless its owner was told it is fading at least this many days
    # before (memory.write.lifecycle); the fading check runs every fade_every_hours (weekly).
    fade_notice_days: int = 7
    fade_every_hours: float = 168.0


@dataclass(frozen=True, slots=True)
class BudgetConfig:
    """Layers and limits of a prompt's memory block (docs/retrieval.md, "Selection and budget")."""

    memory_tokens: int = 2000
    long_chunk_max_tokens: int = 1500
    short_term_max_tokens: int = 1000
    static_fallback_chars: int = 4000
    l0_max: int = 10
    l0_min_user_weight: int = 9
    l1_max: int = 5
    l2_max: int = 6
    # Of the L2 slots, how many a daily-log line or a compaction summary may take while the
    # person's confirmed memories could fill them: memories are ranked ahead of what was only
    # said in other conversations (agent.selection.memories_first; bench/RESULTS.md, MADial).
    l2_other_max: int = 1
    # ... and only when it is clearly the turn's best hit: its score at least this times the
    # best memory's. A line of the person's own chatter matches a new line by its register
    # as much as by its subject (e5 scores two lines of "I ..." close), so at a par it takes a
    # memory's place for nothing; one that names what the turn is about stands well above
    # (bench/RESULTS.md, "MADial: a memory's slot goes to an earlier line only when..."). 0: at
    # any score, as before.
    l2_other_margin: float = 1.2
    # A memory the retrieval thresholds (min_score 0.3, hard_min_score 0.35) dropped may still
    # take an L2 slot no memory above them wants when its fused score reaches this: on e5's
    # compressed scale a memory the conversation talks around fuses at 0.2-0.3
    # (agent.query.with_memories_below; bench/RESULTS.md, MADial). 0: off.
    l2_memory_min_score: float = 0.2
    # ... and this share of the best memory's fused score: a gap, not a fixed line (a clear
    # answer keeps the weak memories out; a conversation that talks around its memories
    # fuses them all low and close together).
    l2_memory_share: float = 0.5
    short_term_latest: int = 3


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """Everything :func:`memory.open` needs, each part with the defaults that ship."""

    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    pending: PendingConfig = field(default_factory=PendingConfig)
    lifecycle: LifecycleConfig = field(default_factory=LifecycleConfig)
    # How long the bot's /undo can bring back what /forget removed (the undo copies in pcai.db).
    forget_undo_minutes: int = 10
    # The per-user caches' shared budget in MB (vectors, parsed MEMORY.md, term counts).
    cache_mb: int = DEFAULT_CACHE_MB
