import { describe, expect, it } from "vitest";
import { markdown, markdownAsPlainText } from "../../src/display/findings-text.js";

describe("markdown text/plain", () => {
  it("drops heading, emphasis and code marks (no raw '# Claims' summary line)", () => {
    expect(markdownAsPlainText("# Claims of the paper\n\n## Sinks\n**bold** `code` _it_")).toBe(
      "Claims of the paper\n\nSinks\nbold code it",
    );
    // a '#' inside a line is text, not a heading
    expect(markdownAsPlainText("C# and F#")).toBe("C# and F#");
    expect((markdown("# Claims").toMimeBundle() as Record<string, string>)["text/plain"]).toBe("Claims");
  });
});
