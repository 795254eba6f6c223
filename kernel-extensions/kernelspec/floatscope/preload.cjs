"use strict";
/**
 * Preloaded into the floatscope kernel with `node --require`. Kept tiny and free of heavy
 * imports: notebooks load the library themselves with `import { show } from "floatscope"`.
 *
 * - Marks the process as a floatscope kernel, so the display module can tell "in our kernel
 *   but no cell is running" apart from "not in a kernel at all".
 * - Keeps printed values short: tslab prints a cell's last expression with util.inspect.
 */
const util = require("node:util");

globalThis[Symbol.for("floatscope.kernel")] = {
  flavour: "floatscope",
  startedAt: new Date().toISOString(),
};
util.inspect.defaultOptions.depth = 3;
util.inspect.defaultOptions.maxArrayLength = 20;
util.inspect.defaultOptions.maxStringLength = 2000;
