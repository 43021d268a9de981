/* Training memory per GPU: a port of gpukb.distributed.memory.training_memory (model states by scheme, activations
 * by the model's shape) and of ModelConfig's checks and parameter count. The schemes, the FSDP2 modes and the
 * recorded runs shown beside a matching prediction come from the data island (gpukb.distributed.memory and the
 * committed records, through gpukb.distributed.pages).
 *
 * Python mixes ints and floats here: bytes per parameter are ints for the unsharded schemes and floats where they
 * are divided by the number of GPUs. A number keeps its Python type (BigInt or number) through every sum and
 * product, so the page's values are the library's to the last bit.
 */
import {
  bytes, choice, count, el, fieldValue, flag, formatG, integer, nonNegativeInt, on, positiveInt, raw, repr, reprFloat,
  reprString, resultTable, valueError, wire,
} from "./common.js";

/** Python's + and * on int (BigInt) and float (number). */
const add = (a, b) => (typeof a === "bigint" && typeof b === "bigint" ? a + b : Number(a) + Number(b));
const mul = (a, b) => (typeof a === "bigint" && typeof b === "bigint" ? a * b : Number(a) * Number(b));
/** Python's int / int. */
const div = (a, b) => Number(a) / Number(b);

/** gpukb.distributed.model.MAX_ELEMENTS: torch counts elements in an int64. */
const MAX_ELEMENTS = 2n ** 63n - 1n;

/** ModelConfig(vocab, seq, hidden, heads, layers). */
export function modelConfig(c) {
  for (const name of ["vocab", "seq", "hidden", "heads", "layers"]) integer(name, c[name], 1, MAX_ELEMENTS);
  if (c.hidden % c.heads) {
    const err = valueError(`hidden ${c.hidden} is not divisible by heads ${c.heads}`);
    err.arg = "heads";
    throw err;
  }
  const shown = `ModelConfig(vocab=${c.vocab}, seq=${c.seq}, hidden=${c.hidden}, heads=${c.heads}, layers=${c.layers})`;
  for (const [what, n, arg] of [["parameters", parameterCount(c), "layers"],
                                ["attention scores per sequence", c.heads * c.seq * c.seq, "seq"]]) {
    if (n > MAX_ELEMENTS) {
      const err = valueError(`${shown} would have ${formatG(Number(n))} ${what}; torch counts elements in an int64, `
        + `so at most 2^63 - 1 ≈ ${formatG(Number(MAX_ELEMENTS))}`);
      err.arg = arg;
      throw err;
    }
  }
  return c;
}

/** ModelConfig.parameter_count. */
export function parameterCount(c) {
  const h = c.hidden, v = c.vocab;
  const block = 4n * h + (3n * h * h + 3n * h) + (h * h + h) + (4n * h * h + 4n * h) + (4n * h * h + h);
  return v * h + c.seq * h + c.layers * block + 2n * h + v * h;
}

/** state_bytes_per_param. */
export function stateBytesPerParam(schemes, scheme, worldSize) {
  choice("scheme", scheme, schemes);
  const n = positiveInt("world_size", worldSize);
  const K = 12n;
  const table = {
    ddp: [2n, 2n, K],
    ddp_fp32: [4n, 4n, 8n],
    zero1: [2n, 2n, div(K, n)],
    zero2: [2n, div(2n, n), div(K, n)],
    zero3: [div(2n, n), div(2n, n), div(K, n)],
    fsdp2: [div(4n, n), div(4n, n), div(8n, n)],
  };
  const [params, grads, optimizer] = table[scheme];
  return { params, grads, optimizer, total: add(add(params, grads), optimizer) };
}

/** activation_element_bytes. */
export function activationElementBytes(data, scheme, mode) {
  choice("scheme", scheme, data.schemes);
  const modes = Object.keys(data.fsdp2_activation_bytes);
  if (scheme === "fsdp2") {
    if (mode === null) throw on("mixed_precision", valueError(`scheme 'fsdp2' needs a mixed_precision mode, one of [${modes.map(reprString).join(", ")}]`));
    return BigInt(data.fsdp2_activation_bytes[choice("mixed_precision", mode, modes)]);
  }
  if (mode !== null) {
    throw on("mixed_precision", valueError(
      `mixed_precision applies to scheme 'fsdp2' only; scheme ${reprString(scheme)} got ${repr(mode)}`));
  }
  return scheme === "ddp_fp32" ? 4n : 2n;
}

/** block_activation_bytes and checkpointed_block_bytes, with model_activation_bytes around them. */
function modelActivationBytes(c, batch, e, checkpointing, stats = 4n) {
  const [b, s, h, a] = [["batch", batch], ["seq", c.seq], ["hidden", c.hidden], ["heads", c.heads]]
    .map(([name, value]) => positiveInt(name, value));
  positiveInt("element_bytes", e);
  const full = e * (16n * b * s * h + a * b * s * s) + 4n * b * s * nonNegativeInt("stats_bytes", stats);
  const kept = checkpointing ? positiveInt("element_bytes", e) * b * s * h : full;
  const blocks = c.layers * kept;
  const recompute = checkpointing ? full : 0n;
  const head = 2n * b * s * h * e + 2n * b * s * stats + b * s * c.vocab * 4n + (b * s + s) * 8n;
  return { blocks, recompute, head };
}

