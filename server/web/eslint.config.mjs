// ESLint for the page's script, run by .ci/run: the mistakes a browser would show only at run
// time (an undefined name, a variable never used, == where === was meant). No plugins and no
// imports, so CI needs nothing but `eslint` itself.
const readonly = (names) => Object.fromEntries(names.map((n) => [n, "readonly"]));

export default [
  {
    files: ["**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",
      globals: {
        ...readonly([
          "window", "document", "location", "WebSocket", "URLSearchParams", "Blob", "crypto",
          "setTimeout", "clearTimeout", "setInterval", "clearInterval", "MouseEvent",
          "getComputedStyle", "console", "performance", "URL", "TextEncoder", "localStorage", "btoa",
        ]),
        // Put before the script by asl-server (server/src/web.rs) from the engine's tables.
        ...readonly(["STEPS", "FRAME_BYTES_MAX", "IDLE_TIMEOUT_MS", "EXPORT_BYTES_MAX", "EXPORT_EVENTS_MAX",
          "REVIEW_RECEIPTS_MAX"]),
      },
    },
    rules: {
      "no-undef": "error",
      "no-unused-vars": ["error", { args: "none" }],
      "no-redeclare": "error",
      "no-dupe-keys": "error",
      "no-duplicate-case": "error",
      "no-unreachable": "error",
      "no-fallthrough": "error",
      "no-const-assign": "error",
      "no-self-assign": "error",
      "no-self-compare": "error",
      "no-unsafe-negation": "error",
      "no-cond-assign": "error",
      "use-isnan": "error",
      "valid-typeof": "error",
      "eqeqeq": "error",
      "no-var": "error",
      "prefer-const": "error",
      "no-eval": "error",
      "no-implied-eval": "error",
    },
  },
];
