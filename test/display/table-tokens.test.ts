/** Token columns of tables read as text: byte-level markers decoded, other columns untouched. */
import * as aq from "arquero";
import { describe, expect, it } from "vitest";
import { tableBundle } from "../../src/display/table.js";

describe("tableBundle: token columns", () => {
  it("a byte-level token column shows · and ↵, not Ġ and Ċ; names and numbers as they are", () => {
    const t = aq.table({ model: ["smollm2-135m", "smollm2-135m"], token: ["Ġhelpful", "Ċ"], position: [3, 7] });
    const b = tableBundle(t as never);
    expect(b["text/html"]).toContain(">·helpful<");
    expect(b["text/html"]).toContain(">↵<");
    expect(b["text/html"]).not.toMatch(/[ĠĊ]/);
    expect(b["text/plain"]).toContain("|smollm2-135m|·helpful|3|");
  });
  it("a plain column with a literal Ġ beside raw spaces is left alone", () => {
    const t = aq.table({ token: ["Ġ", "a b"] });
    expect(tableBundle(t as never)["text/html"]).toContain(">Ġ<");
  });
  it("cells are still escaped", () => {
    const t = aq.table({ token: ["Ġ<script>", "Ċ"] });
    expect(tableBundle(t as never)["text/html"]).toContain(">·&lt;script&gt;<");
  });
});
