// The body of a CSV download built from an async sequence of text chunks.
//
// A download that stops early must not look complete. Its first chunks (the header and the first
// batch of rows, which run the queries a bad filter would break) are read before the response
// starts, so such a failure is an ordinary JSON error answer. A failure after that errors the
// stream: the server then destroys the connection instead of ending the chunked body, and the
// browser or curl reports a failed download rather than saving a truncated file.

export async function csvStream(chunks: AsyncGenerator<string>, onError: (err: unknown) => void, prefetch = 2): Promise<ReadableStream<Uint8Array>> {
  const encoder = new TextEncoder();
  const ready: string[] = [];
  let done = false;
  try {
    while (ready.length < prefetch) {
      const next = await chunks.next();
      if (next.done) {
        done = true;
        break;
      }
      ready.push(next.value);
    }
  } catch (err) {
    await chunks.return(undefined).catch(() => undefined);
    throw err;
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const head = ready.shift();
      if (head !== undefined) return controller.enqueue(encoder.encode(head));
      if (done) return controller.close();
      try {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      } catch (err) {
        onError(err);
        controller.error(err);
      }
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}
