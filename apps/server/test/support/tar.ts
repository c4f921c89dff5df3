import tar from "tar-stream";

/** A tar archive of these text files, as a pushed project arrives at the builder. */
export async function tarOf(files: Record<string, string>): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, text] of Object.entries(files)) pack.entry({ name }, text);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
