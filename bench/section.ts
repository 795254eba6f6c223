/**
 * One `## Section` of a BENCHMARKS-style markdown file swapped for a new text, every other byte
 * left as it was: `npm run bench -- --section NAME` re-runs one per-module section alone and puts
 * it back into the existing BENCHMARKS.md with this (bench/run.ts).
 *
 * A section runs from its heading line to the next "## " heading line outside a fenced code block
 * (or the end of the file); the blank lines before that next heading belong to the file, not to the
 * section, so they are kept as they were.
 */

/** Where the section headed `heading` starts and where its text ends (trailing blank lines excluded), or undefined. */
export function sectionSpan(text: string, heading: string): { start: number; end: number } | undefined {
  const starts: number[] = [];
  let end = -1;
  let fenced = false;
  let open = -1;
  for (let at = 0; at < text.length;) {
    const nl = text.indexOf("\n", at);
    const lineEnd = nl < 0 ? text.length : nl;
    const line = text.slice(at, lineEnd);
    if (/^(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced && line.startsWith("## ")) {
      if (open >= 0 && end < 0) end = at;
      if (line.trimEnd() === heading) {
        starts.push(at);
        if (open < 0) open = at;
      }
    }
    at = nl < 0 ? text.length : nl + 1;
  }
  if (starts.length > 1) throw new Error(`the heading "${heading}" appears ${starts.length} times; expected it once`);
  if (open < 0) return undefined;
  if (end < 0) end = text.length;
  // the blank lines (and the line break) before the next heading stay with the file
  let contentEnd = end;
  while (contentEnd > open && /\s/.test(text[contentEnd - 1])) contentEnd--;
  return { start: open, end: contentEnd };
}

/** The section headed `heading` in `text` (its heading line first, no trailing blank lines), or undefined. */
export function sectionText(text: string, heading: string): string | undefined {
  const span = sectionSpan(text, heading);
  return span && text.slice(span.start, span.end);
}

/**
 * `text` with the section headed `heading` replaced by `body` (which starts with that heading line);
 * appended after one blank line when `text` has no such section. Every byte outside the section is unchanged.
 */
export function spliceSection(text: string, heading: string, body: string): string {
  const first = body.split("\n", 1)[0].trimEnd();
  if (first !== heading) throw new Error(`the new section starts with "${first}", expected its heading "${heading}"`);
  const span = sectionSpan(text, heading);
  const section = body.trimEnd();
  if (!span) return `${text.trimEnd()}\n\n${section}\n`;
  return text.slice(0, span.start) + section + text.slice(span.end);
}
