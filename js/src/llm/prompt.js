// @ts-check
/**
 * Search results -> the chat messages sent to the LLM, within its context window.
 *
 * Mirrors sphinx_rag/llm/template.py and sphinx_rag/llm/prompt.py: the same prompt
 * template rules (the template itself comes from the site's settings, made by
 * `browser_settings()` in Python), the same passage numbering "[n] Title (URL)\ntext",
 * the same token estimate (ceil(code points / 4)) and the same fitting (drop
 * lowest-ranked first, cut the top passage only after a whole sentence).
 * js/test/prompt.test.js compares both on the same inputs. The LLM reads a result's display
 * form as plain text (llmPassage, Python's llm_passage: shorter than the embedded text and
 * free of reST markup; see sphinx_rag/llm/prompt.py for the measurement). A follow-up's
 * earlier turns (thread.js's history) come as user/assistant messages before the question's
 * own and count in the reserve.
 *
 * @module prompt
 */

import { displayText } from '../search/display.js';
import { history, historyMessages } from './thread.js';

/**
 * The default prompt template, the same text as Python's `DEFAULT_PROMPT` (checked by
 * js/test/prompt.test.js): used when the site configures no LLM and a reader sets their own.
 */
export const DEFAULT_PROMPT = `You are an expert of the {project} project. You answer questions about {project} \
using only the numbered excerpts of its documentation given below.

Rules:
- Answer only from the provided content; do not use other knowledge and do not invent \
APIs, parameters or values.
- Be succinct.
- Use backticks for code names: classes, functions, methods, parameters, values and \
anything containing underscores.
- Cite the excerpts that support each statement as [n], e.g. [1] or [2][3].
- If the content does not contain the answer, say so plainly instead of guessing.
- After the answer you may suggest up to 3 short follow-up questions that the excerpts \
can answer: a line "Follow-up questions:", then one question per line, each starting with "- ".
---
Documentation excerpts:

{passages}

Question: {question}`;

/**
 * The prompt of an in-browser model (ask_local.js: the built-in model, a GGUF model): a small
 * model follows few rules, so it gets three (the excerpts only, a short answer, [n]
 * citations), and the last words it reads ask for them again. No follow-up questions (small
 * models write them badly). The site's own prompt (sphinx_rag_llm) is its server's.
 */
export const SHORT_PROMPT = `You answer questions about {project} using only the numbered documentation excerpts \
given to you. Answer in one to three short sentences. After each statement, cite the excerpt it comes from as [n], \
e.g. [1]. If the excerpts do not answer the question, say so.
---
Excerpts:

{passages}

Question: {question}

Answer in a few sentences, citing the excerpts as [n].`;

export const ANSWER_RESERVE_TOKENS = 512; // room for the answer (also its max_tokens)
export const MESSAGE_OVERHEAD_TOKENS = 16;
export const PASSAGE_HEADER_CHARS = 100; // a passage's "[n] Title (URL)" line and the blank line after it, about
export const PLACEHOLDERS = ['project', 'passages', 'question'];
const SEPARATOR = '---';
const ABBREVIATIONS = ['e.g.', 'i.e.', 'cf.', 'vs.', 'resp.'];

/**
 * @typedef {{title: string, url: string, text: string}} Passage  a search result (extra fields kept)
 * @typedef {{role: 'system'|'user'|'assistant', content: string}} Message
 */

/**
 * The result with `text` replaced by the plain text of its display form (what the LLM
 * reads); a result without a display keeps its text.
 * @template {Passage & {display?: import('../search/display.js').Display}} P
 * @param {P} result
 * @returns {P}
 */
export function llmPassage(result) {
  return Array.isArray(result.display) ? { ...result, text: displayText(result.display) } : result;
}

/**
 * Approximate token count: ceil(Unicode code points / 4), like Python's len(text) / 4.
 * @param {string} text
 */
