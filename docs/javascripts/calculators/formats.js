/* The number-format calculator: a port of gpukb.formats (codec.split/encode/decode, explain.explain and the rows of
 * tables.value_table and tables.pattern_table), so the page prints what `gpukb format` prints.
 *
 * Values are exact: a decimal is an integer over an integer (BigInt), as the library's Fraction is; the formats'
 * parameters come from the data island (gpukb/data/formats.toml through gpukb.formats.spec).
 */
import {
  at, el, formatG, pyStrip, raw, reprFloat, reprString, valueError, wire,
} from "./common.js";

// --- formats (gpukb.formats.spec.FloatFormat's properties) -------------------------------------------------

export function prepare(spec) {
  const f = { ...spec };
  f.signed = f.encoding !== "e8m0";
  f.bits = (f.signed ? 1 : 0) + f.exponent_bits + f.mantissa_bits;
  f.hasNegativeZero = ["ieee", "fn", "finite"].includes(f.encoding);
  f.hasNan = f.encoding !== "finite";
  f.minExponent = f.encoding === "e8m0" ? -f.bias : 1 - f.bias;
  f.magnitudeMask = (1n << BigInt(f.exponent_bits + f.mantissa_bits)) - 1n;
  const allOnes = f.magnitudeMask;
  if (f.encoding === "ieee") f.maxMagnitudeBits = allOnes - (1n << BigInt(f.mantissa_bits));
  else if (f.encoding === "fn" || f.encoding === "e8m0") f.maxMagnitudeBits = allOnes - 1n;
  else f.maxMagnitudeBits = allOnes;
  const mMask = (1n << BigInt(f.mantissa_bits)) - 1n;
  const maxExp = Number(f.maxMagnitudeBits >> BigInt(f.mantissa_bits)) - f.bias;
  // max_value = (1 + m / 2**M) * 2**maxExp = (2**M + m) * 2**(maxExp - M)
  f.maxValue = pow2(((1n << BigInt(f.mantissa_bits)) + (f.maxMagnitudeBits & mMask)), maxExp - f.mantissa_bits);
  return f;
}

// --- exact rationals: { n, d } with d > 0 (not necessarily reduced) ------------------------------------------

const pow2 = (n, e) => (e >= 0 ? { n: n << BigInt(e), d: 1n } : { n, d: 1n << BigInt(-e) });
const cmp = (a, b) => {
  const l = a.n * b.d, r = b.n * a.d;
  return l < r ? -1 : l > r ? 1 : 0;
};
const isZero = (a) => a.n === 0n;
const sub = (a, b) => ({ n: a.n * b.d - b.n * a.d, d: a.d * b.d });
const neg = (a) => ({ n: -a.n, d: a.d });
const abs = (a) => ({ n: a.n < 0n ? -a.n : a.n, d: a.d });
const bitLength = (n) => (n === 0n ? 0 : n.toString(2).length);

/** floor(log2(x)) of a positive rational, exactly (codec.floor_log2). */
function floorLog2(x) {
  const e = bitLength(x.n) - bitLength(x.d);
  return cmp(pow2(1n, e), x) <= 0 ? e : e - 1;
}

/** float(Fraction): the nearest double, ties to even (x ≥ 0). */
function toFloat(x) {
  if (x.n === 0n) return 0;
  const e = floorLog2(x);
  if (e > 1023) return Infinity;
  // 53 significant bits, or fewer below the normal range (2**-1022): quantum 2**max(e - 52, -1074)
  const qexp = Math.max(e - 52, -1074);
  const scaled = qexp >= 0 ? { n: x.n, d: x.d << BigInt(qexp) } : { n: x.n << BigInt(-qexp), d: x.d };
  let q = scaled.n / scaled.d;
  const r2 = 2n * (scaled.n - q * scaled.d);
  if (r2 > scaled.d || (r2 === scaled.d && (q & 1n) === 1n)) q += 1n;
  const value = Number(q) * 2 ** Math.trunc(qexp / 2) * 2 ** (qexp - Math.trunc(qexp / 2));
  return value;
}

// --- reading a number (codec.split) --------------------------------------------------------------------------

