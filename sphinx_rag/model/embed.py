"""Embed text with an exported sphinx-rag model directory (onnxruntime + tokenizers only).

``Embedder`` mirrors sentence-transformers: truncation to ``max_seq_length``, mean (or
CLS) pooling over the attention mask, optional L2 normalisation. Texts are sorted by
token length and padded per batch (3-4x faster on mixed lengths than unsorted
batches), and a batch of long texts is cut to ``MAX_BATCH_TOKENS``. No torch, optimum or transformers import here: building docs must not need
them.

At build time ``embed_chunks`` turns chunks into the stored int8 vectors: it chooses
what text of a chunk is embedded (``embedding_input``), quantizes per vector, and keeps
a small sqlite cache beside the exported model (chunk text sha256 -> stored vector) so
a rebuild only embeds chunks whose text changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

#: Session config that makes onnxruntime fold each int8 weight's DequantizeLinear into
#: an fp32 constant at load time. Without it, onnxruntime >= 1.2x fuses DQ+MatMul into
#: MatMulNBits whose default accuracy level quantizes activations to int8, which moves
#: vectors away from the fp32 model (and from the browser). Also the fastest option.
SESSION_CONFIG = {"session.disable_quant_qdq": "1"}

#: Padded tokens a batch holds at most (besides ``batch_size`` texts): attention's scores grow
#: with batch x heads x length^2, and 32 chunks of 200 tokens took 1.3-1.6x the CPU of 8 on
#: 2 cores (eval/RESULTS.md, "A cheaper cold path"). Short texts still go 32 to a batch.
MAX_BATCH_TOKENS = 2048

_UNTRUNCATED: dict[int, tuple] = {}

#: Wraps the list of batches (lists of text indices) and yields them back, drawing progress.
Progress = Callable[[list[list[int]]], Iterable[list[int]]]


def _read_info(model_dir: Path) -> dict:
    with open(Path(model_dir) / "model_info.json", encoding="utf-8") as fh:
        return json.load(fh)


def load_tokenizer(model_dir: str | os.PathLike, max_seq_length: int | None = None):
    """The model's fast tokenizer, truncating like sentence-transformers and not padding.

    tokenizer.json of all-MiniLM-L6-v2 itself truncates *and pads* to 128, while the
    model is used with 256 tokens: both settings are overridden here.
    """
    from tokenizers import Tokenizer

    model_dir = Path(model_dir)
    if max_seq_length is None:
        max_seq_length = int(_read_info(model_dir)["max_seq_length"])
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(max_length=int(max_seq_length))
    tok.no_padding()
    return tok


def _untruncated(tokenizer):
    entry = _UNTRUNCATED.get(id(tokenizer))
    if entry is None or entry[0] is not tokenizer:
        from tokenizers import Tokenizer

        copy = Tokenizer.from_str(tokenizer.to_str())
        copy.no_truncation()
        copy.no_padding()
        # Keeping ``tokenizer`` referenced makes sure its id() is not reused.
        entry = _UNTRUNCATED[id(tokenizer)] = (tokenizer, copy)
    return entry[1]


def token_counter(model_dir: str | os.PathLike) -> Callable[[str], int]:
    """``count_tokens`` with the model's tokenizer, loaded once without truncation (a
    truncating one copied into an untruncated one cost a second load, 0.1 s of every build)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return lambda text: len(tok.encode(text).ids)


def count_tokens(tokenizer, text: str) -> int:
    """Real token count of ``text`` including [CLS]/[SEP], even beyond the truncation limit.

    The chunker packs text to a token budget, so this must not stop at max_seq_length.
    """
    return len(_untruncated(tokenizer).encode(text).ids)


def usable_cores(cgroup: Path = Path("/sys/fs/cgroup")) -> int:
    """Cores this process may use: its CPU affinity, capped by a container's CPU quota
    (cgroup v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``), which ``os.cpu_count()`` does not
    see. The build embeds on that many onnxruntime threads: a text's vector does not
    depend on the thread count (tests/test_embed.py), and a 4-core CI runner then embeds
    on 4 (eval/RESULTS.md, "The floor of a cold build on two cores")."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = _cgroup_quota(cgroup)
    if quota is not None:
        cores = min(cores, int(quota))  # 1.5 CPUs: 1 thread (threads beyond a quota spin and wait)
    return max(1, cores)


def _cgroup_quota(root: Path) -> float | None:
    """CPUs a container's quota allows (None: no quota, or none readable)."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]  # v2: "max 100000" or "200000 100000"
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    for v1 in (root / "cpu", root / "cpu,cpuacct"):
        try:
            quota = int((v1 / "cpu.cfs_quota_us").read_text())
            period = int((v1 / "cpu.cfs_period_us").read_text())
        except (OSError, ValueError):
            continue
        return None if quota <= 0 or period <= 0 else quota / period
    return None


