// Bundle the page's scripts and styles into judge/web/static/dist with content-hashed names.
//
//   node build.mjs [--source-hash HEX]
//
// Writes one file per entry point and shared chunk (name-HASH.js / name-HASH.css), a gzip copy of each
// (served when the browser accepts gzip), and manifest.json, which maps each entry ("problem.js",
// "editor.js", "list.js", "style.css") to its hashed file and records the source hash the files were built from.
// The server reads only manifest.json; hashed names let it serve every file with a one-year max-age.
import { build } from "esbuild";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = join(here, "..", "judge", "web", "static", "dist");
const hashFlag = process.argv.indexOf("--source-hash");
const sourceHash = hashFlag > 0 ? process.argv[hashFlag + 1] : null;

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });

const entryPoints = {
  list: join(here, "src", "list.js"),
  problem: join(here, "src", "problem.js"),
  // Loaded by problem.js with import() once the page is usable; an entry of its own so the manifest
  // names it (the tests hold it back to use the page before CodeMirror arrives).
  editor: join(here, "src", "editor.js"),
  style: join(here, "src", "style.css"),
};
// The manifest's keys: "problem.js" for web/src/problem.js, ... (chunks that dynamic imports of packages
// produce, such as jsonc-parser's, are loaded by the scripts themselves and are not listed).
const entryNames = new Map(
  Object.values(entryPoints).map((path) => [relative(here, path).replaceAll("\\", "/"), basename(path)]),
);

// web/src/jax-docs.json (the editor's JAX docs, several times the editor's size) is a file of its own that
// web/src/hover.js fetches on first use: importing it gives its hashed URL, not its contents.
const docsAsFile = {
  name: "jax-docs-as-file",
  setup(plugin) {
    plugin.onLoad({ filter: /[\\/]jax-docs\.json$/ }, (args) => ({ contents: readFileSync(args.path), loader: "file" }));
  },
};

const result = await build({
  entryPoints,
  outdir,
  absWorkingDir: here, // the metafile's paths (and so entryNames' keys) are relative to web/
  bundle: true,
  splitting: true,
  format: "esm",
  target: ["chrome100", "firefox100", "safari15"],
  minify: true,
  legalComments: "external",
  entryNames: "[name]-[hash]",
  chunkNames: "chunk-[hash]",
  assetNames: "[name]-[hash]",
  // Where the served bundle lives: the stylesheet is inlined into each page's <head>, so the font URLs
  // it holds must not be relative to the CSS file.
  publicPath: "/static/",
  loader: { ".woff2": "file" },
  plugins: [docsAsFile],
  metafile: true,
  logLevel: "warning",
});

// files: entry -> hashed file; preload: entry -> the chunks it imports (for <link rel="modulepreload">,
// so the browser fetches them with the entry instead of after parsing it).
const manifest = { source_hash: sourceHash, files: {}, preload: {} };
for (const [file, meta] of Object.entries(result.metafile.outputs)) {
  const name = basename(file);
  const data = readFileSync(file);
  if (/\.(js|css|json)$/.test(name)) writeFileSync(`${file}.gz`, gzipSync(data, { level: 9 }));
  const entry = meta.entryPoint ? entryNames.get(meta.entryPoint) : undefined;
  if (entry) {
    manifest.files[entry] = relative(outdir, file);
    manifest.preload[entry] = meta.imports
      .filter((item) => item.kind === "import-statement")
      .map((item) => relative(outdir, item.path));
  }
}
writeFileSync(join(outdir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
console.log(`web: built ${Object.keys(manifest.files).length} entries into ${relative(process.cwd(), outdir)}`);
