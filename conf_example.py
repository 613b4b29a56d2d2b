"""Every sphinx-rag config value with its default: copy what you need into conf.py."""

extensions = ["sphinx.ext.autodoc", "numpydoc", "sphinx_rag"]

# Sentence-embedding model: a Hugging Face model id or a local directory (a sentence-
# transformers model, or a directory made by sphinx-rag export-model). The default comes
# exported, from the sphinx-rag-minilm package (a dependency): no download, no torch.
sphinx_rag_model = 'sentence-transformers/all-MiniLM-L6-v2'

# Where exported int8 ONNX models are cached. Empty: $SPHINX_RAG_CACHE, else
# ~/.cache/sphinx-rag.
sphinx_rag_model_cache = ''

# Compute embeddings (hybrid search). False gives a keyword-only (BM25) index, a much
# faster build, and needs no model export (no torch): only the model's tokenizer.
sphinx_rag_embeddings = True

# Token budget of a narrative chunk, header included. 0: the model's max sequence length
# (256 for all-MiniLM-L6-v2).
sphinx_rag_chunk_tokens = 0

# Tokens of whole sentences repeated from the previous chunk of the same section.
sphinx_rag_chunk_overlap = 32

# Glob patterns of docnames left out of the index (e.g. ["legal/*"]). The default drops
# sphinx-gallery's timing pages; set your own list to replace it.
sphinx_rag_exclude = ['*sg_execution_times']

# Glob patterns of docnames -> ranking weight in (0, 1]. Changelogs mention every API
# name and would otherwise crowd keyword results (the default names the usual changelog
# pages: changes, history, news, ...).
sphinx_rag_downweight = {'*changelog*': 0.3, '*release_notes*': 0.3, '*release-notes*': 0.3, '*whats_new*': 0.3, '*whatsnew*': 0.3, 'changes': 0.3, '*/changes': 0.3, 'history': 0.3, '*/history': 0.3, 'news': 0.3, '*/news': 0.3}

# How keyword and semantic rankings are combined: rrf (reciprocal-rank fusion), bm25
# (keyword only) or dense (semantic only). Choices: rrf, bm25, dense.
sphinx_rag_fusion = 'rrf'

# What turns a reader's query into a vector: 'both' (a small encoder fitted to the site
# answers at once, the full model takes over once loaded), 'static' (no model in the
# site: ~0.3-1 MB instead of ~25 MB) or 'model'.
sphinx_rag_query_encoder = 'both'

# Publish the default model's package's cross-encoder reranker with the model, when it
# ships one (none yet): once a reader's browser has the model, it reorders the fused top
# results (and `sphinx-rag search` and the MCP server rerank too). False: the fused order only.
sphinx_rag_rerank = True

# The k of reciprocal-rank fusion: 1/(k + rank).
sphinx_rag_rrf_k = 60

# Cosine below which the nearest chunk is no good match: when no chunk has every query
# word either, the dialog and the CLI say "No good match" above the nearest results.
# Calibrated for all-MiniLM-L6-v2; 0 turns it off.
sphinx_rag_relevance_floor = 0.3

# Chunks per onnxruntime batch.
sphinx_rag_embed_batch_size = 32

# onnxruntime threads for embedding at build time; 0: up to 2 (containers often report
# more CPUs than they may use). Set your machine's cores to embed faster.
sphinx_rag_threads = 0

# What the theme's own search box does: replace (focusing or typing in it opens the
# sphinx-rag dialog with what was typed; no extra button) or both (the theme's box keeps
# Sphinx's search page and a sphinx-rag search button is added beside it).
# pydata-sphinx-theme's search button opens the dialog either way.
sphinx_rag_theme_search = "replace"

# Files for coding agents at the site root: llms.txt, llms-full.txt (capped at this many
# bytes; 0: no cap) and a Markdown twin of every indexed page (page URL + ".md").
sphinx_rag_llms_txt = True
sphinx_rag_llms_full_bytes = 5_000_000

