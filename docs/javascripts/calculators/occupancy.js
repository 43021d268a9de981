/* The occupancy calculator: a port of gpukb.cuda.occupancy.occupancy (the arithmetic of cuda_occupancy.h), with
 * the limits of each compute capability from the data island (gpukb/data/cuda/limits.toml through
 * gpukb.cuda.limits). Integers are BigInt, as the library's are Python ints, so a huge entry gets the library's
 * message with its exact value.
 */
import {
  at, el, fieldValue, integer, on, raw, repr, reprFloat, resultTable, typeError, valueError, wire,
} from "./common.js";

export const RESOURCES = ["warps", "registers", "shared memory", "blocks"];

function ceil(a, b) {
  // -(-a // b) for a ≥ 0, b > 0
  return a % b === 0n ? a / b : a / b + 1n;
}
const roundUp = (a, unit) => ceil(a, unit) * unit;

/** occupancy._check_int: gpukb.arguments.integer, its error laid at the field the caller names. */
function checkInt(name, value, low) {
  try {
    return integer(name, value, low);
  } catch (err) {
    err.arg = null; // the argument's name here ("threads per block") is a phrase, not a field
    throw err;
  }
}

/** occupancy.carveout. */
function carveout(cap, needed, preference) {
  const steps = cap.carveouts_kib.map((kib) => BigInt(kib) * 1024n);
  let preferred;
  if (preference === null) preferred = BigInt(cap.shared_per_sm);
  else {
    if (typeof preference !== "bigint") throw typeError(`carveout preference must be an int percent; got ${repr(preference)}`);
    if (preference < 0n || preference > 100n) {
      throw valueError(`carveout preference must be 0 to 100 percent; got ${preference}`);
    }
    const wanted = (preference * BigInt(cap.shared_per_sm)) / 100n;
    preferred = steps.find((s) => s >= wanted);
  }
  if (preferred >= needed) return preferred;
  return steps.find((s) => s >= needed);
}

function checkCluster(cap, size, nonportable) {
  if (size === null) return;
  at("cluster_size", () => checkInt("cluster size", size, 1));
  if (cap.max_cluster_size === null) {
    throw valueError(`thread-block clusters need compute capability 9.0 or later; got ${cap.cc}`);
  }
  const top = BigInt(nonportable ? cap.max_cluster_size_nonportable : cap.max_cluster_size);
  if (size > top) {
    const how = nonportable
      ? "non-portable"
      : "portable (allow 16 with cudaFuncAttributeNonPortableClusterSizeAllowed)";
    throw valueError(`cluster size ${size} exceeds the ${how} limit of ${top} blocks (compute capability ${cap.cc})`);
  }
}

