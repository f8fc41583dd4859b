// A strict reader of the PDFs the gateway writes (statements, receipts), independent of lib/statements:
// checks the header, the trailer, that every cross-reference offset lands on its object, that the
// page tree counts its pages, and returns the text shown (Tj strings, WinAnsi decoded) per page.
import { inflateSync } from 'node:zlib';

export interface ParsedPdf {
  pages: number;
  /** The text of each page, its strings joined by newlines. */
  text: string[];
}

const WIN_ANSI_HIGH: Record<number, string> = { 0xa5: '¥', 0xb7: '·', 0x97: '—', 0x96: '–', 0x85: '…', 0xd7: '×', 0x92: '’' };

function unescapeLiteral(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const n = body[++i]!;
    const oct = /^[0-7]{1,3}/.exec(body.slice(i));
    if (oct) {
      out += String.fromCharCode(parseInt(oct[0], 8));
      i += oct[0].length - 1;
    } else out += { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f' }[n] ?? n;
  }
  return [...out].map((ch) => (ch.charCodeAt(0) > 126 ? (WIN_ANSI_HIGH[ch.charCodeAt(0)] ?? '\ufffd') : ch)).join('');
}

export function parsePdf(buf: Buffer): ParsedPdf {
  const raw = buf.toString('latin1');
  if (!raw.startsWith('%PDF-1.')) throw new Error('no %PDF header');
  if (!/%%EOF\s*$/.test(raw)) throw new Error('no %%EOF at the end');
  const startxref = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(raw);
  if (!startxref) throw new Error('no startxref');
  const xrefAt = Number(startxref[1]);
  if (!raw.startsWith('xref', xrefAt)) throw new Error(`startxref ${xrefAt} does not point at the xref table`);
  const head = /^xref\s+0 (\d+)\s+/.exec(raw.slice(xrefAt));
  if (!head) throw new Error('bad xref header');
  const count = Number(head[1]);
  const entries = raw
    .slice(xrefAt + head[0].length)
    .split('\n')
    .slice(0, count);
  const objects = new Map<number, string>();
  const offsets = new Map<number, number>();
  entries.forEach((line, n) => {
    const m = /^(\d{10}) (\d{5}) ([nf]) ?\r?$/.exec(line);
    if (!m) throw new Error(`bad xref entry ${n}: ${JSON.stringify(line)}`);
    if (m[3] === 'f') return;
    const at = Number(m[1]);
    if (!raw.startsWith(`${n} 0 obj`, at)) throw new Error(`xref entry ${n} points at ${JSON.stringify(raw.slice(at, at + 12))}`);
    const end = raw.indexOf('endobj', at);
    if (end < 0) throw new Error(`object ${n} has no endobj`);
    objects.set(n, raw.slice(at, end));
    offsets.set(n, at);
  });
  const trailer = /trailer\s*<<([\s\S]*?)>>\s*startxref/.exec(raw);
  const root = trailer && /\/Root (\d+) 0 R/.exec(trailer[1]!);
  if (!trailer || !root || !new RegExp(`/Size ${count}\\b`).test(trailer[1]!)) throw new Error('bad trailer');
  const catalog = objects.get(Number(root[1]));
  const pagesRef = catalog && /\/Type \/Catalog \/Pages (\d+) 0 R/.exec(catalog);
  const pageTree = pagesRef ? objects.get(Number(pagesRef[1])) : undefined;
  const tree = pageTree && /\/Kids \[([^\]]*)\] \/Count (\d+)/.exec(pageTree);
  if (!tree) throw new Error('no page tree');
  const kids = [...tree[1]!.matchAll(/(\d+) 0 R/g)].map((m) => Number(m[1]));
  if (kids.length !== Number(tree[2])) throw new Error('page count differs from its kids');

  const text = kids.map((kid) => {
    const page = objects.get(kid) ?? '';
    const contentRef = /\/Contents (\d+) 0 R/.exec(page);
    if (!/\/Type \/Page\b/.test(page) || !contentRef) throw new Error(`object ${kid} is not a page with contents`);
    const content = objects.get(Number(contentRef[1]))!;
    const dict = /<< \/Length (\d+) \/Filter \/FlateDecode >>\nstream\n/.exec(content);
    if (!dict) throw new Error('content stream without length');
    const start = buf.indexOf('stream\n', offsets.get(Number(contentRef[1]))) + 'stream\n'.length;
    const ops = inflateSync(buf.subarray(start, start + Number(dict[1]))).toString('latin1');
    return [...ops.matchAll(/\((?:[^()\\]|\\[\s\S])*\) Tj/g)].map((m) => unescapeLiteral(m[0].slice(1, -4))).join('\n');
  });
  return { pages: kids.length, text };
}
