// What every translator with a Gemini upstream reads from its replies, and writes into its requests, the same way.

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};

/** fileData needs a MIME type; an http URL only hints at it by its extension (JPEG when it says nothing). */
export function mimeOfUrl(url: string): string {
  let pathname = url;
  try {
    pathname = new URL(url).pathname;
  } catch {
    // keep the raw text
  }
  const ext = /\.([a-z0-9]+)$/i.exec(pathname)?.[1]?.toLowerCase();
  return (ext && MIME_BY_EXTENSION[ext]) || 'image/jpeg';
}