const MAX_TEXT_LENGTH = 2000;
const DECIMAL_EXPONENT_LIMIT = 1000;
const HUGE = pow2(1n, 4000), TINY = pow2(1n, -4000);
// decimal.MAX_EMAX and decimal.MIN_ETINY: the exponents Python's decimal can hold (64-bit builds).
const MAX_EMAX = 999999999999999999n, MIN_ETINY = -1999999999999999997n;
// codec._EXPONENT: a decimal in exponent notation (Python's \d is any script's decimal digit).
const EXPONENT = /^[+-]?(?:\p{Nd}+\.?\p{Nd}*|\.\p{Nd}+)[eE]([+-]?\p{Nd}+)$/u;
const DECIMAL = /^([+-]?)(?:(?:(\d+)(?:\.(\d*))?|\.(\d+))(?:e([+-]?\d+))?|(inf|infinity)|(s?nan)(\d*))$/i;

function shortText(text) {
  const r = reprString(text);
  const n = [...r].length;
  return n <= 40 ? r : `${[...r].slice(0, 30).join("")}...(${n} characters)`;
}

/** Decimal digits of any script as ASCII, as Python's Decimal() and int() read them: Unicode's decimal digits come
 * in contiguous runs of ten, zero first, so a digit's value is its distance from the start of its run, modulo 10. */
export function asciiDigits(text) {
  return text.replace(/\p{Nd}/gu, (ch) => {
    let start = ch.codePointAt(0);
    while (/\p{Nd}/u.test(String.fromCodePoint(start - 1))) start -= 1;
    return String((ch.codePointAt(0) - start) % 10);
  });
}

/** codec.split for a decimal string: { sign, mag (rational or null), kind, beyond }. */
export function split(text) {
  const n = [...text].length;
  if (n > MAX_TEXT_LENGTH) {
    throw valueError(`a number is at most ${MAX_TEXT_LENGTH.toLocaleString("en-US")} characters; got ${n.toLocaleString("en-US")}`);
  }
  // Decimal(text.strip()) strips whitespace and drops every underscore before it reads the number
  const cleaned = asciiDigits(text.replace(/^[\s\x1c-\x1f\x85]+|[\s\x1c-\x1f\x85]+$/gu, "").replaceAll("_", ""));
  const m = DECIMAL.exec(cleaned);
  if (!m) throw valueError(`${shortText(text)} is not a number (write e.g. '42.5', '-1e-3', 'inf', 'nan')`);
  const [, signText, whole, frac, fracOnly, expText, inf, nan] = m;
  if (nan) return { sign: 0, mag: null, kind: "nan", beyond: false };
  const sign = signText === "-" ? 1 : 0;
  if (inf) return { sign, mag: null, kind: "inf", beyond: false };
  const intDigits = whole === undefined ? "" : whole;
  const fracDigits = fracOnly !== undefined ? fracOnly : frac || "";
  const coefficient = (intDigits + fracDigits).replace(/^0+/, "");
  const exponent = BigInt(expText || "0") - BigInt(fracDigits.length);
  const adjusted = exponent + BigInt(Math.max(coefficient.length - 1, 0));
  if (adjusted > MAX_EMAX || exponent < MIN_ETINY) { // Python's decimal holds no such exponent
    const written = EXPONENT.exec(pyStrip(text));
    if (written) {
      const digits = [...written[1].replace(/^[+-]+/, "")].length;
      throw valueError(`${shortText(text)} has an exponent of ${digits} digits; at most ${String(MAX_EMAX).length} ` +
        "are read (numbers that far out are beyond every format anyway)");
    }
    throw valueError(`${shortText(text)} is not a number (write e.g. '42.5', '-1e-3', 'inf', 'nan')`);
  }
  if (!coefficient) return { sign, mag: { n: 0n, d: 1n }, kind: "finite", beyond: false };
  if (adjusted > BigInt(DECIMAL_EXPONENT_LIMIT)) return { sign, mag: HUGE, kind: "finite", beyond: true };
  if (adjusted < BigInt(-DECIMAL_EXPONENT_LIMIT)) return { sign, mag: TINY, kind: "finite", beyond: true };
  const c = BigInt(coefficient);
  const mag = exponent >= 0n ? { n: c * 10n ** exponent, d: 1n } : { n: c, d: 10n ** -exponent };
  return { sign, mag, kind: "finite", beyond: false };
}

// --- codec.encode / decode -------------------------------------------------------------------------------------

