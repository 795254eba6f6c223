/**
 * Linear layers y = x·Wᵀ (+ b) on a 2-D [rows, in] stream, W in HF's [out, in] layout.
 *
 * f32 (and f16) weights run as `Gemm(transB=1)`: no transposed copy of W. A GGUF Q4_0 / Q4_1 / Q8_0 / Q4_K
 * weight under `quantizedWeights: "matmulnbits"` (f32 compute only) runs as com.microsoft
 * MatMulNBits on its quantised blocks instead (checkpoint/gguf/nbits.ts), with the bias added after.
 */
import { NBITS_TYPES, toMatMulNBits } from "../../checkpoint/gguf/nbits.js";
import type { GraphBuilder } from "../onnx/builder.js";
import { DataType } from "../onnx/proto.js";
import type { BuildContext } from "./context.js";

type NBits = { inputs: string[]; attrs: Record<string, number> };

/** The MatMulNBits initializers of weight `w`, or null when it runs as a plain Gemm. */
function nbitsInitializers(ctx: BuildContext, w: string, out: number, inp: number): NBits | null {
  const info = ctx.weights.tensors.get(w);
  const useNBits = ctx.options.quantizedWeights !== "dequantize" && !ctx.f16;
  const type = info?.encoding?.ggmlType;
  if (!useNBits || !info || type === undefined || !NBITS_TYPES.has(type) || info.shape[0] !== out || info.shape[1] !== inp) return null;
  const bits = type === "Q8_0" ? 8 : 4;
  const blockSize = 32;
  const nb = inp / blockSize;
  // Decoded once into the weight cache (or memory); a cached entry is used without decoding.
  const inputs = ctx.weights.decoded(`${w}#nbits`, () => {
    const q = toMatMulNBits(info);
    if (!q) return undefined;
    const u8 = (a: Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const made = [
      { name: `${w}.nbits_codes`, dataType: DataType.UINT8, dims: [q.n, nb, (blockSize * q.bits) / 8], data: q.codes },
      { name: `${w}.nbits_scales`, dataType: DataType.FLOAT, dims: [q.n * nb], data: u8(q.scales) },
    ];
    if (q.zeroPoints) made.push({ name: `${w}.nbits_zero_points`, dataType: DataType.FLOAT, dims: [q.n * nb], data: u8(q.zeroPoints) });
    return made;
  });
  if (!inputs) return null;
  const accuracy_level = ctx.options.nbitsAccuracyLevel ?? 0;
  return { inputs, attrs: { K: inp, N: out, bits, block_size: blockSize, accuracy_level } };
}

// A weight's MatMulNBits initializers are made once per graph: the MLP runs per row chunk, so one
// weight feeds one MatMulNBits node per chunk, and each must read the same initializers (a second
// copy under the same name would point at an external buffer that is never written).
const nbitsMade = new WeakMap<BuildContext, Map<string, NBits | null>>();

function nbitsOf(ctx: BuildContext, w: string, out: number, inp: number): NBits | null {
  let made = nbitsMade.get(ctx);
  if (!made) nbitsMade.set(ctx, (made = new Map()));
  let nbits = made.get(w);
  if (nbits === undefined) made.set(w, (nbits = nbitsInitializers(ctx, w, out, inp)));
  return nbits;
}

/** Whether weight `w` [out, inp] runs as MatMulNBits in this graph (else as a Gemm). */
export function runsAsNBits(ctx: BuildContext, w: string, out: number, inp: number): boolean {
  return nbitsOf(ctx, w, out, inp) !== null;
}

/** y = x·Wᵀ (+ bias) for x [rows, inp], W [out, inp]; emitted into `b` (weights stay in the outer graph). */
export function linear(ctx: BuildContext, x: string, w: string, out: number, inp: number, bias?: string, b: GraphBuilder = ctx.g): string {
  const nbits = nbitsOf(ctx, w, out, inp);
  const weight = ctx.weights.weight;
  if (nbits) {
    const y = b.node("MatMulNBits", [x, ...nbits.inputs], nbits.attrs, 1, "com.microsoft");
    return bias ? b.add(y, weight(bias, [out])) : y;
  }
  return b.gemmTransB(x, weight(w, [out, inp]), bias ? weight(bias, [out]) : undefined);
}
