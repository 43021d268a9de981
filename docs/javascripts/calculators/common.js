/* What every calculator shares: Python's ways of writing values (repr, "%.3g"), its argument checks
 * (gpukb.arguments) with their messages, how a text field is read (gpukb.calculators.field_value), exact
 * integer ratios, and the form plumbing: one error beside the field that caused it, and no stale result.
 *
 * Integers stay BigInt wherever the library's are Python ints, so counts are exact at any size; floats are
 * JavaScript numbers, which are IEEE doubles like Python's floats, combined in the library's order.
 */

/** An error the library would raise: its type, its message and the field it belongs to. */
export class PyError extends Error {
  constructor(type, message, field = null) {
    super(message);
    this.type = type;
    this.field = field; // the form's field, where the calculator knows it
    this.arg = null; // the library's name of the argument, where a check of gpukb.arguments raised it
  }
}

export const valueError = (message) => new PyError("ValueError", message);
export const typeError = (message) => new PyError("TypeError", message);

/** Run `fn`; an error it raises is laid at `field` unless it already names a field or an argument. */
export function at(field, fn) {
  try {
    return fn();
  } catch (err) {
    if (err instanceof PyError && err.field === null && err.arg === null) err.field = field;
    throw err;
  }
}

/** Run a check of gpukb.arguments: its error names the argument `name`. */
function named(name, fn) {
  try {
    return fn();
  } catch (err) {
    if (err instanceof PyError) err.arg = name;
    throw err;
  }
}

/** `err` laid at `field`. */
export function on(field, err) {
  err.field = field;
  return err;
}

// --- Python's spelling of values ---------------------------------------------------------------------------

function hexEscape(code) {
  if (code < 0x100) return "\\x" + code.toString(16).padStart(2, "0");
  if (code < 0x10000) return "\\u" + code.toString(16).padStart(4, "0");
  return "\\U" + code.toString(16).padStart(8, "0");
}

/** repr() of a str: the quote Python picks, backslash escapes for what str.isprintable() refuses. */
export function reprString(text) {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    if (ch === quote || ch === "\\") out += "\\" + ch;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch !== " " && /[\p{C}\p{Z}]/u.test(ch)) out += hexEscape(ch.codePointAt(0));
    else out += ch;
  }
  return out + quote;
}

/** The shortest digits that give back `x` (> 0, finite) and the decimal exponent of the first. */
function shortestDigits(x) {
  const [mantissa, exponent] = x.toExponential().split("e");
  return { digits: mantissa.replace(".", ""), exp: Number(exponent) };
}