const withSign = (f, sign, magnitude) => (f.signed ? (BigInt(sign) << BigInt(f.bits - 1)) | magnitude : magnitude);

function nanBits(f, sign = 0) {
  if (f.encoding === "ieee") {
    const quiet = f.mantissa_bits ? 1n << BigInt(f.mantissa_bits - 1) : 0n;
    return withSign(f, sign, (((1n << BigInt(f.exponent_bits)) - 1n) << BigInt(f.mantissa_bits)) | quiet);
  }
  if (f.encoding === "fn") return withSign(f, sign, f.magnitudeMask);
  if (f.encoding === "fnuz") return 1n << BigInt(f.bits - 1);
  if (f.encoding === "e8m0") return f.magnitudeMask;
  throw valueError(`${f.name} has no NaN: every one of its ${2 ** f.bits} bit patterns is a finite number`);
}

function overflowBits(f, sign, saturate) {
  if (saturate || f.encoding === "finite") return withSign(f, sign, f.maxMagnitudeBits);
  if (f.encoding === "ieee") return withSign(f, sign, ((1n << BigInt(f.exponent_bits)) - 1n) << BigInt(f.mantissa_bits));
  return nanBits(f, sign);
}

function roundInteger(q, rounding) {
  const whole = q.n / q.d;
  if (rounding === "toward-zero") return whole;
  const r2 = 2n * (q.n - whole * q.d);
  return whole + ((r2 > q.d || (r2 === q.d && whole % 2n === 1n)) ? 1n : 0n);
}

export function encode(parsed, f, rounding, saturate) {
  const { sign, mag, kind } = parsed;
  if (kind === "nan") return nanBits(f, sign);
  if (!f.signed && sign && (kind === "inf" || !isZero(mag))) return nanBits(f);
  if (kind === "inf") return overflowBits(f, sign, saturate);
  if (isZero(mag)) {
    if (f.encoding === "e8m0") return nanBits(f);
    return withSign(f, f.hasNegativeZero ? sign : 0, 0n);
  }
  const exponent = Math.max(floorLog2(mag), f.minExponent);
  const qe = exponent - f.mantissa_bits; // magnitude / 2**qe
  const scaled = qe >= 0 ? { n: mag.n, d: mag.d << BigInt(qe) } : { n: mag.n << BigInt(-qe), d: mag.d };
  const n = roundInteger(scaled, rounding);
  let bits;
  if (f.encoding === "e8m0") bits = BigInt(exponent - f.minExponent) + (n > 1n ? n : 1n) - 1n;
  else bits = (BigInt(exponent - f.minExponent) << BigInt(f.mantissa_bits)) + n;
  if (bits > f.maxMagnitudeBits) return overflowBits(f, sign, saturate || rounding === "toward-zero");
  return withSign(f, bits === 0n && !f.hasNegativeZero ? 0 : sign, bits);
}

export function decode(bits, f) {
  const m = BigInt(f.mantissa_bits);
  const sign = f.signed ? Number((bits >> BigInt(f.exponent_bits + f.mantissa_bits)) & 1n) : 0;
  const magnitude = bits & f.magnitudeMask;
  const ef = magnitude >> m, mf = magnitude & ((1n << m) - 1n);
  const result = (kind, value) => ({ bits, kind, sign, ef, mf, value });
  const allOnes = ef === (1n << BigInt(f.exponent_bits)) - 1n;
  if (f.encoding === "e8m0") return allOnes ? result("nan", null) : result("normal", pow2(1n, Number(ef) - f.bias));
  if (f.encoding === "fnuz" && sign && magnitude === 0n) return result("nan", null);
  if (f.encoding === "ieee" && allOnes) return mf ? result("nan", null) : result("inf", null);
  if (f.encoding === "fn" && magnitude === f.magnitudeMask) return result("nan", null);
  if (ef === 0n) return result(mf ? "subnormal" : "zero", pow2(mf, f.minExponent - f.mantissa_bits));
  return result("normal", pow2((1n << m) + mf, Number(ef) - f.bias - f.mantissa_bits));
}

const signedValue = (d) => (d.value === null ? null : d.sign ? neg(d.value) : d.value);

// --- explain.explain and the rows of tables.value_table / pattern_table ---------------------------------------

