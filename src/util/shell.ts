/**
 * Writing values into shell scripts (the Slurm scripts of src/cli/slurm.ts) so that they stay data.
 *
 * A grid's name, a folder or a file path can come from a colleague's shared file; written into a script
 * unquoted, or inside double quotes, `$(…)`, backticks or a newline in it would run as code on the cluster.
 * The rule here: every value goes through `shellQuote` (POSIX single quotes, inside which nothing is
 * special), never into a double-quoted string; and values with control characters are refused outright
 * (`unsafeCharIn`), because a line break is where a script's structure (an `#SBATCH` header line, a
 * comment) ends, whatever the quoting.
 */

/** Characters that need no quoting anywhere in a command (no `=`: `a=b` first on a line is an assignment; no `~`: tilde expansion). */
const PLAIN = /^[A-Za-z0-9_@%+:,./-]+$/;

/**
 * `s` as one POSIX shell word whose value is exactly `s`: plain words as they are, anything else in single
 * quotes, with each `'` written as `'\''` (close the quotes, an escaped quote, reopen). The empty string is `''`.
 */
export function shellQuote(s: string): string {
  return PLAIN.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A command line: each word quoted; the first always in quotes, so it is a command and never a shell keyword (`time`, `if`) or assignment. */
export function shellCommand(words: readonly string[]): string {
  return words.map((w, i) => (i === 0 ? `'${w.replace(/'/g, `'\\''`)}'` : shellQuote(w))).join(" ");
}

const NAMES: Record<number, string> = {
  0x00: "NUL",
  0x07: "bell",
  0x08: "backspace",
  0x09: "tab",
  0x0a: "line feed",
  0x0b: "vertical tab",
  0x0c: "form feed",
  0x0d: "carriage return",
  0x1b: "escape",
  0x7f: "delete",
  0x85: "next line",
  0x2028: "line separator",
  0x2029: "paragraph separator",
};

/**
 * The first character of `s` that may not appear in a name or path written into a script or a job header,
 * described for an error message ("U+000A (line feed) at character 3"), or undefined when there is none.
 * Refused: control characters (C0, DEL, C1; line breaks and tabs among them), the Unicode line and paragraph
 * separators, the bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069), which make a script
 * read differently from how it runs, and lone surrogates (not text; written to a file they become U+FFFD).
 */
export function unsafeCharIn(s: string): string | undefined {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let what: string | undefined;
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) what = NAMES[c] ?? "control character";
    else if (c === 0x2028 || c === 0x2029) what = NAMES[c];
    else if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) what = "bidirectional control";
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      what = "lone surrogate";
    } else if (c >= 0xdc00 && c <= 0xdfff) what = "lone surrogate";
    if (what !== undefined) return `U+${c.toString(16).toUpperCase().padStart(4, "0")} (${what}) at character ${i + 1}`;
  }
  return undefined;
}

/**
 * `s` for an error message: JSON-quoted (so a line break shows as \n), with the other characters that would
 * garble a terminal line (C1 controls, line separators, bidirectional controls) written as \uXXXX too, and
 * cut at 200 characters.
 */
export function printable(s: string): string {
  const q = JSON.stringify(s).replace(
    /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return q.length > 200 ? `${q.slice(0, 199)}…` : q;
}
