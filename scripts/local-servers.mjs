// What the scripts that start local servers share (the lab, the receiver-name measurements): a free
// loopback port, a pause, and waiting for a freshly started server to answer.
import { createServer } from "node:net";

/** A loopback port nothing listens on now. */
export const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `url` answers with a success, or throws after 20 s naming `what`. */
export async function waitUntilUp(url, what = url) {
  for (let i = 0; i < 200; i++) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await sleep(100);
  }
  throw new Error(`${what} did not come up at ${url}`);
}
