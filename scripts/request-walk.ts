// The request's walk (docs/decisions/058-request-record.md, "Measures"): from `runPipeline`, every
// call handed the request or made on it, in source order, depth first, each function once. A stop
// is the file a call lands in; a return is a stop in a file the walk had left before. Few returns:
// the request's life reads in one direction, each module it meets met in one stretch.
//
//   npx tsx scripts/request-walk.ts [--rec] [--this] [--path] [root]
//
// Exactly:
// - The request is `runPipeline`'s first parameter; in a function the walk enters, the parameters
//   it was handed in (and, for a constructor, the field such a parameter declares: `this.ctx`).
// - A call counts when an argument is the request, or it is made on the request (`ctx.open()`);
//   a call made on a field of it (`ctx.gate.admit()`) does not. With --rec, also a call handed the
//   request's record (`ctx.rec`, or a local name for it), and the walk follows the record in.
// - Each counted call is a stop, in the file of the declaration it resolves to (calls into
//   node_modules or the standard library are not stops). The body of a function is walked the first
//   time it is called, in place (depth first); a call to it again is a stop, not walked again.
// - Bodies are read in source order, closures where they are written.
// - With --this, a method of a class entered by a call made on the request (the old RequestContext)
//   counts the calls it makes on `this` too; without it, as the first measure was taken, it does not.
// - A return is a stop in another file than the stop before it, in a file the walk was in before
//   (it starts in lib/gateway/pipeline.ts).
import ts from 'typescript';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface WalkOptions {
  /** The repository to walk (default: this one). */
  root?: string;
  /** Also count the calls handed the request's record (`ctx.rec`), and follow the record into them. */
  rec?: boolean;
  /** Also count the calls a method made on the request makes on `this`. */
  self?: boolean;
}

export interface Stop {
  /** The file the call lands in, relative to the root. */
  file: string;
  /** The function called. */
  callee: string;
  /** Where the call is written (file:line). */
  at: string;
  /** A stop in a file the walk had left before. */
  isReturn: boolean;
}

export interface Walk {
  stops: Stop[];
  returns: number;
}

type Fn = ts.FunctionLikeDeclaration;

