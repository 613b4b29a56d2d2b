// Init script of benchmarks/bench_browser.py: added with context.add_init_script(path=...),
// so it runs in every page before the page's own scripts. It keeps a handle on the
// search worker and timestamps the worker's messages (window.__ragBench.events), and
// gives bench_browser.py two functions to call with page.evaluate:
//   __ragBench.focusAndTime(query, timeoutMs)  first focus -> keyword / hybrid results
//   __ragBench.runQueries(queries, timeoutMs)  warm queries sent straight to the worker
(() => {
  const rag = (window.__ragBench = { worker: null, events: [], nextId: 1000000 });
  const Original = window.Worker;
  window.Worker = class extends Original {
    constructor(url, options) {
      super(url, options);
      if (String(url).includes("/_static/sphinx_rag/worker.js")) {  // the search worker
        rag.worker = this;
        this.addEventListener("message", (e) => {
          const m = e.data || {};
          rag.events.push({ t: performance.now(), wall: Date.now(), type: m.type, mode: m.mode, id: m.id,
                            n: Array.isArray(m.results) ? m.results.length : null, timings: m.timings || null });
        });
      }
    }
  };

  // Focus the search button or box (this starts loading the index), open the dialog with a
  // query as if typed, and time keyword results, hybrid-ready and hybrid results.
  rag.focusAndTime = async (query, timeoutMs) => {
    // the theme's button, ours, or the theme's search box the client took over (searchbar.js main)
    const buttons = [...document.querySelectorAll(
      ".search-button__button, button.sphinx-rag-trigger, input[aria-haspopup=dialog]")];
    const button = buttons.find((b) => b.offsetParent !== null) || buttons[0];
    if (!button) return { error: "no search button or search box on the page" };
    const out = { keywordShown: null, hybridShown: null, keywordShownWall: null, hybridShownWall: null };
    const t0 = performance.now();
    const t0Wall = Date.now();
    button.focus();  // first focus: warmUp() starts the worker
    const dialog = window.sphinxRag.dialog;
    dialog.open();
    dialog.input.value = query;
    dialog.input.dispatchEvent(new Event("input"));
    const box = document.getElementById("sphinx-rag-listbox");
    const observer = new MutationObserver(() => {
      if (box.dataset.query !== query) return;
      const t = performance.now() - t0;
      if (box.dataset.mode === "keyword" && out.keywordShown === null) { out.keywordShown = t; out.keywordShownWall = Date.now(); }
      if (box.dataset.mode === "hybrid" && out.hybridShown === null) { out.hybridShown = t; out.hybridShownWall = Date.now(); }
    });
    observer.observe(box, { attributes: true, attributeFilter: ["data-mode", "data-query"] });
    const deadline = t0 + timeoutMs;
    while (performance.now() < deadline) {
      const status = rag.events.find((e) => e.type === "status" && (e.mode === "hybrid" || e.mode === "error"));
      const failed = rag.events.find((e) => e.type === "status" && e.mode === "error");
      if (failed || (status && out.hybridShown !== null)) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    observer.disconnect();
    const first = (pred) => { const e = rag.events.find(pred); return e ? e.t - t0 : null; };
    const wall = (pred) => { const e = rag.events.find(pred); return e ? e.wall : null; };
    return {
      ...out,
      t0Wall,
      keywordResultsWall: wall((e) => e.type === "results" && e.mode === "keyword"),
      hybridResultsWall: wall((e) => e.type === "results" && e.mode === "hybrid"),
      keywordReady: first((e) => e.type === "status" && e.mode === "keyword"),
      keywordResults: first((e) => e.type === "results" && e.mode === "keyword"),
      hybridReady: first((e) => e.type === "status" && e.mode === "hybrid"),
      hybridResults: first((e) => e.type === "results" && e.mode === "hybrid"),
      error: (rag.events.find((e) => e.type === "status" && e.mode === "error") || {}).mode || null,
      status: document.querySelector(".sphinx-rag-status")?.textContent || "",
      crossOriginIsolated: globalThis.crossOriginIsolated,
    };
  };

  // Send queries straight to the search worker, one at a time, and collect the worker's
  // timings and the page's round trip (the dialog ignores these ids).
  rag.runQueries = async (queries, timeoutMs) => {
    const w = rag.worker;
    const out = [];
    for (const query of queries) {
      const id = ++rag.nextId;
      const t0 = performance.now();
      const msg = await new Promise((resolve) => {
        const timer = setTimeout(() => { w.removeEventListener("message", onMessage); resolve(null); }, timeoutMs);
        function onMessage(e) {
          if (e.data && e.data.type === "results" && e.data.id === id) {
            clearTimeout(timer);
            w.removeEventListener("message", onMessage);
            resolve(e.data);
          }
        }
        w.addEventListener("message", onMessage);
        w.postMessage({ type: "search", id, query, k: 10 });
      });
      const roundTrip = performance.now() - t0;
      if (!msg) { out.push({ query, timeout: true }); continue; }
      out.push({ query, mode: msg.mode, n: msg.results.length, roundTrip,
                 embed: msg.timings ? msg.timings.embed_ms : null, retrieve: msg.timings ? msg.timings.retrieve_ms : null });
    }
    return out;
  };
})();
