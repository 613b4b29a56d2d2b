// @ts-check
/**
 * The browser's storage, or null when it refuses (storage disabled, blocked cookies,
 * some private modes throw on access): then nothing is remembered and nothing breaks.
 * @module storage
 */

/**
 * @param {"localStorage" | "sessionStorage"} kind
 * @returns {Storage | null}
 */
export function usableStorage(kind) {
  try {
    const store = window[kind];
    const probe = "sphinx-rag-probe";
    store.setItem(probe, probe);
    store.removeItem(probe);
    return store;
  } catch {
    return null;
  }
}