/** The walk from `runPipeline` in lib/gateway/pipeline.ts of `options.root`. */
export function requestWalk(options: WalkOptions = {}): Walk {
  const root = path.resolve(options.root ?? path.join(here, '..'));
  const entry = path.join(root, 'lib/gateway/pipeline.ts');
  const config = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const program = ts.createProgram([entry], { ...parsed.options, noEmit: true, incremental: false });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  if (!source) throw new Error(`no ${entry}`);

  const rel = (f: string) => path.relative(root, f).split(path.sep).join('/');
  const inProject = (f: ts.SourceFile) => !f.isDeclarationFile && !rel(f.fileName).startsWith('..') && !f.fileName.includes('/node_modules/');

  let runPipeline: Fn | undefined;
  ts.forEachChild(source, (n) => {
    if (ts.isFunctionDeclaration(n) && n.name?.text === 'runPipeline') runPipeline = n;
  });
  if (!runPipeline) throw new Error('runPipeline not found');

  const stops: Stop[] = [];
  const seenFiles = new Set<string>([rel(entry)]);
  let current = rel(entry);
  const walked = new Set<Fn>([runPipeline]);

  function stop(file: string, callee: string, call: ts.Node): void {
    const isReturn = file !== current && seenFiles.has(file);
    const sf = call.getSourceFile();
    const line = sf.getLineAndCharacterOfPosition(call.getStart()).line + 1;
    stops.push({ file, callee, at: `${rel(sf.fileName)}:${line}`, isReturn });
    seenFiles.add(file);
    current = file;
  }

  /** The declaration a call resolves to. */
  function target(call: ts.CallExpression | ts.NewExpression): ts.Declaration | undefined {
    const decl = checker.getResolvedSignature(call)?.declaration;
    if (decl && !ts.isJSDocSignature(decl)) return decl;
    let sym = checker.getSymbolAtLocation(call.expression);
    if (sym && sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
    return sym?.valueDeclaration ?? sym?.declarations?.[0];
  }

  function walk(fn: Fn, tracked: Set<ts.Symbol>, thisTracked: boolean): void {
    const isRequest = (e: ts.Expression): boolean => {
      e = skipWrappers(e);
      if (e.kind === ts.SyntaxKind.ThisKeyword) return thisTracked;
      if (ts.isIdentifier(e)) {
        const s = checker.getSymbolAtLocation(e);
        return s !== undefined && tracked.has(s);
      }
      // `this.ctx` in a class whose constructor was handed the request.
      if (ts.isPropertyAccessExpression(e) && e.expression.kind === ts.SyntaxKind.ThisKeyword) {
        const s = checker.getSymbolAtLocation(e.name);
        return s !== undefined && tracked.has(s);
      }
      return false;
    };
    const isRecord = (e: ts.Expression): boolean => {
      e = skipWrappers(e);
      return options.rec === true && ts.isPropertyAccessExpression(e) && e.name.text === 'rec' && isRequest(e.expression);
    };

    const visit = (node: ts.Node): void => {
      // `const rec = ctx.rec`: a local name for the record (--rec).
      if (ts.isVariableDeclaration(node) && node.initializer && ts.isIdentifier(node.name) && isRecord(node.initializer)) {
        const s = checker.getSymbolAtLocation(node.name);
        if (s) tracked.add(s);
      }
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const handed = (node.arguments ?? []).map((a) => isRequest(a) || isRecord(a));
        const callee = skipWrappers(node.expression);
        const madeOn = ts.isCallExpression(node) && ts.isPropertyAccessExpression(callee) && isRequest(callee.expression);
        const decl = handed.some(Boolean) || madeOn ? target(node) : undefined;
        const file = decl?.getSourceFile();
        if (decl && file && inProject(file)) {
          stop(rel(file.fileName), nameOf(decl), node);
          const into = functionOf(decl);
          if (into && !walked.has(into)) {
            walked.add(into);
            walk(into, handedParameters(into, handed), madeOn && options.self === true);
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    if (fn.body) ts.forEachChild(fn.body, visit);
  }

  /** The parameters of `fn` the request was handed in (a parameter property: its field too). */
  function handedParameters(fn: Fn, handed: boolean[]): Set<ts.Symbol> {
    const inner = new Set<ts.Symbol>();
    const params = fn.parameters;
    handed.forEach((h, i) => {
      const p = params[Math.min(i, params.length - 1)];
      if (!h || !p || !ts.isIdentifier(p.name)) return;
      const s = checker.getSymbolAtLocation(p.name);
      if (s) inner.add(s);
      if (ts.isConstructorDeclaration(fn) && ts.isParameterPropertyDeclaration(p, fn)) {
        for (const x of checker.getSymbolsOfParameterPropertyDeclaration(p, p.name.text)) inner.add(x);
      }
    });
    return inner;
  }

  walk(runPipeline, new Set([checker.getSymbolAtLocation(runPipeline.parameters[0].name)!]), false);
  return { stops, returns: stops.filter((s) => s.isReturn).length };
}

function skipWrappers(e: ts.Expression): ts.Expression {
  while (ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e) || ts.isAsExpression(e)) e = e.expression;
  return e;
}

/** The function a declaration stands for: itself, a class's constructor, a name bound to a function. */
function functionOf(decl: ts.Declaration): Fn | undefined {
  if (
    ts.isFunctionDeclaration(decl) ||
    ts.isMethodDeclaration(decl) ||
    ts.isConstructorDeclaration(decl) ||
    ts.isFunctionExpression(decl) ||
    ts.isArrowFunction(decl)
  )
    return decl;
  if (ts.isClassDeclaration(decl)) return decl.members.find(ts.isConstructorDeclaration);
  if ((ts.isVariableDeclaration(decl) || ts.isPropertyDeclaration(decl)) && decl.initializer) {
    const init = decl.initializer;
    if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) return init;
  }
  return undefined;
}

function nameOf(decl: ts.Declaration): string {
  if (ts.isConstructorDeclaration(decl)) return `new ${(decl.parent as ts.ClassDeclaration).name?.text ?? '?'}`;
  if (ts.isClassDeclaration(decl)) return `new ${decl.name?.text ?? '?'}`;
  const name = (decl as ts.Declaration & { name?: ts.Node }).name;
  return name && ts.isIdentifier(name) ? name.text : ts.SyntaxKind[decl.kind];
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const rec = args.includes('--rec');
  const walk = requestWalk({ root: args.find((a) => !a.startsWith('--')), rec, self: args.includes('--this') });
  if (args.includes('--path')) for (const s of walk.stops) console.log(`${s.isReturn ? '↩' : ' '} ${s.file.padEnd(32)} ${s.callee.padEnd(20)} ${s.at}`);
  console.log(`${walk.stops.length} stops, ${walk.returns} returns${rec ? ' (the record counted too)' : ''}`);
}
