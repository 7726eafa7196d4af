/**
 * A body read only up to a cap while it streams, so what passes the cap is never buffered: the
 * host's outbound relay reads responses with it, the supervisor reads request bodies. Web streams
 * only, so both the host and the bundled worker import it.
 */

/** Reads `reader` to its end; past `cap` bytes it cancels the stream and throws `tooLarge()`. */
export async function readBounded(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  cap: number,
  tooLarge: () => Error,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > cap) {
      // The cap is the news; a stream that also fails to cancel changes nothing.
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