export function estimateTokens(text) {
  let n = 0;
  for (const _ of text) n++; // eslint-disable-line no-unused-vars
  return Math.ceil(n / 4);
}

/**
 * An error message for a bad template (same rules as Python's validate_prompt), or null.
 * @param {unknown} prompt
 * @returns {string|null}
 */
export function validatePrompt(prompt) {
  if (typeof prompt !== 'string' || !prompt.trim()) return 'must be a non-empty string';
  const fields = new Set();
  for (const m of prompt.matchAll(/\{\{|\}\}|\{([^{}]*)\}|[{}]/g)) {
    if (m[0] === '{{' || m[0] === '}}') continue;
    if (m[1] === undefined) return "is not a valid template (single brace); write literal braces as '{{' and '}}'";
    if (!PLACEHOLDERS.includes(m[1])) {
      return `has an unknown placeholder {${m[1]}}; allowed: {project}, {passages}, {question} ` +
        "(write literal braces as '{{' and '}}')";
    }
    fields.add(m[1]);
  }
  for (const name of ['question', 'passages']) {
    if (!fields.has(name)) return `must contain the placeholder {${name}}`;
  }
  return null;
}

/**
 * Python's str.format for a validated template.
 * @param {string} template @param {Record<string, string>} values
 */
function fill(template, values) {
  return template.replace(/\{\{|\}\}|\{(\w+)\}/g, (m, name) => (name ? values[name] : m[0]));
}

/** @param {number} n @param {Passage} p */
function formatPassage(n, p) {
  return `[${n}] ${p.title} (${p.url})\n${p.text.trim()}`;
}

/**
 * "[n] Title (URL)\ntext" numbered from 1, separated by a blank line.
 * @param {Passage[]} passages
 */
export function formatPassages(passages) {
  return passages.map((p, i) => formatPassage(i + 1, p)).join('\n\n');
}

/**
 * Offsets just after each sentence (or line) end of `text`: ".", "!" or "?" followed by
 * whitespace (not after e.g./i.e./cf./vs./resp.), or a line break. Same as Python.
 * @param {string} text
 * @returns {number[]}
 */
export function sentenceEnds(text) {
  const ends = new Set();
  for (let i = 0; i < text.length - 1; i++) {
    const ch = text[i];
    if (ch === '\n') {
      ends.add(i);
    } else if ((ch === '.' || ch === '!' || ch === '?') && /\s/.test(text[i + 1])) {
      const start = Math.max(text.lastIndexOf(' ', i - 1), text.lastIndexOf('\n', i - 1)) + 1;
      if (i === 0 || !ABBREVIATIONS.includes(text.slice(start, i + 1).toLowerCase())) ends.add(i + 1);
    }
  }
  return [...ends].filter((e) => text.slice(0, e).trim() !== '').sort((a, b) => a - b);
}

/**
 * The passages that fit in `maxContextTokens - reserveTokens` estimated tokens (Python's
 * fit_passages): taken in rank order, one that does not fit in what is left is skipped;
 * the top passage alone too long is cut after the last whole sentence that fits.
 * @template {Passage} P
 * @param {P[]} passages @param {number} maxContextTokens @param {number} reserveTokens
 * @returns {P[]}
 */
export function fitPassages(passages, maxContextTokens, reserveTokens) {
  const budget = maxContextTokens - reserveTokens;
  /** @type {P[]} */
  const kept = [];
  passages.forEach((p, rank) => {
    if (estimateTokens(formatPassages([...kept, p])) <= budget) kept.push(p);
    else if (rank === 0) {
      const cut = cutToFit(p, budget);
      if (cut) kept.push(cut);
    }
  });
  return kept;
}

/**
 * The passage with its text cut after the last whole sentence that fits, or null.
 * @template {{title: string, url: string, text: string}} P
 * @param {P} passage
 * @param {number} budget
 * @returns {P | null}
 */
