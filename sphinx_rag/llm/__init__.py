"""Optional answers from a local OpenAI-compatible LLM server (llama.cpp, Ollama, vLLM).

One job per module; the browser mirrors each (``js/src/``):

- ``template``  the prompt template: default text, placeholders, rules (``prompt.js``)
- ``endpoint``  an endpoint as written -> the API base URL (``normalizeEndpoint``, ``llm.js``)
- ``prompt``    search results -> chat messages that fit the context window (``prompt.js``)
- ``client``    HTTP/SSE: ``stream_chat``, ``list_models``, the errors (``llm.js``)
- ``settings``  the manifest's ``settings.llm`` and the merge rule (``llm_settings.js``)
- ``thread``    a follow-up: the earlier turns the model reads, what it is searched as,
                the suggested follow-ups read off an answer (``thread.js``)

The ``sphinx_rag_llm`` config value is validated in ``sphinx_rag/config.py``. This
package imports none of its modules, so the build (config, settings) never loads the
HTTP client; only ``sphinx-rag ask`` does.
"""

