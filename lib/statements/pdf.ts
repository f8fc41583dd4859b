// A small PDF writer for statements and receipts: text and rules on A4 pages, in the three standard
// fonts every PDF reader has (Helvetica, Helvetica-Bold, Courier), so nothing is embedded and nothing
// is installed. Text is written in WinAnsiEncoding: ASCII plus a few signs (¥ · — …); any other
// character (CJK among them) is written as '?', so documents keep their text in English
// (docs/decisions/046). Amounts are set in Courier, whose fixed advance makes right alignment exact.
import { deflateSync } from 'node:zlib';

export type PdfFont = 'regular' | 'bold' | 'mono';

const FONT_NAME: Record<PdfFont, string> = { regular: 'F1', bold: 'F2', mono: 'F3' };
const BASE_FONT: Record<PdfFont, string> = { regular: 'Helvetica', bold: 'Helvetica-Bold', mono: 'Courier' };
/** WinAnsiEncoding bytes of the non-ASCII characters written as themselves. */
const WIN_ANSI: Record<string, number> = { '¥': 0xa5, '·': 0xb7, '—': 0x97, '–': 0x96, '…': 0x85, '×': 0xd7, '’': 0x92 };

export const PAGE_WIDTH = 595.28; // A4, points
export const PAGE_HEIGHT = 841.89;
export const MARGIN = 48;

/** A string as a PDF literal: WinAnsi bytes, with ( ) \ and the bytes above 126 escaped. */
export function pdfString(text: string): string {
  let out = '(';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    const byte = code >= 32 && code <= 126 ? code : (WIN_ANSI[ch] ?? 63);
    if (byte === 0x28 || byte === 0x29 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte > 126) out += `\\${byte.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(byte);
  }
  return `${out})`;
}

/** Width of `text` in Courier at `size` (600/1000 em per character). */
export const monoWidth = (text: string, size: number) => [...text].length * 0.6 * size;

const num = (n: number) => (Math.round(n * 100) / 100).toString();

/**
 * Writes top to bottom: `text` at the current line, `next` moves down, a new page starts when the
 * bottom margin is reached (with `onNewPage` to repeat a header).
 */
export class PdfWriter {
  private pages: string[][] = [[]];
  /** Baseline of the current line, from the page's bottom. */
  y = PAGE_HEIGHT - MARGIN;
  onNewPage: ((w: PdfWriter) => void) | null = null;

  constructor(private readonly title: string) {}

  private get ops(): string[] {
    return this.pages[this.pages.length - 1]!;
  }

  text(x: number, text: string, opts: { size?: number; font?: PdfFont; align?: 'left' | 'right'; gray?: number } = {}): this {
    const size = opts.size ?? 9;
    const font = opts.align === 'right' ? 'mono' : (opts.font ?? 'regular');
    const left = opts.align === 'right' ? x - monoWidth(text, size) : x;
    // The fill colour outlives ET: every text sets its own (black unless asked).
    const color = `${num(opts.gray ?? 0)} g `;
    this.ops.push(`BT ${color}/${FONT_NAME[font]} ${size} Tf ${num(left)} ${num(this.y)} Td ${pdfString(text)} Tj ET`);
    return this;
  }

  rule(gray = 0.8): this {
    this.ops.push(`${num(gray)} G 0.5 w ${MARGIN} ${num(this.y - 4)} m ${num(PAGE_WIDTH - MARGIN)} ${num(this.y - 4)} l S`);
    return this;
  }

  /** Moves down one line of `height` points, to a new page if the bottom margin is reached. */
  next(height = 13): this {
    this.y -= height;
    if (this.y < MARGIN + 20) this.newPage();
    return this;
  }

  /** Makes sure `height` points remain on this page (a table's header with its first rows). */
  keep(height: number): this {
    if (this.y - height < MARGIN + 20) this.newPage();
    return this;
  }

  newPage(): this {
    this.pages.push([]);
    this.y = PAGE_HEIGHT - MARGIN;
    this.onNewPage?.(this);
    return this;
  }

  /** The document: objects, cross-reference table and trailer, content streams deflated. */
  toBuffer(): Buffer {
    const objects: Buffer[] = [];
    const add = (body: string | Buffer) => {
      objects.push(typeof body === 'string' ? Buffer.from(body, 'latin1') : body);
      return objects.length;
    };
    const catalog = add('');
    const pagesId = add('');
    const fontIds = (['regular', 'bold', 'mono'] as const).map((f) =>
      add(`<< /Type /Font /Subtype /Type1 /BaseFont /${BASE_FONT[f]} /Encoding /WinAnsiEncoding >>`),
    );
    const fonts = (['regular', 'bold', 'mono'] as const).map((f, i) => `/${FONT_NAME[f]} ${fontIds[i]} 0 R`).join(' ');
    const total = this.pages.length;
    const kids: number[] = [];
    this.pages.forEach((ops, i) => {
      const footer = `BT 0.45 g /F1 8 Tf ${MARGIN} ${MARGIN - 20} Td ${pdfString(`${this.title} · page ${i + 1} of ${total}`)} Tj ET`;
      const content = deflateSync(Buffer.from([...ops, footer].join('\n'), 'latin1'));
      const contentId = add(
        Buffer.concat([Buffer.from(`<< /Length ${content.length} /Filter /FlateDecode >>\nstream\n`, 'latin1'), content, Buffer.from('\nendstream', 'latin1')]),
      );
      kids.push(
        add(
          `<< /Type /Page /Parent ${pagesId} 0 R /MediaBox [0 0 ${PAGE_WIDTH} ${PAGE_HEIGHT}] /Resources << /Font << ${fonts} >> >> /Contents ${contentId} 0 R >>`,
        ),
      );
    });
    objects[catalog - 1] = Buffer.from(`<< /Type /Catalog /Pages ${pagesId} 0 R >>`, 'latin1');
    objects[pagesId - 1] = Buffer.from(`<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`, 'latin1');
    const info = add(`<< /Title ${pdfString(this.title)} /Producer (Model Gateway) >>`);

    const chunks: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
    let offset = chunks[0]!.length;
    const offsets: number[] = [];
    objects.forEach((body, i) => {
      offsets.push(offset);
      const chunk = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`, 'latin1'), body, Buffer.from('\nendobj\n', 'latin1')]);
      chunks.push(chunk);
      offset += chunk.length;
    });
    const xref = [`xref\n0 ${objects.length + 1}\n`, '0000000000 65535 f \n', ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
    chunks.push(
      Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R /Info ${info} 0 R >>\nstartxref\n${offset}\n%%EOF\n`, 'latin1'),
    );
    return Buffer.concat(chunks);
  }
}
