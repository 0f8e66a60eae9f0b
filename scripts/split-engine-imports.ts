/**
 * Codemod: points every import of a name from `@httpsify/engine` (or, inside the engine, from
 * `src/index.js`) at the entry that exports it now (the main entry or a subpath such as
 * `/authoring`). Mechanical, so it can be rerun on merged code:
 *
 *   npx tsx scripts/split-engine-imports.ts [--check]
 *
 * `--check` only lists the files it would change (exit 1 if any).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const engineSrc = join(root, 'packages/engine/src');
/** Subpath -> entry file, in order of preference when several export a name. */
const ENTRIES: [string, string][] = [
  ['', 'index.ts'],
  ['/parse', 'parse/index.ts'],
  ['/authoring', 'authoring/index.ts'],
  ['/dnr', 'dnr/index.ts'],
  ['/channels', 'channels/index.ts'],
  ['/node', 'node/index.ts'],
];

function exportMap(): Map<string, string> {
  const files = ENTRIES.map(([, f]) => join(engineSrc, f));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const map = new Map<string, string>();
  for (const [subpath, file] of ENTRIES) {
    const source = program.getSourceFile(join(engineSrc, file));
    const symbol = source && checker.getSymbolAtLocation(source);
    if (symbol === undefined) throw new Error(`cannot read the exports of ${file}`);
    for (const exported of checker.getExportsOfModule(symbol)) if (!map.has(exported.name)) map.set(exported.name, subpath);
  }
  return map;
}

function* typeScriptFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    // Build output: each package's dist/ and the extension's build/ (its src/build/ is source).
    if (entry === 'node_modules' || entry.startsWith('.') || /^packages\/[^/]+\/(dist|build)$/.test(relative(root, path))) continue;
    if (statSync(path).isDirectory()) yield* typeScriptFiles(path);
    else if (/\.(ts|mts)$/.test(entry) && !entry.endsWith('.d.ts')) yield path;
  }
}

/** The specifier for `subpath` as seen from `file`, or null when `spec` is not the engine's main entry. */
function retarget(file: string, spec: string): ((subpath: string) => string) | null {
  if (spec === '@httpsify/engine') return (subpath) => `@httpsify/engine${subpath}`;
  if (!spec.startsWith('.')) return null;
  if (resolve(dirname(file), spec.replace(/\.js$/, '.ts')) !== join(engineSrc, 'index.ts')) return null;
  return (subpath) => {
    const entry = ENTRIES.find(([s]) => s === subpath)?.[1] as string;
    const path = relative(dirname(file), join(engineSrc, entry)).replace(/\.ts$/, '.js');
    return path.startsWith('.') ? path : `./${path}`;
  };
}

function rewriteFile(file: string, names: Map<string, string>): string | null {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const edits: { start: number; end: number; text: string }[] = [];
  for (const statement of source.statements) {
    const isImport = ts.isImportDeclaration(statement);
    if (!isImport && !ts.isExportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier;
    if (specifier === undefined || !ts.isStringLiteral(specifier)) continue;
    const to = retarget(file, specifier.text);
    if (to === null) continue;
    let elements: readonly (ts.ImportSpecifier | ts.ExportSpecifier)[];
    let typeOnly: boolean;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const bindings = clause?.namedBindings;
      if (clause === undefined || clause.name !== undefined || bindings === undefined || !ts.isNamedImports(bindings))
        throw new Error(`${file}: only named imports from the engine can be moved`);
      elements = bindings.elements;
      typeOnly = clause.isTypeOnly;
    } else {
      const clause = statement.exportClause;
      if (clause === undefined || !ts.isNamedExports(clause)) throw new Error(`${file}: only named re-exports from the engine can be moved`);
      elements = clause.elements;
      typeOnly = statement.isTypeOnly;
    }
    const groups = new Map<string, string[]>();
    for (const element of elements) {
      const name = (element.propertyName ?? element.name).text;
      const subpath = names.get(name);
      if (subpath === undefined) throw new Error(`${file}: no engine entry exports ${name}`);
      groups.set(subpath, [...(groups.get(subpath) ?? []), element.getText(source)]);
    }
    if (groups.size === 1 && groups.has('')) continue;
    const keyword = `${isImport ? 'import' : 'export'}${typeOnly ? ' type' : ''}`;
    const lines = ENTRIES.filter(([subpath]) => groups.has(subpath)).map(
      ([subpath]) => `${keyword} { ${(groups.get(subpath) as string[]).join(', ')} } from '${to(subpath)}';`,
    );
    edits.push({ start: statement.getStart(source), end: statement.getEnd(), text: lines.join('\n') });
  }
  if (edits.length === 0) return null;
  let out = text;
  for (const edit of edits.reverse()) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

const check = process.argv.includes('--check');
const names = exportMap();
let changed = 0;
for (const file of typeScriptFiles(join(root, 'packages'))) {
  const out = rewriteFile(file, names);
  if (out === null) continue;
  changed++;
  console.log(relative(root, file));
  if (!check) writeFileSync(file, out);
}
if (check && changed > 0) process.exit(1);
