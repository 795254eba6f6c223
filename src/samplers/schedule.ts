/**
 * Transfer schedules: how many masked positions each denoising step unmasks. Pure functions
 * (LLaDA and Dream, docs/samplers.md).
 */

/**
 * LLaDA's `get_num_transfer_tokens` for one block: `floor(m / s)` tokens per step, and the first
 * `m mod s` steps take one more. Sums to m.
 * @param maskCount m, masks inside the block when it starts
 * @param steps s_b, steps per block
 * @returns [step] tokens to transfer at each step of the block
 */
export function lladaTransferCounts(maskCount: number, steps: number): Int32Array {
  const out = new Int32Array(steps);
  const base = Math.floor(maskCount / steps);
  const remainder = maskCount % steps;
  for (let i = 0; i < steps; i++) out[i] = base + (i < remainder ? 1 : 0);
  return out;
}

const f32 = Math.fround;

/**
 * Dream's `torch.linspace(1, eps, steps + 1)` in float32, as torch's CUDA kernel computes it: the
 * step is computed in float32 and the first half counts up from `start` while the second half
 * counts down from `end` (so the last value is exactly `eps` in float32). torch's CPU kernel
 * agrees bit for bit below 16 values; its AVX path for longer vectors differs by at most one
 * float32 ulp, which changes no transfer count in test/fixtures/samplers/dream-schedule.json.
 * @returns [steps + 1] float32 timesteps t_0 = 1 … t_steps = eps
 */
export function dreamTimesteps(steps: number, eps: number): Float32Array {
  const n = steps + 1;
  const start = 1;
  const end = f32(eps);
  const out = new Float32Array(n);
  if (n === 1) {
    out[0] = start;
    return out;
  }
  const step = f32(f32(end - start) / (n - 1));
  const halfway = Math.floor(n / 2);
  for (let i = 0; i < n; i++) {
    // One rounding per element: CUDA (and torch's FMA-contracted CPU scalar path) evaluate
    // start + step·i as a fused multiply-add; step·i and the sum are exact in float64.
    out[i] = i < halfway ? f32(start + step * i) : f32(end - step * (n - i - 1));
  }
  return out;
}

/**
 * Tokens Dream unmasks at step i: `int(m · (1 − s/t))` with t = t_i, s = t_{i+1}, evaluated in
 * float32 as torch does; at the last step every remaining mask (m). Step 0 often transfers 0
 * tokens when steps == masks (32 × 0.99… floors to 0).
 * @param maskCount m, masks in the row at this step
 * @param step i in 0 … steps−1
 * @param timesteps from `dreamTimesteps(steps, eps)`
 */
export function dreamTransferCount(maskCount: number, step: number, timesteps: Float32Array): number {
  const steps = timesteps.length - 1;
  if (step >= steps - 1) return maskCount;
  const t = timesteps[step];
  const s = timesteps[step + 1];
  const ratio = f32(1 - f32(s / t));
  return Math.trunc(f32(f32(maskCount) * ratio));
}

/**
 * Probability that a masked position is unmasked at step i under Dream's `origin` algorithm:
 * 1 − s/t (float32), and 1 at the last step.
 */
export function dreamOriginProbability(step: number, timesteps: Float32Array): number {
  const steps = timesteps.length - 1;
  if (step >= steps - 1) return 1;
  return f32(1 - f32(timesteps[step + 1] / timesteps[step]));
}
