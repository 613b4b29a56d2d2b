"""Index shards: immutable files named by the hash of their content.

Every file of a sharded index (format 2 and later) except the entry manifest is named
``<kind>-<hash>.<ext>``, where ``hash`` is the first 16 hex digits of the sha256 of
the shard's payload. A reader verifies a shard by hashing what it got; a browser
caches it forever by name; a rebuild that does not change a shard's content does
not rewrite it; and a new index never overwrites a file the previous manifest
still points to, so a half-written index is never visible.

Two encodings (``js/src/search/shards.js`` decodes both):

* **script shards** (``.js``), what keyword search needs: the payload is gzipped
  and the file is one classic-script call, so that a page opened from ``file://``
  (no fetch, no workers) can load it with a ``<script>`` tag::

      sphinxRagShard("terms-0123456789abcdef","<base64 of the gzip stream>");

  The hash is of the gzip stream. Over HTTP and in Python the file is read as text.
* **binary shards** (``.bin``), the dense vectors: raw little-endian arrays (int8
  vectors do not compress); the hash is of the file.

A shard payload that holds numbers and strings together is a little container:
``u32 length of a JSON header | the JSON header | binary body``.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["HASH_CHARS", "MAX_PAYLOAD_BYTES", "ShardError", "script_shard", "script_shards", "read_script_shard",
           "check_script_shard", "gunzip", "binary_shard", "shard_hash", "dumps", "pack", "unpack", "varints", "read_varints"]

HASH_CHARS = 16
#: The most a script shard may decompress to unless its reader says less (``index.IndexReader``
#: sizes each kind from the manifest): the hash proves the gzip stream, not that it is small.
MAX_PAYLOAD_BYTES = 64 << 20
REGISTER = "sphinxRagShard"  # the global a file:// page defines before loading shards
_SCRIPT = re.compile(r'^sphinxRagShard\("([a-z]+-[0-9a-f]{16})","([A-Za-z0-9+/=]*)"\);\n?$')


class ShardError(ValueError):
    """A shard that is not what its name says (truncated, corrupted, or not a shard)."""


def shard_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:HASH_CHARS]


def dumps(obj) -> bytes:
    """Canonical JSON: sorted keys, no spaces, UTF-8 (two builds give the same bytes)."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def script_shard(kind: str, payload: bytes) -> tuple[str, bytes]:
    """(file name, file bytes) of a script shard holding ``payload``."""
    stream = gzip.compress(payload, compresslevel=9, mtime=0)
    name = f"{kind}-{shard_hash(stream)}"
    body = f'{REGISTER}("{name}","{base64.b64encode(stream).decode("ascii")}");\n'
    return f"{name}.js", body.encode("ascii")


def script_shards(kind: str, payloads: list[bytes]) -> list[tuple[str, bytes]]:
    """``script_shard`` of each payload, on a few threads: zlib and sha256 let go of the
    GIL, and compressing is most of writing an index (25k chunks: 0.35 s -> 0.20 s on 2 cores)."""
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        return list(pool.map(lambda payload: script_shard(kind, payload), payloads, chunksize=16))


def check_script_shard(file_name: str, data: bytes) -> bytes:
    """The gzip stream of a script shard file, verified against the hash in its name (not
    decompressed: a reader decompresses it with its own cap, ``read_script_shard``)."""
    match = _SCRIPT.match(data.decode("ascii", errors="replace"))
    if not match or f"{match.group(1)}.js" != file_name:
        raise ShardError(f"{file_name} is not a sphinx-rag shard (truncated or replaced)")
    try:
        stream = base64.b64decode(match.group(2), validate=True)
    except ValueError:
        raise ShardError(f"{file_name} is not a sphinx-rag shard (its base64 is damaged)") from None
    if f"{match.group(1).split('-')[0]}-{shard_hash(stream)}" != match.group(1):
        raise ShardError(f"{file_name} does not match its hash (corrupted)")
    return stream


def read_script_shard(file_name: str, data: bytes, max_bytes: int = MAX_PAYLOAD_BYTES) -> bytes:
    """The verified payload of a script shard file, at most ``max_bytes`` (ShardError beyond:
    a small stream that inflates to gigabytes is refused after ``max_bytes``, not held)."""
    return gunzip(check_script_shard(file_name, data), max_bytes, file_name)


def gunzip(stream: bytes, max_bytes: int, what: str = "a gzip stream") -> bytes:
    """``gzip.decompress`` that stops at ``max_bytes`` of output (ShardError)."""
    out, size, rest = [], 0, stream
    while rest:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk = inflater.decompress(rest, max_bytes + 1 - size)
            while True:
                out.append(chunk)
                size += len(chunk)
                if size > max_bytes:
                    raise ShardError(f"{what} inflates to more than {max_bytes:,} bytes: refused")
                if inflater.eof or not inflater.unconsumed_tail:
                    break
                chunk = inflater.decompress(inflater.unconsumed_tail, max_bytes + 1 - size)
        except zlib.error as exc:
            raise ShardError(f"{what} is not a gzip stream ({exc})") from None
        if not inflater.eof:
            raise ShardError(f"{what} is truncated")
        rest = inflater.unused_data  # another gzip member (gzip.decompress reads them all)
    return b"".join(out)


def binary_shard(kind: str, data: bytes) -> str:
    """File name of a binary shard."""
    return f"{kind}-{shard_hash(data)}.bin"


def check_binary_shard(file_name: str, data: bytes) -> bytes:
    if binary_shard(file_name.split("-")[0], data) != file_name:
        raise ShardError(f"{file_name} does not match its hash (truncated or corrupted)")
    return data


def pack(header: dict, body: bytes = b"") -> bytes:
    """``u32 header length | JSON header | body``."""
    head = dumps(header)
    return struct.pack("<I", len(head)) + head + body


def unpack(payload: bytes) -> tuple[dict, memoryview]:
    (length,) = struct.unpack_from("<I", payload, 0)
    return json.loads(payload[4:4 + length].decode("utf-8")), memoryview(payload)[4 + length:]


def varints(values) -> bytes:
    """Unsigned LEB128, 7 bits a byte (small gaps between chunk ids take one byte).

    numpy, one pass per byte position: a term shard's thousands of gaps at once."""
    v = np.asarray(values, dtype=np.uint64)
    if v.size == 0:
        return b""
    lengths = np.ones(len(v), dtype=np.int64)
    for bits in range(7, 64, 7):
        lengths += v >= (1 << bits)
    out = np.empty(int(lengths.sum()), dtype=np.uint8)
    at = np.cumsum(lengths) - lengths
    for k in range(int(lengths.max())):
        has = lengths > k
        more = (lengths[has] > k + 1).astype(np.uint8) << 7
        out[at[has] + k] = ((v[has] >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8) | more
    return out.tobytes()


def read_varints(data, count: int, offset: int = 0) -> tuple[list[int], int]:
    """``count`` varints from ``data[offset:]``; returns (values, offset after them)."""
    values = []
    for _ in range(count):
        v = shift = 0
        while True:
            byte = data[offset]
            offset += 1
            v |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
        values.append(v)
    return values, offset
