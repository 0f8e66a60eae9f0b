// The tests' local web as a process of its own, so the bench measures the sweeper alone: prints
// the sweep options that reach it as one JSON line, then serves until killed.
import { startLocalWeb } from '../test/support/local-web.js';

const web = await startLocalWeb({ certCache: 2000 });
process.stdout.write(`${JSON.stringify({ cliArgs: web.cliArgs })}\n`);
process.on('SIGTERM', () => {
  process.stderr.write(`local web served ${web.served.http} http and ${web.served.https} https requests\n`);
  process.exit(0);
});
