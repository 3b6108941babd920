// The webhook sending thread: sends each lane's requests in order on its own event loop and answers the verdicts.
import { stopController } from '../../../platform/util/stop-controller.js';
import { parentPort, workerData } from 'node:worker_threads';
import { sharedGuardedDispatcher } from '../../../platform/net/guarded-dispatcher.js';
import { sendInOrder } from '../ordered-send.js';
import type { FromThread, ThreadSettings, ToThread } from './protocol.js';

if (!parentPort) throw new Error('the webhook sending thread must run as a worker thread');
const port = parentPort;
const settings = workerData as ThreadSettings;
const http = sharedGuardedDispatcher(settings.denyPrivate);
const stopping = stopController();
const inFlight = new Set<Promise<void>>();
const tell = (message: FromThread) => port.postMessage(message);

port.on('message', (message: ToThread) => {
  if (message.type === 'send') {
    const job = sendInOrder(message.requests, message.startBefore, settings.rules, http, stopping.signal).then(
      (verdicts) => tell({ type: 'sent', job: message.job, verdicts }),
      // sendInOrder turns every request failure into a verdict; anything else leaves the rest unattempted.
      () => tell({ type: 'sent', job: message.job, verdicts: [] }),
    );
    inFlight.add(job);
    void job.finally(() => inFlight.delete(job));
  } else if (message.type === 'stop') {
    stopping.abort();
    void Promise.all(inFlight).then(() => tell({ type: 'stopped' }));
  }
});
