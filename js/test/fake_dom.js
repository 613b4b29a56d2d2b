// @ts-check
// A tiny fake DOM for js/src/llm/markdown.js: the node methods renderMarkdown and MarkdownStream
// may use, and traps on every HTML-parsing API (innerHTML, outerHTML, insertAdjacentHTML,
// document.write).

export class FakeNode {
  constructor(nodeType, name, text = '') {
    this.nodeType = nodeType;
    this.nodeName = name;
    this.tagName = nodeType === 1 ? name.toUpperCase() : undefined;
    this.data = text;
    /** @type {FakeNode[]} */
    this.childNodes = [];
    /** @type {Map<string, string>} */
    this.attributes = new Map();
  }

  appendChild(node) {
    if (node.nodeType === 11) {
      this.childNodes.push(...node.childNodes);
      node.childNodes = [];
    } else this.childNodes.push(node);
    return node;
  }

  /** Element.append: nodes, strings as text nodes. */
  append(...nodes) {
    for (const n of nodes) this.appendChild(typeof n === 'string' ? new FakeNode(3, '#text', n) : n);
  }

  replaceChildren(...nodes) {
    this.childNodes = [];
    this.append(...nodes);
  }

  removeChild(node) {
    const at = this.childNodes.indexOf(node);
    if (at < 0) throw new Error('removeChild: not a child');
    this.childNodes.splice(at, 1);
    return node;
  }

  get lastChild() { return this.childNodes[this.childNodes.length - 1] ?? null; }

  setAttribute(name, value) { this.attributes.set(name.toLowerCase(), String(value)); }

  getAttribute(name) { return this.attributes.get(name.toLowerCase()) ?? null; }

  get textContent() { return this.nodeType === 3 ? this.data : this.childNodes.map((c) => c.textContent).join(''); }

  set innerHTML(_) { throw new Error('innerHTML must never be used'); }

  set outerHTML(_) { throw new Error('outerHTML must never be used'); }

  insertAdjacentHTML() { throw new Error('insertAdjacentHTML must never be used'); }

  /** A serialisation of the subtree (tags, attributes, text) to compare two renderings. */
  get markup() {
    if (this.nodeType === 3) return JSON.stringify(this.data);
    const attrs = [...this.attributes].map(([k, v]) => ` ${k}=${JSON.stringify(v)}`).join('');
    return `<${this.nodeName}${attrs}>${this.childNodes.map((c) => c.markup).join('')}</${this.nodeName}>`;
  }

  /** @returns {FakeNode[]} every element below this node */
  elements() { return this.childNodes.flatMap((c) => (c.nodeType === 1 ? [c, ...c.elements()] : [])); }
}

export const fakeDocument = {
  createElement: (tag) => new FakeNode(1, tag.toLowerCase()),
  createTextNode: (text) => new FakeNode(3, '#text', String(text)),
  createDocumentFragment: () => new FakeNode(11, '#document-fragment'),
  write() { throw new Error('document.write must never be used'); },
};

/** The element names below a node, in document order. @param {FakeNode} frag */
export const tags = (frag) => frag.elements().map((e) => e.nodeName);
