// Runs the built CLI (dist/src, `npm run build` first) with the arguments
// given and reports, as the last line of stderr, the modules of
// dist/src/operations/ that the run loaded, in load order: a JSON array of
// their file names. The CLI's own stdout and stderr pass through.
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const { port1, port2 } = new MessageChannel();
const loaded = [];
port1.on('message', (url) => loaded.push(url));
port1.unref();
// Module hooks run on a thread of their own: each module's URL comes back over the port before the module runs.
const hook = `let port;
export function initialize(data) { port = data.port; }
export async function load(url, context, next) { port.postMessage(url); return next(url, context); }`;
register(`data:text/javascript,${encodeURIComponent(hook)}`, { data: { port: port2 }, transferList: [port2] });

const { createProcessIo, main } = await import('../../dist/src/app/main.js');
process.exitCode = await main(process.argv.slice(2), createProcessIo());
// The last URLs posted may still be on their way.
await new Promise((resolve) => setTimeout(resolve, 20));
const operations = loaded.filter((url) => url.includes('/dist/src/operations/')).map((url) => url.slice(url.lastIndexOf('/') + 1));
process.stderr.write(`${JSON.stringify(operations)}\n`);
