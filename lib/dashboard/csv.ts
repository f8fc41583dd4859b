// RFC 4180 CSV. Text cells that a spreadsheet would run as a formula are prefixed with a quote (OWASP).

export type CsvValue = string | number | bigint | boolean | null | undefined;

const formulaStart = /^[=+\-@\t\r]/;
const numeric = /^-?\d+(\.\d+)?$/;

export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (typeof value === 'string' && formulaStart.test(text) && !numeric.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(values: readonly CsvValue[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}
