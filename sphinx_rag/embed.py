"""Embed text with an exported sphinx-rag model directory (onnxruntime + tokenizers only).

Mirrors sentence-transformers: truncation to ``max_seq_length``, mean (or CLS) pooling
over the attention mask, optional L2 normalisation. Texts are sorted by token length
and padded per batch (3-4x faster on mixed lengths than unsorted batches). No torch,
optimum or transformers import here: building docs must not need them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

#: Session config that makes onnxruntime fold each int8 weight's DequantizeLinear into
#: an fp32 constant at load time. Without it, onnxruntime >= 1.2x fuses DQ+MatMul into
#: MatMulNBits whose default accuracy level quantizes activations to int8, which moves
#: vectors away from the fp32 model (and from the browser). Also the fastest option.
SESSION_CONFIG = {"session.disable_quant_qdq": "1"}

_UNTRUNCATED: dict[int, tuple] = {}


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


def count_tokens(tokenizer, text: str) -> int:
    """Real token count of ``text`` including [CLS]/[SEP], even beyond the truncation limit.

    The chunker packs text to a token budget, so this must not stop at max_seq_length.
    """
    return len(_untruncated(tokenizer).encode(text).ids)


def count_tokens_batch(tokenizer, texts: Sequence[str]) -> list[int]:
    """``count_tokens`` for many texts at once (the tokenizer runs them in parallel)."""
    return [len(e.ids) for e in _untruncated(tokenizer).encode_batch(list(texts))]


class Embedder:
    """Sentence embeddings from an exported model directory (see export_model.py)."""

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
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """float32 array (len(texts), dim) in input order; ``progress(n_done)`` after each batch."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch(texts)
        # Longest first (stable on ties): similar lengths share a batch, little padding.
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        done = 0
        for start in range(0, len(order), max(1, int(batch_size))):
            idx = order[start:start + batch_size]
            out[idx] = self._run([encodings[i] for i in idx])
            done += len(idx)
            if progress is not None:
                progress(done)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """One query vector (dim,)."""
        return self.embed([text])[0]
