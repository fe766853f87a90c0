import { startGateway } from './gateway-process.ts';

// A test process that starts a gateway and then never stops it (as a suite whose hooks
// failed): it prints the gateway's pid and waits to be signalled.
const gateway = await startGateway();
process.stdout.write(`${String(gateway.child.pid)}\n`);
setInterval(() => undefined, 60_000);
