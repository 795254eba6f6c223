/** The QK summary line never calls a part larger than the whole a "share" (notebook 03 printed "120 %" of an advantage). */
import { describe, expect, it } from "vitest";
import { advantageSplit } from "../../src/figures/qk.js";

describe("advantageSplit", () => {
  it("both parts push the same way: a share", () => {
    // 3 + 1 = 4: the angle carries 3/4 = 75 %
    expect(advantageSplit(3, 1)).toBe("75 % from the angle");
    expect(advantageSplit(2, 0)).toBe("100 % from the angle");
  });
  it("the parts pull apart: signed parts, no percent above 100", () => {
    // notebook 03's smollm2 layer 10: angle 8.861881, norm −2.3181 → total 6.543781 (the old text said 135 %)
    expect(advantageSplit(8.861881, -2.3181)).toBe("angle +8.86, norm −2.32 (they pull apart; total +6.54)");
    expect(advantageSplit(-1, 3)).toBe("angle −1, norm +3 (they pull apart; total +2)");
  });
  it("no advantage, or a deficit", () => {
    expect(advantageSplit(0, 0)).toBe("no advantage");
    expect(advantageSplit(-3, -1)).toBe("75 % of the deficit from the angle");
  });
});