class Embedder:
    """Sentence embeddings from an exported model directory (see export.py)."""

    def __init__(self, model_dir: str | os.PathLike, *, threads: int | None = None):
        import onnxruntime as ort

        self.model_dir = Path(model_dir)
        self.info = _read_info(self.model_dir)
        self.dim = int(self.info["dim"])
        self.max_seq_length = int(self.info["max_seq_length"])
        self.pooling = self.info.get("pooling", "mean")
        self.normalize = bool(self.info.get("normalize", True))
        if self.pooling not in ("mean", "cls"):
            raise RuntimeError(f"[sphinx-rag] unsupported pooling {self.pooling!r} in {model_dir}")
        self.tokenizer = load_tokenizer(self.model_dir, self.max_seq_length)
        pad = self.tokenizer.token_to_id("[PAD]")
        self.pad_id = 0 if pad is None else int(pad)

        so = ort.SessionOptions()
        # Sphinx may fork workers: keep native thread pools small and predictable.
        so.intra_op_num_threads = int(threads or min(2, os.cpu_count() or 1))
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.log_severity_level = 3
        for key, value in SESSION_CONFIG.items():
            so.add_session_config_entry(key, value)
        self.session = ort.InferenceSession(
            str(self.model_dir / "model.onnx"), so, providers=["CPUExecutionProvider"]
        )
        self._input_names = {i.name for i in self.session.get_inputs()}
        outs = [o.name for o in self.session.get_outputs()]
        self._output = "last_hidden_state" if "last_hidden_state" in outs else outs[0]

    def _run(self, encodings) -> np.ndarray:
        n = len(encodings)
        width = max(len(e.ids) for e in encodings)
        ids = np.full((n, width), self.pad_id, dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        types = np.zeros((n, width), dtype=np.int64)
        for i, e in enumerate(encodings):
            k = len(e.ids)
            ids[i, :k] = e.ids
            mask[i, :k] = 1
            types[i, :k] = e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        feed = {k: v for k, v in feed.items() if k in self._input_names}
        hidden = self.session.run([self._output], feed)[0]
        if self.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        pooled = pooled.astype(np.float32, copy=False)
        if self.normalize:
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            pooled = pooled / np.maximum(norms, 1e-12)
        return pooled

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 32,
        progress: Progress | None = None,
    ) -> np.ndarray:
        """float32 array (len(texts), dim) in input order.

        ``progress`` wraps the list of batches (each a list of text indices) and
        yields them back: Sphinx's ``status_iterator`` draws the bar that way.
        """
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch(texts)
        # Longest first (stable on ties): similar lengths share a batch, little padding.
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        size = max(1, int(batch_size))
        batches, start = [], 0
        while start < len(order):
            width = len(encodings[order[start]].ids)  # the batch's longest text: its padded width
            take = max(1, min(size, MAX_BATCH_TOKENS // max(width, 1)))
            batches.append(order[start:start + take])
            start += take
        for idx in (progress(batches) if progress else batches):
            out[idx] = self._run([encodings[i] for i in idx])
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """One query vector (dim,)."""
        return self.embed([text])[0]


# -- chunk vectors (build time) ---------------------------------------------------------

def embedding_input(chunk) -> str:
    """What is embedded for a chunk ("embed small, return big", parent-document style).

    An API chunk is embedded by its first paragraph: owner, name, type/default and
    the first paragraph of the description. Long option lists otherwise dominate the
    mean-pooled vector (demo docs: dense MRR@10 0.709 -> 0.742, see eval/RESULTS.md).
    The whole chunk is still what BM25 indexes and what is shown and cited.
    """
    return embedding_text(chunk.kind, chunk.text)


def embedding_text(kind: str, text: str) -> str:
    """``embedding_input`` of a chunk's kind and text (a record's, say)."""
    return text.split("\n\n", 1)[0] if kind == "api" else text


def quantize_vectors(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-vector int8: v ≈ q * scale."""
    peak = np.abs(vectors).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8)
    return q, scales


class EmbeddingCache:
    """text sha256 -> (int8 vector, scale); failures to open just disable it."""

    def __init__(self, path: Path):
        try:
            self.db = sqlite3.connect(str(path))
            self.db.execute("CREATE TABLE IF NOT EXISTS v (key TEXT PRIMARY KEY, q BLOB, scale REAL)")
        except sqlite3.Error:
            self.db = None

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get(self, keys: list[str]) -> dict[str, tuple[bytes, float]]:
        if self.db is None:
            return {}
        found = {}
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            rows = self.db.execute(f"SELECT key, q, scale FROM v WHERE key IN ({','.join('?' * len(part))})", part)
            found.update({k: (q, s) for k, q, s in rows})
        return found

    def put(self, rows: list[tuple[str, bytes, float]]):
        if self.db is None or not rows:
            return
        try:
            with self.db:
                self.db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?, ?)", rows)
        except sqlite3.Error:
            pass


#: Texts whose int8 vectors and scales are at hand: (``embedding_input`` texts, vectors, scales).
Known = tuple[list[str], np.ndarray, np.ndarray]


#: Vectors this build has already computed (``index/embed_ahead.py``): ``EmbeddingCache.key`` ->
#: (int8 bytes, scale).
Ahead = dict[str, tuple[bytes, float]]


def cache_path(model_dir: Path) -> Path | None:
    """The embedding cache beside the exported model (None: ``SPHINX_RAG_EMBED_CACHE=0``)."""
    if os.environ.get("SPHINX_RAG_EMBED_CACHE", "1") == "0":
        return None
    return Path(model_dir) / "embedding_cache.sqlite"


def embed_chunks(chunks, model_dir: Path, *, batch_size: int = 32, threads: int | None = None,
                 progress: Progress | None = None, note: Callable[[str], None] | None = None,
                 known: Known | None = None, ahead: Ahead | None = None) -> tuple[np.ndarray, np.ndarray]:
    """int8 vectors and scales of the chunks (in order), embedding only texts not cached.

    ``note`` is told how many come from the cache (the progress bar counts the others).
    ``known``: the vectors of texts embedded before (the previous build's, ``index/carry.py``).
    ``ahead``: those embedded while the pages were read and written (``index/embed_ahead.py``).
    """
    def report(cached: int, total: int, todo: int, early: int):
        if note is not None:
            note(f"[sphinx-rag] {cached} of {total} chunk vectors from the embedding cache"
                 + (f", {early} embedded while the pages were read and written" if early else "")
                 + (f"; embedding {todo} new chunk texts" if todo else ""))

    return embed_cached([embedding_input(c) for c in chunks], model_dir, batch_size=batch_size, threads=threads,
                        progress=progress, report=report, known=known, ahead=ahead)


def embed_cached(texts: list[str], model_dir: Path, *, batch_size: int = 32, threads: int | None = None,
                 progress: Progress | None = None, report: Callable[[int, int, int, int], None] | None = None,
                 known: Known | None = None, ahead: Ahead | None = None) -> tuple[np.ndarray, np.ndarray]:
    """int8 vectors and scales of ``texts`` (in order), embedding only texts not cached
    (``known``, then a small sqlite cache beside the exported model: text sha256 -> stored vector)
    nor embedded ahead (``ahead``: stored in that cache now).

    ``report(from_cache, total, to_embed, from_ahead)`` is called before embedding.
    ``SPHINX_RAG_EMBED_CACHE=0`` disables both caches (benchmarks, debugging).
    """
    dim = int(_read_info(Path(model_dir))["dim"])
    path = cache_path(model_dir)
    use_cache = path is not None
    vectors = np.zeros((len(texts), dim), dtype=np.int8)
    scales = np.zeros(len(texts), dtype=np.float32)
    rows = np.full(len(texts), -1, dtype=np.int64)
    if known is not None and use_cache and known[1].shape[1] == dim:
        at = {t: i for i, t in enumerate(known[0])}
        rows = np.fromiter((at.get(t, -1) for t in texts), dtype=np.int64, count=len(texts))
        have = rows >= 0
        vectors[have], scales[have] = known[1][rows[have]], known[2][rows[have]]
    rest = np.flatnonzero(rows < 0).tolist()
    cache = EmbeddingCache(path if use_cache else Path(":memory:"))
    keys = {i: EmbeddingCache.key(texts[i]) for i in rest}
    cached = cache.get(sorted(set(keys.values()))) if rest else {}
    early = {k: ahead[k] for k in set(keys.values()) if k not in cached and k in (ahead or {})}
    if early:
        cache.put(sorted((k, q, s) for k, (q, s) in early.items()))
        cached.update(early)
    todo = sorted({k: texts[i] for i, k in keys.items() if k not in cached}.items())
    if report is not None:
        from_ahead = sum(k in early for k in keys.values())
        report(len(texts) - from_ahead - sum(k not in cached for k in keys.values()), len(texts), len(todo),
               from_ahead)
    if todo:
        fresh = Embedder(model_dir, threads=threads).embed([t for _, t in todo], batch_size=batch_size,
                                                           progress=progress)
        q, s = quantize_vectors(fresh)
        rows_new = [(k, q[i].tobytes(), float(s[i])) for i, (k, _) in enumerate(todo)]
        cache.put(rows_new)
        cached.update({k: (qb, sc) for k, qb, sc in rows_new})
    for i, k in keys.items():
        qb, sc = cached[k]
        vectors[i] = np.frombuffer(qb, dtype=np.int8)
        scales[i] = sc
    return vectors, scales
