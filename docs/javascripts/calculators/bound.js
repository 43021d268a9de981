/* The bound of a layer: a port of gpukb.performance.layer_bound.layer_bound. The layer is counted as the library
 * counts it (counting.js: gpukb.measuring.counting), then bounded on the chosen GPU's datasheet ceilings and on the ceilings the H100
 * measured; GPU figures and measured ceilings come from the data island (gpu_specs.toml through
 * gpukb.performance.specs, the committed sweep through gpukb.performance.ceilings).
 */
import {
  choice, count, bytes, el, fieldValue, flag, gridTable, raw, real, reprFloat, resultTable, seconds, showLayerFields,
  valueError, wire, reprString,
} from "./common.js";
import { attentionBytes, attentionFlops, conv2dCounts, elementBytes, gemmBytes, gemmFlops } from "./counting.js";

/** Form field of each library argument where the two differ (the convolution's batch is "n", as is a GEMM's). */
export const CONV_FIELDS = { n: "conv_n" };

/** layer_work: operations and bytes of one layer. */
export function layerWork(data, layer, dtype, s, flagOn) {
  choice("layer", layer, Object.keys(data.layers));
  choice("dtype", dtype, data.dtypes);
  flagOn = flag(layer === "conv2d" ? "bias" : "causal", flagOn);
  const table = data.element_bytes;
  if (layer === "gemm") return [gemmFlops(s.m, s.n, s.k), gemmBytes(s.m, s.n, s.k, elementBytes(table, dtype))];
  if (layer === "conv2d") {
    const c = conv2dCounts(s.n, s.c_in, s.h, s.w, s.out_channels, s.kh, s.kw, s.stride, s.padding, flagOn);
    return [c.flops, c.bytes(elementBytes(table, dtype))];
  }
  const flops = attentionFlops(s.batch, s.heads, s.q_len, s.kv_len, s.head_dim, flagOn);
  const size = elementBytes(table, dtype);
  return [flops, attentionBytes(s.batch, s.heads, s.q_len, s.kv_len, s.head_dim, size, s.kv_heads)];
}

function checkRate(name, value) {
  if (!(value > 0 && Number.isFinite(value))) throw valueError(`${name} must be positive and finite; got ${value}`);
}

/** layer_bound._ceiling: roofline.bound and roofline.ridge_point on one pair of ceilings. */
function ceiling(flops, nbytes, tflops, gbps) {
  const peak = tflops * 1e12, bandwidth = gbps * 1e9;
  checkRate("peak_flops", peak);
  checkRate("bandwidth", bandwidth);
  const computeS = real("flops", flops, 0) / peak;
  const memoryS = real("nbytes", nbytes, 0) / bandwidth;
  return {
    tflops, gbps, ridge: peak / bandwidth, compute_s: computeS, memory_s: memoryS,
    time_s: Math.max(computeS, memoryS), limiter: computeS >= memoryS ? "compute" : "memory",
  };
}

/** layer_bound. */
export function layerBound(data, layer, dtype, sizes, gpuId, flagOn) {
  const [flops, nbytes] = layerWork(data, layer, dtype, sizes, flagOn);
  const gpu = data.gpus[gpuId];
  if (!gpu) {
    const ids = "[" + Object.keys(data.gpus).sort().map(reprString).join(", ") + "]";
    throw valueError(`unknown GPU ${reprString(String(gpuId))}; GPUs in ${data.file}: ${ids}`);
  }
  const quantity = data.gemm_quantity[dtype];
  for (const q of [quantity, "memory_bandwidth"]) {
    if (!(q in gpu.figures)) throw valueError(`${gpu.name} has no ${data.quantity_labels[q]} figure in ${data.file}`);
  }
  const f = real("flops", flops), b = real("nbytes", nbytes);
  if (f < 0 || b <= 0) throw valueError(`need flops ≥ 0 and bytes > 0; got flops=${reprFloat(f)}, bytes=${reprFloat(b)}`);
  const measured = data.measured;
  return {
    flops,
    nbytes,
    intensity: f / b,
    datasheet: ceiling(flops, nbytes, gpu.figures[quantity], gpu.figures.memory_bandwidth),
    measured: dtype in measured.ceilings ? ceiling(flops, nbytes, measured.ceilings[dtype], measured.ceilings.bandwidth) : null,
  };
}

/** The sizes the form's fields pass, by the library's names for the chosen layer. */
export function readSizes(data, boxes, layer) {
  const sizes = {};
  for (const name of data.layers[layer] || []) {
    const field = layer === "conv2d" && CONV_FIELDS[name] ? CONV_FIELDS[name] : name;
    sizes[name] = fieldValue(raw(boxes[field]));
  }
  return sizes;
}

const CEILING_ROWS = [
  ["compute ceiling", "tflops", (c) => `${c.tflops.toPrecision(4)} TFLOP/s`],
  ["memory ceiling", "gbps", (c) => `${c.gbps.toPrecision(4)} GB/s`],
  ["ridge point", "ridge", (c) => `${c.ridge.toPrecision(4)} FLOP/byte`],
  ["compute time", "compute_s", (c) => seconds(c.compute_s)],
  ["memory time", "memory_s", (c) => seconds(c.memory_s)],
  ["lower bound", "time_s", (c) => seconds(c.time_s)],
  ["limited by", "limiter", (c) => c.limiter],
];

function ceilingCell(prefix, c, key, text) {
  if (c === null) return ["not measured", `${prefix}.${key}`, "None"];
  const value = typeof c[key] === "number" ? reprFloat(c[key]) : c[key];
  return [text(c), `${prefix}.${key}`, value];
}

export function mount(root, data) {
  wire(
    root,
    (boxes) => {
      const layer = showLayerFields(root, boxes);
      const flagOn = layer === "conv2d" ? raw(boxes.bias) : layer === "attention" ? raw(boxes.causal) : false;
      return layerBound(data, layer, raw(boxes.dtype), readSizes(data, boxes, layer), raw(boxes.gpu), flagOn);
    },
    (out, r) => {
      const gpu = data.gpus[root.querySelector("[name=gpu]").value];
      const ds = r.datasheet;
      out.append(el("p", { class: "gpukb-calc-headline" },
        `At least ${seconds(ds.time_s)} on the ${gpu.name} datasheet (${ds.limiter}-bound)` +
        (r.measured ? `; at least ${seconds(r.measured.time_s)} on the ceilings the H100 measured ` +
          `(${r.measured.limiter}-bound).` : ".")));
      out.append(resultTable([
        ["FLOPs", count(r.flops), "flops", r.flops],
        ["bytes (each input read once, each output written once)", bytes(r.nbytes), "nbytes", r.nbytes],
        ["arithmetic intensity", `${r.intensity.toPrecision(4)} FLOP/byte`, "intensity", reprFloat(r.intensity)],
      ]));
      const rows = CEILING_ROWS.map(([label, key, text]) =>
        [label, ceilingCell("datasheet", ds, key, text), ceilingCell("measured", r.measured, key, text)]);
      out.append(el("div", { class: "gpukb-calc-scroll" },
        gridTable([`${gpu.name}, datasheet`, `H100, measured (${data.measured.record})`], rows)));
    },
    (arg) => (root.querySelector("[name=layer]").value === "conv2d" && CONV_FIELDS[arg]) || arg,
  );
}