/** training_memory. */
export function trainingMemory(data, config, batch, scheme, worldSize, mode, checkpointing) {
  const perParam = stateBytesPerParam(data.schemes, scheme, worldSize);
  const element = activationElementBytes(data, scheme, mode);
  const acts = modelActivationBytes(config, positiveInt("batch", batch), element, flag("checkpointing", checkpointing));
  const n = parameterCount(config);
  const r = {
    parameters: n,
    params: mul(perParam.params, n),
    grads: mul(perParam.grads, n),
    optimizer: mul(perParam.optimizer, n),
    states: mul(perParam.total, n),
    blocks: acts.blocks,
    head: acts.head,
    recompute: acts.recompute,
    activation_bytes: element,
  };
  r.kept = r.blocks + r.head;
  r.peak = add(add(r.states, r.kept), r.recompute);
  return r;
}

/** The recorded runs whose configuration the inputs match (gpukb.distributed.pages.matching_runs). */
export function matchingRuns(records, config, batch, scheme, worldSize, mode, checkpointing) {
  const found = [];
  for (const record of records) {
    const m = record.model;
    const same = ["vocab", "seq", "hidden", "heads", "layers"].every((k) => BigInt(m[k]) === config[k]);
    if (!same || BigInt(record.batch) !== batch || BigInt(record.world_size) !== worldSize) continue;
    for (const run of record.runs) {
      if (run.autocast !== null || (run.checkpointing !== "none") !== checkpointing) continue;
      const fsdp = scheme === "fsdp2" && run.fsdp && run.mixed_precision === mode;
      const plain = scheme === "ddp_fp32" && !run.fsdp;
      if (fsdp || plain) found.push({ record: record.id, gpu: record.gpu, ...run });
    }
  }
  return found;
}

/** What the form's fields pass. */
export function readInputs(boxes) {
  const value = (name) => fieldValue(raw(boxes[name]));
  const mode = raw(boxes.mixed_precision);
  return {
    config: { vocab: value("vocab"), seq: value("seq"), hidden: value("hidden"), heads: value("heads"),
      layers: value("layers") },
    batch: value("batch"),
    scheme: raw(boxes.scheme),
    world_size: value("world_size"),
    mixed_precision: mode === "" ? null : mode,
    checkpointing: raw(boxes.checkpointing),
  };
}

export function compute(data, inputs) {
  const config = modelConfig(inputs.config);
  const args = [config, inputs.batch, inputs.scheme, inputs.world_size, inputs.mixed_precision, inputs.checkpointing];
  const result = trainingMemory(data, ...args);
  result.matches = matchingRuns(data.records, ...args);
  return result;
}

const show = (v) => (typeof v === "bigint" ? v.toString() : reprFloat(v));

export function mount(root, data) {
  const scheme = root.querySelector("[name=scheme]");
  const mode = root.querySelector("[name=mixed_precision]");
  scheme.addEventListener("change", () => { // a mode belongs to FSDP2 only: follow the scheme
    if (scheme.value !== "fsdp2") mode.value = "";
    else if (mode.value === "") mode.value = "DEFAULT";
  }, { capture: true });
  wire(
    root,
    (boxes) => compute(data, readInputs(boxes)),
    (out, r) => {
      out.append(el("p", { class: "gpukb-calc-headline" },
        `About ${bytes(r.peak).replace(/^.*\(|\)$/g, "")} per GPU at the predicted peak: ` +
        `${bytes(r.states).replace(/^.*\(|\)$/g, "")} of model states and ` +
        `${bytes(add(r.kept, r.recompute)).replace(/^.*\(|\)$/g, "")} of activations.`));
      out.append(resultTable([
        ["parameters", count(r.parameters), "parameters", show(r.parameters)],
        ["parameters' bytes", bytes(r.params), "params", show(r.params)],
        ["gradients", bytes(r.grads), "grads", show(r.grads)],
        ["optimizer state", bytes(r.optimizer), "optimizer", show(r.optimizer)],
        ["model states", bytes(r.states), "states", show(r.states)],
        [`activations the blocks keep (${r.activation_bytes}-byte elements)`, bytes(r.blocks), "blocks", show(r.blocks)],
        ["the head (final LayerNorm, float32 log-softmax, indices)", bytes(r.head), "head", show(r.head)],
        ["one block recomputed in backward", bytes(r.recompute), "recompute", show(r.recompute)],
        ["predicted peak", bytes(r.peak), "peak", show(r.peak)],
      ]));
      if (r.matches.length) {
        const rows = r.matches.map((m) => [
          `measured: ${m.name} (${m.gpu}, record ${m.record})`,
          `peak ${bytes(m.peak_bytes)}; forward kept ${bytes(m.activation_bytes)}`,
          `match:${m.record}:${m.name}`, `${m.peak_bytes},${m.activation_bytes}`,
        ]);
        out.append(resultTable(rows, "These inputs are a configuration the site measured"));
      }
    },
    { vocab: "vocab", seq: "seq", hidden: "hidden", heads: "heads", layers: "layers", element_bytes: "scheme",
      stats_bytes: "scheme" },
  );
}