/** occupancy.occupancy: the same checks in the same order, and the same result. */
export function occupancy(cap, args) {
  const { threads, registers, static_shared: staticShared, dynamic_shared: dynamicShared } = args;
  const { cluster_size: clusterSize, nonportable_cluster: nonportable, opt_in: optIn } = args;
  at("threads", () => checkInt("threads per block", threads, 1));
  at("registers", () => checkInt("registers per thread", registers, 0));
  at("static_shared", () => checkInt("static shared memory", staticShared, 0));
  at("dynamic_shared", () => checkInt("dynamic shared memory", dynamicShared, 0));
  const where = `compute capability ${cap.cc}`;
  if (threads > BigInt(cap.max_threads_per_block)) {
    throw on("threads", valueError(`${threads} threads per block exceeds the limit of ${cap.max_threads_per_block} (${where})`));
  }
  if (registers > BigInt(cap.max_registers_per_thread)) {
    throw on("registers", valueError(`${registers} registers per thread exceeds the limit of ${cap.max_registers_per_thread} (${where})`));
  }
  at("cluster_size", () => checkCluster(cap, clusterSize, nonportable));

  const warpSize = 32n;
  const warps = ceil(threads, warpSize);
  const perWarp = roundUp(registers * warpSize, BigInt(cap.register_allocation_unit));
  const perBlock = perWarp * warps;
  const subParts = BigInt(cap.register_sub_partitions);
  const assumed = perWarp * roundUp(warps, subParts);
  const needed = perBlock > assumed ? perBlock : assumed;
  if (needed > BigInt(cap.registers_per_block)) {
    const rounded = roundUp(warps, subParts);
    const how = rounded === warps ? `${warps} warps` : `${warps} warps counted as ${rounded}`;
    throw on("registers", valueError(
      `${threads} threads at ${registers} registers need ${needed} registers per block ` +
      `(${perWarp} per warp, ${how}), more than the limit of ${cap.registers_per_block} registers per block ` +
      `(${where})`));
  }
  let byRegisters = null;
  if (perWarp) {
    const warpsPerPartition = BigInt(cap.registers_per_sm) / subParts / perWarp;
    byRegisters = (warpsPerPartition * subParts) / warps;
  }

  if (staticShared > BigInt(cap.shared_per_block)) {
    throw on("static_shared", valueError(
      `${staticShared} bytes of static shared memory exceed the limit of ${cap.shared_per_block} bytes ` +
      `(48 KiB) for static allocations; use dynamic shared memory above it (${where})`));
  }
  const requested = staticShared + dynamicShared;
  const blockLimit = BigInt(optIn ? cap.shared_per_block_optin : cap.shared_per_block);
  if (requested > blockLimit) {
    if (optIn || requested > BigInt(cap.shared_per_block_optin)) {
      throw on("dynamic_shared", valueError(
        `${requested} bytes of shared memory per block exceed the opt-in limit of ` +
        `${cap.shared_per_block_optin} bytes (sharedMemPerBlockOptin, ${where})`));
    }
    throw on("dynamic_shared", valueError(
      `${requested} bytes of shared memory per block exceed the default limit of ${cap.shared_per_block} ` +
      `bytes (sharedMemPerBlock, ${where}); opt in with cudaFuncAttributeMaxDynamicSharedMemorySize ` +
      `(up to ${cap.shared_per_block_optin})`));
  }
  const allocated = roundUp(requested + BigInt(cap.reserved_shared_per_block), BigInt(cap.shared_allocation_unit));
  const smShared = at("carveout", () => carveout(cap, allocated, args.carveout_percent));
  const byShared = requested || cap.reserved_shared_per_block ? smShared / allocated : null;

  const limits = {
    warps: BigInt(cap.max_warps_per_sm) / warps,
    registers: byRegisters,
    "shared memory": byShared,
    blocks: BigInt(cap.max_blocks_per_sm),
  };
  const active = Object.values(limits).filter((v) => v !== null).reduce((a, b) => (b < a ? b : a));
  return {
    cc: cap.cc,
    threads_per_block: threads,
    warps_per_block: warps,
    registers_per_block: perBlock,
    shared_per_block: allocated,
    shared_per_sm: smShared,
    limits,
    active_blocks: active,
    active_warps: active * warps,
    max_warps: BigInt(cap.max_warps_per_sm),
    occupancy: Number(active * warps) / cap.max_warps_per_sm,
    limiting: RESOURCES.filter((r) => limits[r] === active),
  };
}

/** What the form's fields pass to occupancy(). */
export function readArgs(boxes) {
  const optional = (name) => fieldValue(raw(boxes[name]));
  return {
    threads: fieldValue(raw(boxes.threads)),
    registers: fieldValue(raw(boxes.registers)),
    static_shared: fieldValue(raw(boxes.static_shared)),
    dynamic_shared: fieldValue(raw(boxes.dynamic_shared)),
    cluster_size: optional("cluster_size"),
    nonportable_cluster: raw(boxes.nonportable_cluster),
    opt_in: raw(boxes.opt_in),
    carveout_percent: optional("carveout"),
  };
}

export function mount(root, data) {
  const caps = Object.fromEntries(data.capabilities.map((c) => [c.cc, c]));
  wire(
    root,
    (boxes) => occupancy(caps[raw(boxes.cc)], readArgs(boxes)),
    (out, r) => {
      const percent = `${Math.round(r.occupancy * 100)}%`;
      out.append(el("p", { class: "gpukb-calc-headline" },
        `${r.active_blocks} blocks (${r.active_warps} of ${r.max_warps} warps) per SM: occupancy ${percent}, ` +
        `limited by ${r.limiting.join(", ")}.`));
      const rows = [
        ["warps per block", String(r.warps_per_block), "warps_per_block", r.warps_per_block],
        ["registers per block", String(r.registers_per_block), "registers_per_block", r.registers_per_block],
        ["shared memory per block (allocated)", `${r.shared_per_block} B`, "shared_per_block", r.shared_per_block],
        ["shared memory per SM (carveout)", `${r.shared_per_sm} B`, "shared_per_sm", r.shared_per_sm],
      ];
      for (const resource of RESOURCES) {
        const v = r.limits[resource];
        rows.push([`blocks per SM the ${resource} allow`, v === null ? "no limit" : String(v), `limit:${resource}`,
          v === null ? "None" : v]);
      }
      rows.push(["active blocks per SM", String(r.active_blocks), "active_blocks", r.active_blocks]);
      rows.push(["active warps per SM", `${r.active_warps} of ${r.max_warps}`, "active_warps", r.active_warps]);
      rows.push(["occupancy", percent, "occupancy", reprFloat(r.occupancy)]);
      rows.push(["limited by", r.limiting.join(", "), "limiting", r.limiting.join(",")]);
      out.append(resultTable(rows));
    },
  );
}
