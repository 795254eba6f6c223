// ESLint (flat config): typescript-eslint's recommended rules for every TypeScript file we own, plus the
// few habits this code base keeps (no unused names, no comma-operator statements). `npm run lint`.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "**/dist/**",
      "src/dist/**",
      "widgets/lib/**",
      "widgets/labextension/**",
      ".venv/**",
      ".cache/**",
      "notebooks/**",
      "training/**",
      "models/**",
      "**/*.js",
      "**/*.cjs",
      "**/*.mjs",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.tsx"],
    rules: {
      // Unused names are dead code or a bug; a leading underscore marks a parameter kept for its position.
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
      // `a(), b()` as a statement hides the second call: write two statements.
      "no-sequences": ["error", { allowInParentheses: false }],
      // Data arriving from JSON, arquero rows and ORT is untyped at the edge; `any` there is a deliberate choice.
      "@typescript-eslint/no-explicit-any": "off",
      // Non-null assertions document invariants the type system cannot see (indices checked a line above).
      "@typescript-eslint/no-non-null-assertion": "off",
      "prefer-const": "error",
      eqeqeq: ["error", "always", { null: "ignore" }],
      // Control characters in a regex are deliberate here (Python's whitespace set, ANSI colour codes).
      "no-control-regex": "off",
    },
  },
);