/** tables.format_value. */
function formatValue(value, kind, sign) {
  if (value === null) return { nan: "NaN", inf: sign ? "-inf" : "inf" }[kind] || "-";
  const a = abs(value);
  let text;
  if (a.n % a.d === 0n && a.n / a.d < 10n ** 16n) text = (a.n / a.d).toString();
  else text = reprFloat(toFloat(a));
  return sign || value.n < 0n ? "-" + text : text;
}

function fieldsText(d, f) {
  const parts = f.signed ? [String(d.sign)] : [];
  parts.push(d.ef.toString(2).padStart(f.exponent_bits, "0"));
  if (f.mantissa_bits) parts.push(d.mf.toString(2).padStart(f.mantissa_bits, "0"));
  return parts.join(" ");
}

const hexBits = (bits, f) => "0x" + bits.toString(16).toUpperCase().padStart(Math.max(1, Math.ceil(f.bits / 4)), "0");

/** explain(): the outcome and the relative error of one parsed number stored in one format. */
function explain(parsed, f, rounding, saturate) {
  const { sign, mag, kind, beyond } = parsed;
  const stored = decode(encode(parsed, f, rounding, saturate), f);
  const exact = mag === null ? null : sign ? neg(mag) : mag;
  const finiteOut = stored.value !== null;
  const out = signedValue(stored);
  const error = finiteOut && exact !== null ? sub(out, exact) : null;
  let relative = null;
  if (error !== null && !isZero(exact)) {
    if (beyond) relative = cmp(abs(out), mag) <= 0 ? 1.0 : Infinity;
    else {
      const r = { n: abs(error).n * abs(exact).d, d: abs(error).d * abs(exact).n };
      relative = cmp(r, pow2(1n, 1023)) < 0 ? toFloat(r) : Infinity;
    }
  }
  const beyondMax = kind === "inf" || (exact !== null && cmp(abs(exact), f.maxValue) > 0);
  let reason = null;
  if (!f.signed && sign && (kind === "inf" || !isZero(exact)) && kind !== "nan") {
    reason = "negative values are not representable";
  } else if (f.encoding === "e8m0" && kind === "finite" && isZero(exact)) reason = "zero is not representable";
  const errorShown = beyond ? null : error; // Explanation.error
  const saturated = beyondMax && finiteOut && cmp(abs(out), f.maxValue) === 0;
  const overflow = kind === "finite" && !finiteOut && reason === null;
  const underflow = exact !== null && !isZero(exact) && finiteOut && isZero(out);
  let outcome;
  if (reason) outcome = reason;
  else if (overflow) outcome = "overflow";
  else if (saturated) outcome = "saturated";
  else if (underflow) outcome = "underflow";
  else if (stored.kind === "nan" || stored.kind === "inf") outcome = stored.kind;
  else if (stored.kind === "subnormal") {
    outcome = errorShown !== null && isZero(errorShown) ? "subnormal" : "subnormal, rounded";
  } else outcome = errorShown !== null && isZero(errorShown) ? "exact" : "rounded";
  return { stored, relative, outcome };
}

/** The row of tables.value_table for one format. */
export function valueRow(parsed, f, rounding, saturate) {
  if (!f.hasNan && parsed.kind === "nan") return [f.name, "-", "-", "-", "-", "no NaN in this format"];
  const e = explain(parsed, f, rounding, saturate);
  const d = e.stored;
  return [f.name, hexBits(d.bits, f), fieldsText(d, f), formatValue(signedValue(d), d.kind, d.sign),
    e.relative === null ? "-" : formatG(e.relative, 3), e.outcome];
}

// --- bit patterns (codec.parse_bits and check_bits) --------------------------------------------------------------

const MAX_BITS_TEXT = 68;
const INT_LITERAL = /^([+-]?)(?:0[xX]((?:_?[0-9a-fA-F])+)|0[oO]((?:_?[0-7])+)|0[bB]((?:_?[01])+)|(0+(?:_?0)*)|([1-9](?:_?[0-9])*))$/;