# The URL of the published docs, whose index a build without one of its own starts from:
# it reuses the vector of every chunk whose text is unchanged, and the static encoder,
# instead of computing them (README: Cheap CI builds). None: html_baseurl when it is set;
# "": off. SPHINX_RAG_WARM_START=0 turns it off, SPHINX_RAG_WARM_START=URL sets it.
sphinx_rag_warm_start = None

# Optional answers from a local OpenAI-compatible LLM server (llama.cpp server, Ollama's
# /v1, vLLM). Empty: off (readers can still set their own endpoint in the search
# dialog). Keys: endpoint (required, e.g. http://127.0.0.1:8080/v1), model (required),
# max_context_tokens (4096), temperature (0.1), timeout (60 s of inactivity),
# max_answer_chars (20000: a longer answer is cut, with a note), prompt (template with
# {project}, {passages}, {question}; a line --- splits system and user messages).
sphinx_rag_llm = {}

# For example, answers from a llama.cpp server running on the reader's machine:
# sphinx_rag_llm = {"endpoint": "http://127.0.0.1:8080/v1", "model": "gemma3"}

# Answers from a model in the reader's own browser, nothing to install: the browser's
# built-in model where it has one (the Prompt API), else a GGUF model run by wllama
# (llama.cpp in WebAssembly) in a worker, downloaded once after the reader agrees (its
# name and size shown first), checked against its sha256 and kept in the browser. True:
# the built-in model, and readers may name a GGUF file in the dialog's settings. A dict
# names the site's own model (keys url, sha256, bytes, name, context_tokens=2048,
# builtin=True). False: neither (wllama's 10 MB of files are left out of the site).
sphinx_rag_llm_browser = True
# sphinx_rag_llm_browser = {"url": "_static/models/qwen2.5-0.5b-instruct-q4_k_m.gguf",
#                           "sha256": "<sha256sum of the file>", "bytes": 491400032,
#                           "name": "Qwen2.5 0.5B Instruct"}

# Other sphinx-rag sites searched from this site's search dialog, each result naming its
# site: names -> site URLs (a value {"url": ..., "enabled": True} is searched before the
# reader turns it on; older versions of these docs the same way), or True: every
# intersphinx_mapping site that publishes a sphinx-rag index (checked at each build).
sphinx_rag_federation = {}
# sphinx_rag_federation = {"numpy": "https://numpy.org/doc/stable/", "v1.4": "https://mlkit.org/1.4/"}

# A golden set checked by every build: a JSON file (relative to conf.py) of searches
# readers depend on, each a query, the page or anchor its answer must come from and
# optionally the rank it must reach (default 10). Each entry that falls short is a
# warning (so `sphinx-build -W` fails), then one summary line "golden set: 18/20 within
# rank". `sphinx-rag golden add FILE "query" URL` appends an entry. Empty: no check.
sphinx_rag_golden = ""
# sphinx_rag_golden = "search_golden.json"

# Whether a docstring numpydoc cannot parse is a warning. sphinx-rag chunks it as
# narrative text (nothing lost), so by default it is no error in your docs: a -W build
# passes as it did without sphinx-rag; `sphinx-build -v` lists each one (object and
# file:line) and the build ends with their count. True: a warning each
# (sphinx_rag.docstring), for docstrings kept strict numpydoc.
sphinx_rag_docstring_warnings = False

# Questions the empty search dialog suggests. "auto" stands for up to 6 mined from the
# site at build time (section titles and object cards turned into questions, kept only
# when their own first result is where they came from); other strings are shown as
# given, in order: ["How do I install mlkit?", "auto"] extends the mined ones,
# ["How do I install mlkit?"] replaces them, [] shows none.
sphinx_rag_suggestions = ["auto"]

# Adds "Report a bad result" to the search dialog: a URL template, e.g. a new-issue
# form. {query} becomes the query, {results} the results shown and a golden-set entry
# to complete (both URL-encoded). The page sends nothing itself: the reader lands on the
# prefilled form. Empty: no link.
sphinx_rag_feedback_url = ""
# sphinx_rag_feedback_url = "https://github.com/ORG/REPO/issues/new?title=Search:+{query}&body={results}"
