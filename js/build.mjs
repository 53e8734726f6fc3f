// Bundle the lgnb front end (views + Graphviz WASM) into ../lgnb/static/lgnb.js.
// `node build.mjs` builds once (minified); `node build.mjs --watch` rebuilds on change.
import * as esbuild from "esbuild";
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const options = {
  entryPoints: [resolve(here, "src/index.js")],
  outfile: resolve(here, "../lgnb/static/lgnb.js"),
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: !process.argv.includes("--watch"),
  legalComments: "none",
  logLevel: "info",
};

if (process.argv.includes("--watch")) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}
