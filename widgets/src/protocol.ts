/**
 * The payload contract, shared with the kernel library: `src/figures/payloads.ts` is compiled into
 * this bundle as it is (it has no imports), so the two sides cannot drift apart.
 */
export * from "../../src/figures/payloads.js";
