// The part of jsdom the tests use (its DOMParser), typed: jsdom ships no declarations of its own.
declare module "jsdom" {
  interface ParsedNode {
    nodeName: string;
    textContent: string | null;
    getAttribute(name: string): string | null;
    querySelectorAll(selector: string): ArrayLike<ParsedNode>;
    getElementsByTagName(name: string): ArrayLike<ParsedNode>;
  }
  interface ParsedDocument extends ParsedNode {
    documentElement: ParsedNode;
  }
  export class JSDOM {
    constructor(html?: string);
    window: { DOMParser: new () => { parseFromString(text: string, type: string): ParsedDocument } };
  }
}
