// @ts-check
/**
 * Decode index shards (sphinx_rag/search/shards.py writes them; the format is described there).
 *
 * A script shard file is `sphinxRagShard("<kind>-<hash>","<base64 of a gzip stream>");`:
 * over HTTP it is read as text, from file:// it is run as a classic script that hands
 * the same two strings to `sphinxRagShard`. Either way `scriptPayload` checks that the
 * gzip stream hashes to the name and inflates it, never past a cap: a stream that
 * matches its hash can still inflate to gigabytes (a gzip bomb), so inflating stops at
 * the cap (search/validate.js sizes it from the manifest, within FILE_CEILING). A binary
 * shard's hash is of its bytes.
 * @module shards
 */

export const HASH_CHARS = 16;
/** No shard, inflated or not, is read past this many bytes (honest ones are far smaller: 70 KB at most, 5 MB the model-free encoder). */
export const FILE_CEILING = 32 << 20;
/** Compressed bytes handed to the inflater at a time: one step inflates to at most ~1 MB, so a bomb is stopped near its cap. */
const INFLATE_STEP = 1024;
const SCRIPT = /^sphinxRagShard\("([a-z]+-[0-9a-f]{16})","([A-Za-z0-9+/=]*)"\);\n?$/;

/**
 * Hex sha256 of bytes, or null when SubtleCrypto is unavailable (non-secure contexts).
 * @param {Uint8Array} bytes
 * @returns {Promise<string | null>}
 */
