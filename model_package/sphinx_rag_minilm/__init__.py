"""sphinx-rag's default embedding model, exported and quantized once (see README.md).

sphinx-rag finds the files through ``MODEL_DIR`` and checks ``model.onnx`` against the
sha256 it pins before a build embeds with it.
"""

from pathlib import Path

__all__ = ["MODEL_ID", "MODEL_DIR"]

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: model.onnx, model_info.json, tokenizer.json, vocab.txt, query_table.bin
MODEL_DIR = Path(__file__).resolve().parent / "model"