export function parseBits(text) {
  const n = [...text].length;
  if (n > MAX_BITS_TEXT) throw valueError(`bit pattern is ${n.toLocaleString("en-US")} characters long; at most ${MAX_BITS_TEXT} are read`);
  const stripped = text.replace(/^[\s\x1c-\x1f\x85]+|[\s\x1c-\x1f\x85]+$/gu, "");
  // as codec.parse_bits: a literal of ASCII digits only (Python's int() alone would read '٣' as 3)
  const m = /^[\x00-\x7f]*$/.test(stripped) ? INT_LITERAL.exec(stripped) : null;
  if (!m) throw valueError(`a bit pattern is written like 0x63, 0b1100011 or 99; got ${shortText(text)}`);
  const [, sign, hex, oct, bin, zero, dec] = m;
  let value;
  if (hex !== undefined) value = BigInt("0x" + hex.replaceAll("_", ""));
  else if (oct !== undefined) value = BigInt("0o" + oct.replaceAll("_", ""));
  else if (bin !== undefined) value = BigInt("0b" + bin.replaceAll("_", ""));
  else if (zero !== undefined) value = 0n;
  else value = BigInt(dec.replaceAll("_", ""));
  return sign === "-" ? -value : value;
}

/** Python's format(bits, "#x"). */
const hexRepr = (n) => (n < 0n ? "-0x" + (-n).toString(16) : "0x" + n.toString(16));

function checkBits(bits, f) {
  const top = (1n << BigInt(f.bits)) - 1n;
  if (bits < 0n || bits > top) {
    throw valueError(`bit pattern ${hexRepr(bits)} does not fit ${f.name} (${f.bits} bits: 0..${hexRepr(top)})`);
  }
  return bits;
}

/** The row of tables.pattern_table. */
export function patternRow(bits, f) {
  const d = decode(checkBits(bits, f), f);
  let exponent = "-";
  if (d.kind !== "nan" && d.kind !== "inf") {
    exponent = String(d.kind === "zero" || d.kind === "subnormal" ? f.minExponent : Number(d.ef) - f.bias);
  }
  return [f.name, hexBits(bits, f), fieldsText(d, f), d.kind, exponent, formatValue(signedValue(d), d.kind, d.sign)];
}

// --- the form -------------------------------------------------------------------------------------------------

export const VALUE_HEADERS = ["format", "bits", "sign exponent mantissa", "stored value", "relative error", "outcome"];
export const PATTERN_HEADERS = ["format", "bits", "sign exponent mantissa", "kind", "unbiased exponent", "value"];

/** A table of `count` rows under `headers`, built once; `fill` writes new rows into its cells (thousands of updates
 * in a row stay fast: no element is made or parsed again). */
function rowsTable(headers, count, caption) {
  const body = el("tbody");
  for (let i = 0; i < count; i++) {
    body.append(el("tr", {}, ...headers.map((h) => el("td", { "data-col": h }))));
  }
  const table = el("table", {}, el("caption", {}, caption),
    el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", { scope: "col" }, h)))), body);
  const box = el("div", { class: "gpukb-calc-scroll" }, table);
  box.fill = (rows) => {
    rows.forEach((row, i) => {
      const tr = body.rows[i];
      tr.dataset.format = row[0];
      row.forEach((cell, j) => {
        if (tr.cells[j].textContent !== cell) tr.cells[j].textContent = cell;
      });
    });
  };
  return box;
}

export function mount(root, data) {
  const formats = data.formats.map(prepare);
  const byName = Object.fromEntries(formats.map((f) => [f.name, f]));
  let lastKey = null, lastRows = null; // kept while only the bit pattern changes
  const valueTable = rowsTable(VALUE_HEADERS, formats.length, "The value in every format (gpukb format VALUE)");
  const patternTable = rowsTable(PATTERN_HEADERS, 1, "The bit pattern (gpukb format BITS --as FORMAT)");
  wire(
    root,
    (boxes) => {
      const rounding = raw(boxes.rounding);
      const saturate = raw(boxes.saturate);
      const key = JSON.stringify([raw(boxes.value), rounding, saturate]);
      if (key !== lastKey) {
        const parsed = at("value", () => split(raw(boxes.value)));
        lastRows = formats.map((f) => at("value", () => valueRow(parsed, f, rounding, saturate)));
        lastKey = key;
      }
      const rows = lastRows;
      const f = byName[raw(boxes.as_format)];
      const pattern = at("bits", () => patternRow(parseBits(raw(boxes.bits)), f));
      return { rows, pattern };
    },
    (out, result) => {
      valueTable.fill(result.rows);
      patternTable.fill([result.pattern]);
      out.append(valueTable, patternTable);
    },
  );
}