/** repr() of a float. */
export function reprFloat(x) {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  if (x === 0) return sign + "0.0";
  const { digits, exp } = shortestDigits(Math.abs(x));
  if (exp < -4 || exp >= 16) {
    const mant = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
    return `${sign}${mant}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const frac = digits.slice(exp + 1);
  return `${sign}${whole}.${frac || "0"}`;
}

/** repr() of what a field may hold: None, a bool, an int (BigInt), a float (number) or a str. */
export function repr(value) {
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return reprFloat(value);
  return reprString(String(value));
}

export function typeName(value) {
  if (value === null || value === undefined) return "NoneType";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "bigint") return "int";
  if (typeof value === "number") return "float";
  return "str";
}

const length = (text) => [...text].length;
const head = (text, n) => [...text].slice(0, n).join("");

/** gpukb.arguments._show: the repr, shortened when long. */
export function show(value) {
  const text = repr(value);
  return length(text) <= 80 ? text : `${head(text, 60)}...(${length(text)} characters)`;
}

/** gpukb.arguments.given: the repr (shortened) and the type. */
export const given = (value) => `${show(value)} (${typeName(value)})`;

/** Exact decimal digits of a double as an integer over a power of two: [numerator, log2 of the denominator]. */
function exactBinary(x) {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0), lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (biased) mant |= 1n << 52n;
  return [mant, 1075 - (biased || 1)]; // |x| = mant / 2**shift
}

/** Python's format(x, ".<p>g"): exact decimal rounding, ties to even, trailing zeros dropped. */
export function formatG(x, p = 3) {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  if (x === 0) return sign + "0";
  const [mant, shift] = exactBinary(Math.abs(x));
  let num = mant, den = 1n;
  if (shift > 0) den <<= BigInt(shift);
  else num <<= BigInt(-shift);
  let e = Math.floor(Math.log10(Math.abs(x)));
  const pow10 = (k) => 10n ** BigInt(k);
  const below = (k) => (k >= 0 ? num < den * pow10(k) : num * pow10(-k) < den); // |x| < 10**k
  while (below(e)) e -= 1;
  while (!below(e + 1)) e += 1;
  // digits = round(|x| / 10**(e - p + 1)), half to even
  const scale = e - p + 1;
  let n2 = num, d2 = den;
  if (scale >= 0) d2 *= pow10(scale);
  else n2 *= pow10(-scale);
  let q = n2 / d2;
  const r2 = 2n * (n2 - q * d2);
  if (r2 > d2 || (r2 === d2 && q % 2n === 1n)) q += 1n;
  if (q === pow10(p)) {
    q = pow10(p - 1);
    e += 1;
  }
  let digits = q.toString();
  if (e < -4 || e >= p) {
    digits = digits.replace(/0+$/, "");
    const mantText = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
    return `${sign}${mantText}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  let text;
  if (e >= 0) text = digits.slice(0, e + 1) + "." + digits.slice(e + 1);
  else text = "0." + "0".repeat(-e - 1) + digits;
  text = text.replace(/0+$/, "").replace(/\.$/, "");
  return sign + text;
}

// --- exact integers ----------------------------------------------------------------------------------------

export const bitLength = (n) => (n === 0n ? 0 : n.toString(2).length);

/** a / b for BigInts a ≥ 0, b > 0, rounded once to the nearest double (ties to even), as Python's int / int. */
export function ratio(a, b) {
  if (a === 0n) return 0;
  const s = 54 - (bitLength(a) - bitLength(b));
  const num = s >= 0 ? a << BigInt(s) : a;
  const den = s >= 0 ? b : b << BigInt(-s);
  const q = num / den;
  const sticky = num % den !== 0n;
  const extra = bitLength(q) - 53;
  let m = q >> BigInt(extra);
  const rest = q & ((1n << BigInt(extra)) - 1n);
  const half = 1n << BigInt(extra - 1);
  if (rest > half || (rest === half && (sticky || (m & 1n) === 1n))) m += 1n;
  const e = extra - s;
  return Number(m) * 2 ** Math.trunc(e / 2) * 2 ** (e - Math.trunc(e / 2));
}

// --- gpukb.arguments ---------------------------------------------------------------------------------------

/** gpukb.arguments.integer: an int (BigInt) in [minimum, maximum]. */
export function integer(name, value, minimum = null, maximum = null) {
  return named(name, () => checkInteger(name, value, minimum, maximum));
}

function checkInteger(name, value, minimum, maximum) {
  const low = minimum === null ? "" : ` ≥ ${minimum}`;
  const high = maximum === null ? "" : ` ≤ ${maximum}`;
  const allowed = `an int${low}${low && high ? "," : ""}${high}`;
  if (typeof value !== "bigint") throw typeError(`${name} must be ${allowed}; got ${given(value)}`);
  if ((minimum !== null && value < BigInt(minimum)) || (maximum !== null && value > BigInt(maximum))) {
    throw valueError(`${name} must be ${allowed}; got ${value}`);
  }
  return value;
}

export const positiveInt = (name, value) => integer(name, value, 1);
export const nonNegativeInt = (name, value) => integer(name, value, 0);

/** gpukb.arguments.flag. */
export function flag(name, value) {
  return named(name, () => {
    if (typeof value !== "boolean") throw typeError(`${name} must be True or False; got ${given(value)}`);
    return value;
  });
}

/** gpukb.arguments.choice. */
export function choice(name, value, allowed) {
  return named(name, () => checkChoice(name, value, allowed));
}

function checkChoice(name, value, allowed) {
  const list = "[" + allowed.map(reprString).join(", ") + "]";
  if (typeof value !== "string") throw typeError(`${name} must be a string, one of ${list}; got ${given(value)}`);
  if (!allowed.includes(value)) throw valueError(`unknown ${name} ${show(value)}; choose one of ${list}`);
  return value;
}

/** gpukb.arguments.real with its defaults (finite, no minimum) or a minimum. */
export function real(name, value, minimum = null) {
  return named(name, () => checkReal(name, value, minimum));
}

function checkReal(name, value, minimum) {
  if (typeof value !== "bigint" && typeof value !== "number") {
    throw typeError(`${name} must be a real number; got ${given(value)}`);
  }
  const number = Number(value);
  if (typeof value === "bigint" && !Number.isFinite(number)) {
    throw valueError(`${name} is beyond the range of a float (about ±1.8e308); got ${show(value)}`);
  }
  if (!Number.isFinite(number)) throw valueError(`${name} must be a finite number; got ${show(value)}`);
  if (minimum !== null && !(number >= minimum)) throw valueError(`${name} must be ≥ ${minimum}; got ${show(value)}`);
  return number;
}

// --- gpukb.calculators.field_value ---------------------------------------------------------------------------

const FIELD_MAX = 100;
const DIGITS = "[0-9](?:_?[0-9])*";
const INT_TEXT = new RegExp(`^[+-]?${DIGITS}$`);
const FLOAT_TEXT = new RegExp(
  `^[+-]?(?:(?:${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?|inf|infinity|nan)$`, "i");

/** Python's str.strip(): whitespace as str.isspace() sees it. */
export const pyStrip = (text) => text.replace(/^[\s\x1c-\x1f\x85]+|[\s\x1c-\x1f\x85]+$/gu, "");

/** What a text field passes to the library: null (empty), a BigInt, a number, or the stripped text. */
export function fieldValue(text) {
  const stripped = pyStrip(text);
  if (!stripped) return null;
  if (length(stripped) > FIELD_MAX || /[^\x00-\x7f]/.test(stripped)) return stripped;
  if (INT_TEXT.test(stripped)) return BigInt(stripped.replaceAll("_", ""));
  if (FLOAT_TEXT.test(stripped)) {
    const plain = stripped.replaceAll("_", "").toLowerCase();
    const unsigned = plain.replace(/^[+-]/, "");
    const negative = plain.startsWith("-");
    if (unsigned === "nan") return NaN;
    if (unsigned === "inf" || unsigned === "infinity") return negative ? -Infinity : Infinity;
    return Number(plain);
  }
  return stripped;
}

// --- the form --------------------------------------------------------------------------------------------------

/** The field elements of a calculator by name. */
export function fields(root) {
  const out = {};
  for (const box of root.querySelectorAll(".gpukb-calc-field")) {
    out[box.dataset.field] = box;
  }
  return out;
}

/** A field's raw value: the text, the selected option's value, or a checkbox's state. */
export function raw(box) {
  const control = box.querySelector("input, select");
  return control.type === "checkbox" ? control.checked : control.value;
}

/** Shows only the fields that belong to the chosen layer (data-only) and returns the chosen one. */
export function showLayerFields(root, boxes) {
  const layer = boxes.layer ? raw(boxes.layer) : null;
  for (const box of Object.values(boxes)) {
    const only = box.dataset.only;
    box.hidden = Boolean(only) && !only.split(" ").includes(layer);
  }
  return layer;
}

/** Builds an element: el("td", {class: "x"}, "text", child, ...). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined) node.setAttribute(key, value);
  }
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
}

/**
 * Wire a calculator: on every change read the fields, compute, and either render the result or clear it and put
 * the library's message beside the field it concerns. `compute(boxes)` returns what `render(out, result)` draws;
 * `argField` maps the library's argument names to field names where they differ (an object or a function).
 */
export function wire(root, compute, render, argField = {}) {
  const boxes = fields(root);
  const out = root.querySelector(".gpukb-calc-out");
  const form = root.querySelector("form");
  let bad = null; // the field showing a message, if any
  const update = () => {
    if (bad) {
      bad.classList.remove("gpukb-calc-bad");
      bad.querySelector(".gpukb-calc-error").textContent = "";
      bad = null;
    }
    out.replaceChildren();
    root.dataset.state = "error";
    try {
      const result = compute(boxes);
      render(out, result);
      root.dataset.state = "ok";
    } catch (err) {
      if (!(err instanceof PyError)) throw err;
      const mapped = typeof argField === "function" ? argField(err.arg) : argField[err.arg] || err.arg;
      bad = boxes[err.field] || boxes[mapped] || Object.values(boxes)[0];
      bad.classList.add("gpukb-calc-bad");
      bad.querySelector(".gpukb-calc-error").textContent = err.message;
      out.append(el("p", { class: "gpukb-calc-none" }, "No result: correct the field marked above."));
    }
  };
  form.addEventListener("input", update);
  form.addEventListener("change", update);
  form.addEventListener("submit", (event) => event.preventDefault());
  root.gpukbUpdate = update; // the browser test drives many inputs through one call
  update();
}

/** A two-column table of results: rows of [label, text, key, raw value]; raw values ride in data-value. */
export function resultTable(rows, caption = null) {
  const body = el("tbody");
  for (const [label, text, key, value] of rows) {
    const cell = el("td", { "data-key": key, "data-value": value === undefined ? null : String(value) }, text);
    body.append(el("tr", {}, el("th", { scope: "row" }, label), cell));
  }
  const table = el("table");
  if (caption) table.append(el("caption", {}, caption));
  table.append(body);
  return table;
}

/** A table with a label column and one column per header: rows of [label, [text, key, raw value], ...]. */
export function gridTable(headers, rows) {
  const table = el("table");
  table.append(el("thead", {}, el("tr", {}, el("th", {}, ""), ...headers.map((h) => el("th", { scope: "col" }, h)))));
  const body = el("tbody");
  for (const [label, ...cells] of rows) {
    body.append(el("tr", {}, el("th", { scope: "row" }, label), ...cells.map(([text, key, value]) =>
      el("td", { "data-key": key, "data-value": value === undefined ? null : String(value) }, text))));
  }
  table.append(body);
  return table;
}

// --- how results read ------------------------------------------------------------------------------------------

const UNITS = ["", "thousand", "million", "billion", "trillion", "quadrillion"];

/** An exact count with thousands separated, and its size in words for large ones. */
export function count(n) {
  const text = BigInt(n).toLocaleString("en-US");
  const digits = BigInt(n).toString().length;
  const group = Math.min(Math.floor((digits - 1) / 3), UNITS.length - 1);
  if (group < 2) return text;
  const scaled = Number(BigInt(n)) / 10 ** (3 * group);
  return `${text} (${scaled.toPrecision(3)} ${UNITS[group]})`;
}

/** Bytes, exact, with the binary size beside. */
export function bytes(n) {
  const value = typeof n === "bigint" ? Number(n) : n;
  const steps = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0, scaled = value;
  while (Math.abs(scaled) >= 1024 && i < steps.length - 1) {
    scaled /= 1024;
    i += 1;
  }
  const exact = typeof n === "bigint" ? n.toLocaleString("en-US") : Math.round(n).toLocaleString("en-US");
  return i === 0 ? `${exact} B` : `${exact} B (${scaled.toPrecision(4)} ${steps[i]})`;
}

/** Seconds in the unit that reads best. */
export function seconds(s) {
  const units = [[1, "s"], [1e-3, "ms"], [1e-6, "µs"], [1e-9, "ns"]];
  for (const [size, name] of units) {
    if (s >= size || size === 1e-9) return `${(s / size).toPrecision(4)} ${name}`;
  }
  return `${s} s`;
}
