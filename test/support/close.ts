/** Tolerance checks that print where two arrays first disagree. */
import { expect } from "vitest";

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): { max: number; at: number } {
  if (a.length !== b.length) throw new Error(`length mismatch: ${a.length} vs ${b.length}`);
  let max = 0,
    at = -1;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(Number(a[i]) - Number(b[i]));
    if (!(d <= max)) {
      max = d;
      at = i;
    } // NaN counts as a mismatch
  }
  return { max, at };
}

export function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: number, label: string): number {
  expect(actual.length, `${label}: length`).toBe(expected.length);
  const { max, at } = maxAbsDiff(actual, expected);
  if (!(max <= tol)) {
    const around = Array.from({ length: 4 }, (_, k) => at + k)
      .filter((i) => i < actual.length)
      .map((i) => `[${i}] ${Number(actual[i]).toPrecision(7)} vs ${Number(expected[i]).toPrecision(7)}`)
      .join(", ");
    expect.fail(`${label}: max abs diff ${max.toExponential(3)} > ${tol} at ${at}: ${around}`);
  }
  return max;
}
