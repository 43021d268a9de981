/* Counting work, as gpukb.measuring.counting and gpukb.attention.costs count it: operations and fewest bytes of a
 * matrix product, a 2-D convolution and an attention forward pass, and the bytes of a key/value cache. The same
 * checks in the same order, so the first bad size gets the library's message. Counts are BigInt (Python ints).
 */
import { flag, integer, positiveInt, ratio, valueError, reprString } from "./common.js";

/** counting.element_bytes, with the table (ELEMENT_BYTES) from the data island. */
export function elementBytes(table, dtype) {
  if (!Object.hasOwn(table, dtype)) {
    const known = "[" + Object.keys(table).sort().map(reprString).join(", ") + "]";
    throw valueError(`unknown element type ${reprString(String(dtype))}; known: ${known}`);
  }
  return BigInt(table[dtype]);
}

const positive = (sizes) => {
  for (const [name, value] of sizes) positiveInt(name, value);
};

export function gemmFlops(m, n, k) {
  positive([["m", m], ["n", n], ["k", k]]);
  return 2n * m * n * k;
}

export function gemmBytes(m, n, k, a) {
  positive([["m", m], ["n", n], ["k", k], ["a_bytes", a], ["b_bytes", a], ["c_bytes", a]]);
  return m * k * a + k * n * a + m * n * a;
}

const floorDiv = (a, b) => {
  const q = a / b;
  return (a % b !== 0n) && ((a < 0n) !== (b < 0n)) ? q - 1n : q;
};

/** counting.conv2d_counts for (n, c_in, h, w), out_channels, (kh, kw), stride, padding, bias. */
export function conv2dCounts(n, cIn, h, w, outChannels, kh, kw, stride, padding, bias) {
  bias = flag("bias", bias);
  positive([["n", n], ["c_in", cIn], ["h", h], ["w", w], ["out_channels", outChannels], ["kh", kh], ["kw", kw],
    ["stride", stride]]);
  integer("padding", padding, 0);
  const hOut = floorDiv(h + 2n * padding - kh, stride) + 1n;
  const wOut = floorDiv(w + 2n * padding - kw, stride) + 1n;
  if (hOut < 1n || wOut < 1n) throw valueError(`a ${kh}×${kw} kernel does not fit a ${h}×${w} input padded by ${padding}`);
  const outputElems = n * outChannels * hOut * wOut;
  const macs = outputElems * cIn * kh * kw;
  return {
    flops: 2n * macs + (bias ? outputElems : 0n),
    params: outChannels * cIn * kh * kw + (bias ? outChannels : 0n),
    inputElems: n * cIn * h * w,
    outputElems,
    bytes(elem) {
      positiveInt("elem_bytes", elem);
      return (this.inputElems + this.params + this.outputElems) * elem;
    },
  };
}

export function causalPairs(q, kv) {
  positive([["q_len", q], ["kv_len", kv]]);
  const fullRows = q - kv > 0n ? q - kv : 0n;
  const partial = q < kv ? q : kv;
  return (partial * (partial + 1n)) / 2n + fullRows * kv;
}

export function attentionFlops(batch, heads, q, kv, d, causal) {
  positive([["batch", batch], ["heads", heads], ["q_len", q], ["kv_len", kv], ["head_dim", d]]);
  const pairs = flag("causal", causal) ? causalPairs(q, kv) : q * kv;
  return 4n * batch * heads * pairs * d;
}

/** counting.attention_bytes, grouped-query attention included. */
export function attentionBytes(batch, heads, q, kv, d, elem, kvHeads) {
  positive([["batch", batch], ["heads", heads], ["q_len", q], ["kv_len", kv], ["head_dim", d], ["elem_bytes", elem]]);
  const g = kvHeads === null ? heads : positiveInt("kv_heads", kvHeads);
  if (heads % g) {
    const err = valueError(`kv_heads (${g}) must divide heads (${heads})`);
    err.arg = "kv_heads";
    throw err;
  }
  return batch * d * elem * (2n * heads * q + 2n * g * kv);
}

/** attention.costs.attention_costs. */
export function attentionCosts(table, batch, heads, q, kv, d, kvHeads, causal, dtype) {
  kvHeads = kvHeads === null ? heads : positiveInt("kv_heads", kvHeads);
  if (positiveInt("heads", heads) % kvHeads) {
    const err = valueError(`kv_heads (${kvHeads}) must divide heads (${heads})`);
    err.arg = "kv_heads";
    throw err;
  }
  const size = elementBytes(table, dtype);
  const causalFlag = flag("causal", causal);
  const flops = attentionFlops(batch, heads, q, kv, d, causalFlag);
  const io = batch * d * size * (2n * heads * q + 2n * kvHeads * kv);
  const scores = batch * heads * q * kv * size;
  return {
    flops,
    io_bytes: io,
    score_bytes: scores,
    unfused_bytes: io + 4n * scores,
    intensity: ratio(flops, io),
    unfused_intensity: ratio(flops, io + 4n * scores),
  };
}

/** attention.costs.kv_cache_bytes. */
export function kvCacheBytes(table, layers, batch, seq, kvHeads, d, dtype) {
  positive([["layers", layers], ["batch", batch], ["seq", seq], ["kv_heads", kvHeads], ["head_dim", d]]);
  return 2n * layers * batch * seq * kvHeads * d * elementBytes(table, dtype);
}