export async function sha256Hex(bytes) {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) return null;
  const digest = new Uint8Array(await subtle.digest("SHA-256", /** @type {BufferSource} */ (bytes)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** @param {string} b64 */
export function decodeBase64(b64) {
  const raw = atob(b64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

/** A file larger than its index allows (a gzip bomb, an endless answer): refused, never retried. */
export class TooLarge extends Error {}

/** @param {number} n */
export function megabytes(n) {
  return n >= 1 << 20 ? `${Math.round((n / (1 << 20)) * 10) / 10} MB` : `${Math.ceil(n / 1024)} KB`;
}

/**
 * Inflate a gzip stream (DecompressionStream: browsers and Node >= 18), at most `maxBytes`
 * of output: fed INFLATE_STEP bytes at a time, so memory stays near the cap whatever
 * the ratio (a 1 KB step of zeros inflates to 1 MB; a whole 64 KB chunk would be 64 MB).
 * @param {Uint8Array} bytes
 * @param {number} [maxBytes]
 * @param {string} [name]  for the error
 * @returns {Promise<Uint8Array>}
 */
export async function gunzip(bytes, maxBytes = FILE_CEILING, name = "a shard") {
  const inflater = new DecompressionStream("gzip");
  const writer = inflater.writable.getWriter();
  const reader = inflater.readable.getReader();
  const feeding = (async () => {
    for (let at = 0; at < bytes.byteLength; at += INFLATE_STEP) {
      await writer.write(/** @type {BufferSource} */ (bytes.subarray(at, at + INFLATE_STEP)));
    }
    await writer.close();
  })();
  feeding.catch(() => {}); // its failure is the reader's too (corrupt data), or ours (cancelled)
  /** @type {Uint8Array[]} */
  const parts = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      reader.cancel().catch(() => {});
      throw new TooLarge(`sphinx-rag: ${name} inflates to more than ${megabytes(maxBytes)}, more than its index allows: refused`);
    }
    parts.push(value);
  }
  return concat(parts, total);
}

/**
 * @param {Uint8Array[]} parts
 * @param {number} total
 */
export function concat(parts, total) {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/**
 * The two strings of a script shard file's text, or null if it is not one.
 * @param {string} text
 * @returns {{name: string, base64: string} | null}
 */
export function parseScriptShard(text) {
  const match = SCRIPT.exec(text);
  return match ? { name: match[1], base64: match[2] } : null;
}

/**
 * The verified payload of a script shard.
 * @param {string} name  the expected name, e.g. "terms-0123456789abcdef"
 * @param {string} base64  the second argument of the sphinxRagShard call
 * @param {boolean} [verify]  check the hash (skipped without SubtleCrypto)
 * @param {number} [maxBytes]  at most this many bytes inflated (TooLarge)
 * @returns {Promise<Uint8Array>}
 */
export async function scriptPayload(name, base64, verify = true, maxBytes = FILE_CEILING) {
  let stream;
  try {
    stream = decodeBase64(base64);
  } catch {
    throw new ShardError(`${name} is not a sphinx-rag shard (truncated or replaced)`);
  }
  if (verify) await checkHash(name, stream);
  try {
    return await gunzip(stream, maxBytes, name);
  } catch (err) {
    if (err instanceof TooLarge) throw err;
    throw new ShardError(`${name} could not be inflated (corrupted)`);
  }
}

/**
 * Throws unless `bytes` hash to the hash in `name` (`<kind>-<hash>[.ext]`).
 * @param {string} name
 * @param {Uint8Array} bytes
 */
export async function checkHash(name, bytes) {
  const want = name.split("-")[1]?.slice(0, HASH_CHARS);
  const sha = await sha256Hex(bytes);
  if (sha !== null && sha.slice(0, HASH_CHARS) !== want) {
    throw new ShardError(`${name} does not match its hash (corrupted, or the docs were rebuilt while loading)`);
  }
}

export class ShardError extends Error {}

/**
 * `u32 header length | JSON header | body` (shards.py pack).
 * @param {Uint8Array} payload
 * @returns {{header: any, body: Uint8Array}}
 */
export function unpack(payload) {
  const length = new DataView(payload.buffer, payload.byteOffset, payload.byteLength).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(payload.subarray(4, 4 + length)));
  return { header, body: payload.subarray(4 + length) };
}

/** @param {Uint8Array} payload */
export function json(payload) {
  return JSON.parse(new TextDecoder().decode(payload));
}

/**
 * `count` unsigned LEB128 values from `data[offset..]` (ShardError when they run past its end).
 * @param {Uint8Array} data
 * @param {number} count
 * @param {number} [offset]
 * @returns {{values: Float64Array, offset: number}}
 */
export function readVarints(data, count, offset = 0) {
  if (!(count <= data.length - offset)) throw new ShardError(`${count} numbers cannot fit in ${data.length - offset} bytes`);
  const values = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    let v = 0;
    let scale = 1;
    for (;;) {
      if (offset >= data.length) throw new ShardError("a number runs past the end of its shard");
      const byte = data[offset++];
      v += (byte & 0x7f) * scale;
      if (byte < 0x80) break;
      scale *= 128;
    }
    values[i] = v;
  }
  return { values, offset };
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * `n` little-endian items at `offset` of `bytes` as a typed array (a view when possible).
 * @template {Uint16ArrayConstructor | Uint32ArrayConstructor | Float32ArrayConstructor} T
 * @param {Uint8Array} bytes
 * @param {T} Type
 * @param {number} offset
 * @param {number} n
 * @returns {InstanceType<T>}
 */
export function littleEndian(bytes, Type, offset, n) {
  const at = bytes.byteOffset + offset;
  if (LITTLE_ENDIAN && at % Type.BYTES_PER_ELEMENT === 0) {
    return /** @type {InstanceType<T>} */ (new Type(/** @type {ArrayBuffer} */ (bytes.buffer), at, n));
  }
  const size = Type.BYTES_PER_ELEMENT;
  const view = new DataView(bytes.buffer, at, n * size);
  const out = new Type(n);
  for (let i = 0; i < n; i++) {
    out[i] = Type === Float32Array ? view.getFloat32(i * 4, true)
      : size === 2 ? view.getUint16(i * 2, true) : view.getUint32(i * 4, true);
  }
  return /** @type {InstanceType<T>} */ (out);
}

/**
 * Compare strings by code point, as Python sorts them (JS `<` compares UTF-16 units,
 * which differs when a surrogate meets a character from U+E000 up).
 * @param {string} a
 * @param {string} b
 */
export function compareCodePoints(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return fixUnit(x) - fixUnit(y);
  }
  return a.length - b.length;
}

/** @param {number} u */
function fixUnit(u) {
  return u >= 0xd800 ? (u >= 0xe000 ? u - 0x800 : u + 0x2000) : u;
}