function cutToFit(passage, budget) {
  const text = passage.text.trim();
  const ends = sentenceEnds(text);
  for (let j = ends.length - 1; j >= 0; j--) {
    const cut = { ...passage, text: text.slice(0, ends[j]).trimEnd() };
    if (estimateTokens(formatPassages([cut])) <= budget) return cut;
  }
  return null;
}

/**
 * @param {string} prompt @param {Record<string, string>} values
 * @returns {Message[]}
 */
function render(prompt, values) {
  const lines = fill(prompt, values).split('\n');
  const at = lines.indexOf(SEPARATOR);
  if (at >= 0) {
    return [
      { role: 'system', content: lines.slice(0, at).join('\n').trim() },
      { role: 'user', content: lines.slice(at + 1).join('\n').trim() },
    ];
  }
  return [{ role: 'user', content: lines.join('\n').trim() }];
}

/**
 * The template's messages, the earlier turns just before the last one (the question's).
 * @param {string} prompt @param {Record<string, string>} values @param {[string, string][]} earlier
 * @returns {Message[]}
 */
function messagesOf(prompt, values, earlier) {
  const messages = render(prompt, values);
  return [...messages.slice(0, -1), ...historyMessages(earlier), ...messages.slice(-1)];
}

/**
 * Tokens the context keeps for all but the passages (Python's _reserve): the prompt without
 * them (the earlier turns included), the answer's room and the chat template's. Throws for
 * an invalid template.
 * @param {string} question @param {string} project @param {string} prompt @param {[string, string][]} earlier
 */
function reserveTokens(question, project, prompt, earlier) {
  const error = validatePrompt(prompt);
  if (error) throw new Error(`[sphinx-rag] the LLM prompt ${error}`);
  const empty = messagesOf(prompt, { project, passages: '', question }, earlier);
  return empty.reduce((s, m) => s + estimateTokens(m.content), 0) + ANSWER_RESERVE_TOKENS + MESSAGE_OVERHEAD_TOKENS;
}

/**
 * Characters the texts of `k` passages may take together in the context window (at least
 * 1; Python's passage_budget): 4 per token left after the reserve, less PASSAGE_HEADER_CHARS
 * each. The search sizes its passages to it (expand.js) before fitPassages checks them.
 * @param {string} question @param {number} k
 * @param {Pick<import('./llm_settings.js').LLMSettings, 'prompt'|'project'|'max_context_tokens'>} settings
 * @param {unknown[]} [thread]  the earlier turns ({question, answer}, oldest first) of a follow-up
 */
export function passageBudget(question, k, settings, thread = []) {
  const { prompt, project = '', max_context_tokens: maxTokens = 4096 } = settings;
  const left = maxTokens - reserveTokens(question, project, prompt, history(thread, maxTokens));
  return Math.max(1, 4 * left - k * PASSAGE_HEADER_CHARS);
}

/**
 * Chat messages asking `question` about the passages that fit in the context window
 * (same as Python's build_messages). `passages` of the result are those sent, in citation
 * order: "[n]" refers to passages[n - 1].
 * @template {Passage} P
 * @param {string} question @param {P[]} passages
 * @param {Pick<import('./llm_settings.js').LLMSettings, 'prompt'|'project'|'max_context_tokens'>} settings
 * @param {unknown[]} [thread]  the earlier turns ({question, answer}, oldest first) of a follow-up
 * @returns {{messages: Message[], passages: P[]}}
 */
export function buildMessages(question, passages, settings, thread = []) {
  const { prompt, project = '', max_context_tokens: maxTokens = 4096 } = settings;
  const earlier = history(thread, maxTokens);
  const reserve = reserveTokens(question, project, prompt, earlier);
  const kept = fitPassages(passages, maxTokens, reserve);
  const text = kept.length ? formatPassages(kept) : '(no documentation excerpt was found)';
  return { messages: messagesOf(prompt, { project, passages: text, question }, earlier), passages: kept };
}
