/* The attention-cost calculator: a port of gpukb.attention.costs.attention_summary (attention_costs and
 * kv_cache_bytes), with the element sizes from the data island (gpukb.measuring.counting.ELEMENT_BYTES).
 */
import { bytes, count, el, fieldValue, raw, reprFloat, resultTable, wire } from "./common.js";
import { attentionCosts, kvCacheBytes } from "./counting.js";

/** attention_summary. */
export function attentionSummary(table, a) {
  const costs = attentionCosts(table, a.batch, a.heads, a.q_len, a.kv_len, a.head_dim, a.kv_heads, a.causal, a.dtype);
  const kv = a.kv_heads === null ? a.heads : a.kv_heads;
  return {
    ...costs,
    kv_per_token: kvCacheBytes(table, a.layers, 1n, 1n, kv, a.head_dim, a.dtype),
    kv_per_sequence: kvCacheBytes(table, a.layers, 1n, a.kv_len, kv, a.head_dim, a.dtype),
    kv_total: kvCacheBytes(table, a.layers, a.batch, a.kv_len, kv, a.head_dim, a.dtype),
  };
}

export function readArgs(boxes) {
  const value = (name) => fieldValue(raw(boxes[name]));
  return {
    batch: value("batch"), heads: value("heads"), kv_heads: value("kv_heads"), q_len: value("q_len"),
    kv_len: value("kv_len"), head_dim: value("head_dim"), causal: raw(boxes.causal), dtype: raw(boxes.dtype),
    layers: value("layers"),
  };
}

export function mount(root, data) {
  wire(
    root,
    (boxes) => attentionSummary(data.element_bytes, readArgs(boxes)),
    (out, r) => {
      out.append(el("p", { class: "gpukb-calc-headline" },
        `A naive kernel writes a score matrix of ${bytes(r.score_bytes).replace(/^.*\(|\)$/g, "")}; ` +
        `the cache holds ${bytes(r.kv_per_token).replace(/^.*\(|\)$/g, "")} per token.`));
      out.append(resultTable([
        ["FLOPs (the two matrix products)", count(r.flops), "flops", r.flops],
        ["bytes, fused (Q, K, V read once, O written once)", bytes(r.io_bytes), "io_bytes", r.io_bytes],
        ["score matrix a naive kernel writes", bytes(r.score_bytes), "score_bytes", r.score_bytes],
        ["bytes, unfused (scores written, read, probabilities written, read)", bytes(r.unfused_bytes),
          "unfused_bytes", r.unfused_bytes],
        ["FLOP per byte, fused", r.intensity.toPrecision(4), "intensity", reprFloat(r.intensity)],
        ["FLOP per byte, unfused", r.unfused_intensity.toPrecision(4), "unfused_intensity",
          reprFloat(r.unfused_intensity)],
        ["KV cache per token (all layers)", bytes(r.kv_per_token), "kv_per_token", r.kv_per_token],
        ["KV cache per sequence of kv_len tokens", bytes(r.kv_per_sequence), "kv_per_sequence", r.kv_per_sequence],
        ["KV cache of the batch", bytes(r.kv_total), "kv_total", r.kv_total],
      ]));
    },
  );
}
