"""Every ``sphinx_rag_*`` config value, declared once and validated once.

``CONFIG`` is the single source of truth: ``setup()`` registers it, the
``config-inited`` handler validates it, and the README table documents it.
``sphinx_rag_llm`` is a dict checked key by key by :func:`llm_settings` (the prompt
template rules come from ``llm/template.py``; nothing here talks to an LLM server).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .llm.endpoint import normalize_endpoint
from .llm.template import DEFAULT_PROMPT, validate_prompt
from .model.source import DEFAULT_MODEL

__all__ = ["CONFIG", "Option", "validate", "unknown_names", "ConfigError", "LLM_DEFAULTS", "llm_settings",
           "llm_browser_settings"]


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Option:
    name: str
    default: Any
    types: tuple
    help: str
    check: Callable[[Any], str | None] | None = None  # returns an error message or None
    choices: tuple = ()
    rebuild: str = "html"  # what Sphinx redoes when it changes ("": nothing; the index step sees it)
    example: Any = None  # shown in errors when the default is no example (None: the default)


def _positive(v):
    return None if v > 0 else "must be > 0"


def _unit(v):
    return None if 0 <= v <= 1 else "must be a cosine between 0 and 1"


def _non_negative(v):
    return None if v >= 0 else "must be >= 0"


def _site_url(v):
    if v is None or v == "":
        return None
    from urllib.parse import urlsplit

    parts = urlsplit(v.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be the http(s) URL of the published docs, \"\" (no warm start) or None (html_baseurl)"
    return None


def _patterns(v):
    if not all(isinstance(p, str) for p in v):
        return 'must be a list of glob patterns (strings), e.g. ["changelog*", "whats_new/*"]'
    return None


def _weights(v):
    for pattern, weight in v.items():
        if not isinstance(pattern, str) or not isinstance(weight, (int, float)) or not 0 < weight <= 1:
            return 'must map glob patterns to weights in (0, 1], e.g. {"changelog*": 0.3}'
    return None


def _feedback_url(v):
    if v and (not v.startswith(("https://", "http://")) or ("{query}" not in v and "{results}" not in v)):
        return ("must be an http(s) URL template with {query} and/or {results}, e.g. "
                "'https://github.com/ORG/REPO/issues/new?title=Search:+{query}&body={results}'")
    return None


def _federation(v):
    from .federation import EXAMPLE, entry_problem

    if isinstance(v, bool):
        return None
    for name, value in v.items():
        problem = entry_problem(name, value)
        if problem:
            return f"{problem}; it maps names to sphinx-rag sites, e.g. {EXAMPLE}, or is True (the intersphinx_mapping sites that publish one)"
    return None


def _questions(v):
    if not all(isinstance(q, str) and q.strip() for q in v):
        return 'must be a list of questions (strings), "auto" for the mined ones, e.g. ["How do I install?", "auto"]'
    return None


# -- sphinx_rag_llm: a dict, checked key by key --------------------------------------

LLM_DEFAULTS = {
    "endpoint": "",
    "model": "",
    "max_context_tokens": 4096,
    "temperature": 0.1,
    "timeout": 60.0,  # seconds of inactivity (see llm/client.py)
    "max_answer_chars": 20000,  # an answer is cut there (a server that never stops)
    "multi_query": False,  # the model rewrites the question into search queries (llm/multi_query.py)
    "filter_passages": False,  # the model judges each passage before answering (llm/judge.py)
    "prompt": DEFAULT_PROMPT,
}


def llm_settings(config: dict | None) -> dict:
    """``sphinx_rag_llm`` with defaults filled in and validated; ``{}`` when the LLM is off.

    Raises ConfigError naming the key, what is allowed and an example.
    """
    config = dict(config or {})
    if not config:
        return {}
    allowed = set(LLM_DEFAULTS)
    bad = sorted(set(config) - allowed)
    if bad:
        raise ConfigError(f"[sphinx-rag] sphinx_rag_llm has unknown keys {bad}; allowed: {sorted(allowed)}")
    out = {**LLM_DEFAULTS, **config}

    def err(key, what):
        return ConfigError(f"[sphinx-rag] sphinx_rag_llm[{key!r}] {what}; got {out[key]!r}")

    if not isinstance(out["endpoint"], str) or not out["endpoint"].strip():
        raise err("endpoint", "is required when sphinx_rag_llm is set: the OpenAI-compatible "
                  "base URL of a local server, e.g. 'http://127.0.0.1:8080/v1' (llama.cpp) or "
                  "'http://127.0.0.1:11434/v1' (Ollama)")
    try:
        out["endpoint"] = normalize_endpoint(out["endpoint"])
    except ValueError as exc:
        raise err("endpoint", f"is invalid ({exc})") from None
    if not isinstance(out["model"], str) or not out["model"].strip():
        raise err("model", "is required: the model name the server serves, e.g. 'gemma3' "
                  "(Ollama: see `ollama list`; llama.cpp server accepts any name)")
    mct = out["max_context_tokens"]
    if isinstance(mct, bool) or not isinstance(mct, int) or mct < 1024:
        raise err("max_context_tokens", "must be an int >= 1024 (the model's context window, in tokens)")
    t = out["temperature"]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 2:
        raise err("temperature", "must be a number between 0 and 2, e.g. 0.1")
    out["temperature"] = float(t)
    to = out["timeout"]
    if isinstance(to, bool) or not isinstance(to, (int, float)) or not to > 0:
        raise err("timeout", "must be a number of seconds > 0, e.g. 60")
    out["timeout"] = float(to)
    cap = out["max_answer_chars"]
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise err("max_answer_chars", "must be an int >= 1 (characters after which an answer is cut), e.g. 20000")
    for key, what in (("multi_query", "the model writes search queries for the question"),
                      ("filter_passages", "the model judges each passage before answering")):
        if not isinstance(out[key], bool):
            raise err(key, f"must be True or False ({what}; slower), e.g. True")
    message = validate_prompt(out["prompt"])
    if message:
        raise err("prompt", message)
    return out


def _llm(v):
    llm_settings(v)  # raises ConfigError with the full explanation
    return None


# -- sphinx_rag_llm_browser: answers from a model in the reader's browser ------------------

#: A GGUF model a site names for the in-browser backend: its keys, each with its default
#: (None: required). ``context_tokens`` is the model's window as the page loads it (n_ctx).
LLM_BROWSER_MODEL_KEYS = {"url": None, "sha256": None, "bytes": None, "name": "", "context_tokens": 2048}
LLM_BROWSER_EXAMPLE = ('{"url": "_static/models/qwen2.5-0.5b-instruct-q4_k_m.gguf", '
                       '"sha256": "<64 hex digits: sha256sum FILE>", "bytes": 491400032, '
                       '"name": "Qwen2.5 0.5B Instruct"}')


def llm_browser_settings(value) -> dict:
    """``sphinx_rag_llm_browser`` as the manifest carries it (``settings.llm_browser``):
    ``{"builtin": bool, "gguf": bool, "model": {...} | None}``.

    builtin: the browser's own model (the Prompt API) may answer; gguf: the page ships
    wllama's files, so a reader may name a GGUF file (and the site's ``model`` runs);
    model: the site's GGUF file (url, sha256, bytes, name, context_tokens). True: builtin
    and gguf, no model; False: neither. Raises ConfigError naming the key and an example.
    """
    if value is True or value is None:
        return {"builtin": True, "gguf": True, "model": None}
    if value is False:
        return {"builtin": False, "gguf": False, "model": None}
    if not isinstance(value, dict):
        raise ConfigError(f"[sphinx-rag] sphinx_rag_llm_browser must be True, False or a dict like "
                          f"{LLM_BROWSER_EXAMPLE}; got {value!r}")
    allowed = {*LLM_BROWSER_MODEL_KEYS, "builtin"}
    bad = sorted(set(value) - allowed)
    if bad:
        raise ConfigError(f"[sphinx-rag] sphinx_rag_llm_browser has unknown keys {bad}; allowed: {sorted(allowed)}, "
                          f"e.g. {LLM_BROWSER_EXAMPLE}")
    builtin = value.get("builtin", True)
    if not isinstance(builtin, bool):
        raise ConfigError(f"[sphinx-rag] sphinx_rag_llm_browser['builtin'] must be True or False (the browser's "
                          f"built-in model may answer); got {builtin!r}")
    if not set(value) & set(LLM_BROWSER_MODEL_KEYS):
        return {"builtin": builtin, "gguf": True, "model": None}
    model = {key: value.get(key, default) for key, default in LLM_BROWSER_MODEL_KEYS.items()}

    def err(key, what):
        return ConfigError(f"[sphinx-rag] sphinx_rag_llm_browser[{key!r}] {what}; got {model[key]!r}; "
                           f"e.g. {LLM_BROWSER_EXAMPLE}")

    url = model["url"]
    if not isinstance(url, str) or not url.strip() or any(c.isspace() for c in url.strip()):
        raise err("url", "is required: the GGUF file's http(s) URL, or its path from the site root")
    from urllib.parse import urlsplit

    parts = urlsplit(url.strip())
    if parts.scheme and (parts.scheme not in ("http", "https") or not parts.hostname):
        raise err("url", "must be an http(s) URL or a path from the site root")
    if not parts.scheme and (url.strip().startswith("//") or not parts.path):
        raise err("url", "must be an http(s) URL or a path from the site root")
    model["url"] = url.strip()
    sha = model["sha256"]
    if not isinstance(sha, str) or len(sha.strip()) != 64 or any(c not in "0123456789abcdef" for c in sha.strip().lower()):
        raise err("sha256", "is required: the file's sha256 in 64 hex digits (`sha256sum FILE`); the page "
                  "refuses a file that does not match it")
    model["sha256"] = sha.strip().lower()
    size = model["bytes"]
    if isinstance(size, bool) or not isinstance(size, int) or not 0 < size < 2**31:
        raise err("bytes", "is required: the file's size in bytes (`stat -c %s FILE`), under 2 GB (wllama's "
                  "limit for one file); the reader is told it before the download")
    name = model["name"]
    if not isinstance(name, str):
        raise err("name", "must be a string: the model's name as readers see it")
    model["name"] = name.strip() or parts.path.rsplit("/", 1)[-1]
    ctx = model["context_tokens"]
    if isinstance(ctx, bool) or not isinstance(ctx, int) or not 1024 <= ctx <= 32768:
        raise err("context_tokens", "must be an int from 1024 to 32768: the context window the page gives the "
                  "model (memory grows with it)")
    return {"builtin": builtin, "gguf": True, "model": model}


def _llm_browser(v):
    llm_browser_settings(v)  # raises ConfigError with the full explanation
    return None


CONFIG = [
    Option("sphinx_rag_model", DEFAULT_MODEL, (str,),
           "Sentence-embedding model: a Hugging Face model id or a local directory (a "
           "sentence-transformers model, or a directory made by `sphinx-rag export-model`). "
           "The default comes ready to run from the `sphinx-rag-minilm` package (installed with "
           "sphinx-rag: no download, no torch); any other model is exported to int8 ONNX once, which "
           "needs the `export` extra."),
    Option("sphinx_rag_model_cache", "", (str,),
           "Where exported int8 ONNX models (and the embedding cache) are kept. Empty: "
           "$SPHINX_RAG_CACHE, else ~/.cache/sphinx-rag/models."),
    Option("sphinx_rag_embeddings", True, (bool,),
           "Compute embeddings (hybrid search). False gives a keyword-only (BM25) index, a much "
           "faster build, and needs no model export (no torch): only the model's tokenizer."),
    Option("sphinx_rag_chunk_tokens", 0, (int,),
           "Token budget of a narrative chunk, header included. 0: the model's max sequence "
           "length (256 for all-MiniLM-L6-v2).", _non_negative),
    Option("sphinx_rag_chunk_overlap", 32, (int,),
           "Tokens of whole sentences repeated from the previous chunk of the same section.",
           _non_negative),
    Option("sphinx_rag_exclude", ["*sg_execution_times"], (list, tuple),
           "Glob patterns of docnames left out of the index (e.g. `[\"legal/*\"]`). The default "
           "drops sphinx-gallery's timing pages; set your own list to replace it.",
           _patterns),
    Option("sphinx_rag_downweight", {"*changelog*": 0.3, "*release_notes*": 0.3, "*release-notes*": 0.3,
                                     "*whats_new*": 0.3, "*whatsnew*": 0.3, "changes": 0.3, "*/changes": 0.3,
                                     "history": 0.3, "*/history": 0.3, "news": 0.3, "*/news": 0.3},
           (dict,),
           "Glob patterns of docnames -> ranking weight in (0, 1]. Changelogs mention every "
           "API name and would otherwise crowd keyword results (the default names the usual "
           "changelog pages: `changes`, `history`, `news`, ...).", _weights),
    Option("sphinx_rag_fusion", "rrf", (str,),
           "How keyword and semantic rankings are combined: `rrf` (reciprocal-rank fusion), "
           "`bm25` (keyword only) or `dense` (semantic only).", choices=("rrf", "bm25", "dense")),
    Option("sphinx_rag_query_encoder", "both", (str,),
           "What turns a reader's query into a vector: `both` (a small linear encoder fitted to "
           "the site at build time answers at once, the full model takes over once loaded), "
           "`static` (the encoder only: the site ships no model and no onnxruntime) or `model` "
           "(the full model only).", choices=("both", "static", "model")),
    Option("sphinx_rag_rerank", True, (bool,),
           "Publish the default model's package's cross-encoder reranker with the model, when it ships "
           "one (none yet: the one trained so far lowered hand-written questions' first results, see "
           "eval/RESULTS.md): once the reader's browser has the model (a query that needs meaning), a "
           "small model that reads the question and each of the fused top candidates together reorders "
           "them, and the reordered list replaces the fused one. `sphinx-rag search` and the MCP server "
           "rerank too (`--no-rerank` turns it off there). False: the fused order only, nothing more "
           "downloaded."),
    Option("sphinx_rag_rrf_k", 60, (int,), "The k of reciprocal-rank fusion: 1/(k + rank).",
           _positive),
    Option("sphinx_rag_relevance_floor", 0.3, (float, int),
           "Cosine below which the nearest chunk is no good match: when no chunk has every query "
           "word either, the dialog and the CLI say \"No good match\" above the nearest results. "
           "Calibrated for all-MiniLM-L6-v2; 0 turns it off.", _unit),
    Option("sphinx_rag_embed_batch_size", 32, (int,), "Chunks per onnxruntime batch.", _positive),
    Option("sphinx_rag_threads", 0, (int,),
           "onnxruntime threads for embedding at build time; 0: every core the build may use (its CPU "
           "affinity, capped by a container's CPU quota). Vectors do not depend on it.",
           _non_negative),
    Option("sphinx_rag_theme_search", "replace", (str,),
           "What the theme's own search box does: `replace` (focusing or typing in it opens the "
           "sphinx-rag dialog with what was typed; no extra button) or `both` (the theme's box "
           "keeps Sphinx's search page and a sphinx-rag search button is added beside it). "
           "pydata-sphinx-theme's search button opens the dialog either way.",
           choices=("replace", "both")),
    Option("sphinx_rag_llms_txt", True, (bool,),
           "Files for coding agents at the site root: "
           "`llms.txt` (llmstxt.org: the project, a summary, the root toctree's captions as sections "
           "of links), a Markdown twin of every indexed page at its URL with `.md` appended "
           "(`index.html.md` for a URL ending in `/`, as `dirhtml` writes them), made from the page as "
           "written: its API tables and toctrees as links to the other twins (each page names its twin "
           "in its head and shows a small \"View as Markdown · Copy as Markdown\"), and `llms-full.txt` "
           "(every page in one file). False: none, and those of an earlier build are removed."),
    Option("sphinx_rag_llms_full_bytes", 5_000_000, (int,),
           "The size cap of `llms-full.txt` in bytes: whole pages up to it, then a note saying "
           "where it is cut (the rest is in `llms.txt`). 0: no cap.", _non_negative),
    Option("sphinx_rag_warm_start", None, (str, type(None)),
           "The URL of the published docs, whose index a build without one of its own starts from: "
           "it reuses the vector of every chunk whose text is unchanged, and the static encoder, "
           "instead of computing them (a CI build with empty caches embeds only what changed). None: `html_baseurl` "
           "when it is set; `\"\"`: off. `SPHINX_RAG_WARM_START=0` turns it off, "
           "`SPHINX_RAG_WARM_START=URL` sets it.", _site_url, example="https://docs.example.org/en/stable/",
           rebuild=""),  # the warm start gives the index a cold build gives: nothing to redo
    Option("sphinx_rag_llm", {}, (dict,),
           "Optional answers from a local OpenAI-compatible LLM server (llama.cpp server, "
           "Ollama's /v1, vLLM). Empty: off (readers can still set their own endpoint in the "
           "search dialog). Keys: `endpoint` (required, e.g. `http://127.0.0.1:8080/v1`), "
           "`model` (required), `max_context_tokens` (4096), `temperature` (0.1), `timeout` "
           "(60 s of inactivity), `max_answer_chars` (20000: a longer answer is cut, with a note), "
           "`multi_query` (False; True: the model first rewrites the question into up to 3 search queries, "
           "searched with it and fused), `filter_passages` (False; True: the model judges each passage, one "
           "call each, and those it rejects are not sent), "
           "`prompt` (template with `{project}`, `{passages}`, `{question}`; a line `---` splits system "
           "and user messages).",
           _llm),
    Option("sphinx_rag_llm_browser", True, (bool, dict),
           "Answers from a model in the reader's own browser, nothing to install (Ask, when no LLM server "
           "is set or reachable): the browser's built-in model where it has one (the Prompt API), else a "
           "GGUF model run by wllama (llama.cpp in WebAssembly) in a worker, downloaded once after the "
           "reader agrees (its name and size shown first), verified by its sha256 and kept in the browser. "
           "`True`: the built-in model, and readers may name a GGUF file in the dialog's settings (the site "
           "ships wllama's files: 10 MB, fetched only by a reader who uses them). A dict names the site's "
           "own model: `url` (an http(s) URL, or a path from the site root, that answers without a "
           "redirect), `sha256`, `bytes`, `name`, `context_tokens` (2048), `builtin` (True). `False`: "
           "neither (wllama's files are left out of the site).",
           _llm_browser, example={"url": "_static/models/qwen2.5-0.5b-instruct-q4_k_m.gguf",
                                  "sha256": "<sha256sum of the file>", "bytes": 491400032,
                                  "name": "Qwen2.5 0.5B Instruct"}),
    Option("sphinx_rag_suggestions", ["auto"], (list, tuple),
           "Questions the empty search dialog suggests. `\"auto\"` stands for up to 6 mined from the "
           "site at build time (section titles and object cards turned into questions, kept only "
           "when their own first result is where they came from); other strings are shown as "
           "given, in order. E.g. `[\"How do I install mlkit?\", \"auto\"]` extends the mined ones, "
           "`[\"How do I install mlkit?\"]` replaces them, `[]` shows none.", _questions),
    Option("sphinx_rag_feedback_url", "", (str,),
           "Adds \"Report a bad result\" to the search dialog: a URL template, e.g. a new-issue form "
           "`https://github.com/ORG/REPO/issues/new?title=Search:+{query}&body={results}`. `{query}` "
           "becomes the query, `{results}` the results shown and a golden-set entry to complete (both "
           "URL-encoded). The page sends nothing itself: the reader lands on the prefilled form. Empty: no link.",
           _feedback_url),
    Option("sphinx_rag_federation", {}, (dict, bool),
           "Other sphinx-rag sites searched from this site's dialog, each result naming its site: a "
           "mapping of names to site URLs, e.g. `{\"numpy\": \"https://numpy.org/doc/stable/\"}`, or "
           "`{\"url\": ..., \"enabled\": True}` for one searched before the reader turns it on (older "
           "versions of the docs the same way: `{\"v1.4\": \"https://mlkit.org/1.4/\"}`). `True`: every "
           "`intersphinx_mapping` site that publishes a sphinx-rag index readable from other sites (CORS), "
           "checked at each build (3 s, a line each). Readers turn sources on and off in the dialog; a site "
           "nobody turns on costs nothing. Empty: this site only.",
           _federation, rebuild=""),
    Option("sphinx_rag_golden", "", (str,),
           "A golden set checked by every build: a JSON file (relative to conf.py) of searches readers "
           "depend on, each a query, the page or anchor its answer must come from and optionally the "
           "rank it must reach (10), e.g. `[{\"query\": \"impute missing values\", \"url\": "
           "\"user_guide/impute.html\", \"rank\": 3}]`. Each entry that falls short is a warning "
           "(`-W` fails the build), then one summary line; a file over 4 MB, nested over 16 deep or not a "
           "regular file is one warning, and the build goes on. `sphinx-rag golden add FILE QUERY URL` "
           "appends an entry. Empty: no check."),
    Option("sphinx_rag_docstring_warnings", False, (bool,),
           "Whether a docstring numpydoc cannot parse (sphinx-rag then chunks it as narrative text, "
           "nothing lost) is a warning. False: it is not an error in your docs, so a `-W` build passes "
           "as it did without sphinx-rag: `-v` lists each one (object and file:line) and the build "
           "ends with their count. True: each is a warning of type `sphinx_rag.docstring`, for "
           "maintainers who want their docstrings strict numpydoc (`suppress_warnings` still silences "
           "them)."),
]

_BY_NAME = {o.name: o for o in CONFIG}


def validate(values: dict[str, Any]) -> dict[str, Any]:
    """The values as the build uses them (choices lowercased: ``"RRF"`` is ``"rrf"``).

    Raises ConfigError naming the value, what it means and an example of a valid one.
    """
    out = dict(values)
    for name, value in values.items():
        opt = _BY_NAME[name]
        example = opt.default if opt.example is None else opt.example
        explain = f" ({opt.help}); for example: {name} = {example!r}"
        if not isinstance(value, opt.types) or (isinstance(value, bool) and bool not in opt.types):
            allowed = " or ".join("None" if t is type(None) else t.__name__ for t in opt.types)
            raise ConfigError(f"[sphinx-rag] {name} must be {allowed}, got {value!r}{explain}")
        if opt.choices:
            if value.lower() not in opt.choices:
                close = difflib.get_close_matches(value.lower(), opt.choices, n=1)
                hint = f", did you mean {close[0]!r}?" if close else ""
                allowed = ", ".join(repr(c) for c in opt.choices)
                raise ConfigError(f"[sphinx-rag] {name} = {value!r} is not one of {allowed}{hint}{explain}")
            out[name] = value.lower()
        message = opt.check(value) if opt.check else None
        if message:
            raise ConfigError(f"[sphinx-rag] {name} {message}; got {value!r}{explain}")
    return out


def unknown_names(names) -> list[str]:
    """Messages for ``sphinx_rag_*`` names in conf.py that are not options (typos)."""
    out = []
    for name in sorted(n for n in names if n.startswith("sphinx_rag_") and n not in _BY_NAME):
        close = difflib.get_close_matches(name, list(_BY_NAME), n=1)
        out.append(f"[sphinx-rag] unknown config value {name!r}" + (f"; did you mean {close[0]!r}?" if close else ""))
    return out
