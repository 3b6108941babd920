// A QR code scanned on one node of a fleet, shown by an instance whose connector is live on another: that node links it.
import { randomUUID } from 'node:crypto';
import { CodedError, type ErrorCode } from '../../core/errors.js';
import type { StoreSignals } from '../../platform/store/signals.js';

/** What a scan links: the instance, its account address and profile name. */
export interface ScanResult {
  instanceId: string;
  ownerJid: string;
  profileName: string;
}

interface ScanRequest {
  id: string;
  from: string;
  code: string;
  number: string;
  profileName?: string;
}

type ScanAnswer = { id: string; to: string; result: ScanResult } | { id: string; to: string; error: { code: ErrorCode; messages: string[] } };

export interface RemoteScansDeps {
  signals: StoreSignals;
  incarnation: string;
  /** How long a scan waits for the node showing the code. */
  timeoutMs: number;
  /** Links the instance showing `code` when its connector is live here; null when it is not (another node answers). */
  scanHere(code: string, number: string, profileName: string | undefined): Promise<ScanResult | null>;
  /** The error a scan answers when no node answered in time. */
  unanswered(): Error;
}

const askChannel = 'sandbox-scan';
const answerChannel = 'sandbox-scan-answer';

/**
 * A scan is asked of every node (a signal); the node whose connector shows the code links the instance, exactly as a
 * scan there would, and signals the answer (or the error) back to the node that asked.
 */
export class RemoteScans {
  private readonly waiting = new Map<string, { resolve: (result: ScanResult) => void; reject: (error: Error) => void }>();

  constructor(private readonly deps: RemoteScansDeps) {
    deps.signals.listen(askChannel, (payload) => void this.answer(payload));
    deps.signals.listen(answerChannel, (payload) => this.answered(payload));
  }

  /** Asks the other nodes to link the instance showing `code`. */
  scan(code: string, number: string, profileName: string | undefined): Promise<ScanResult> {
    const request: ScanRequest = { id: randomUUID(), from: this.deps.incarnation, code, number, ...(profileName !== undefined ? { profileName } : {}) };
    return new Promise<ScanResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(request.id);
        reject(this.deps.unanswered());
      }, this.deps.timeoutMs);
      this.waiting.set(request.id, {
        resolve: (result) => {
          clearTimeout(timer);
          resolve(result);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.deps.signals.send(askChannel, JSON.stringify(request)).catch((error: unknown) => {
        this.waiting.delete(request.id);
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  private async answer(payload: string): Promise<void> {
    const request = JSON.parse(payload) as ScanRequest;
    if (request.from === this.deps.incarnation) return;
    let answer: ScanAnswer;
    try {
      const result = await this.deps.scanHere(request.code, request.number, request.profileName);
      if (result === null) return;
      answer = { id: request.id, to: request.from, result };
    } catch (error) {
      const coded = error instanceof CodedError ? error : new CodedError('internal', 'the scan failed on the node showing the code');
      answer = { id: request.id, to: request.from, error: { code: coded.code, messages: coded.messages } };
    }
    await this.deps.signals.send(answerChannel, JSON.stringify(answer));
  }

  private answered(payload: string): void {
    const answer = JSON.parse(payload) as ScanAnswer;
    if (answer.to !== this.deps.incarnation) return;
    const waiting = this.waiting.get(answer.id);
    if (!waiting) return;
    this.waiting.delete(answer.id);
    if ('result' in answer) waiting.resolve(answer.result);
    else waiting.reject(new CodedError(answer.error.code, answer.error.messages));
  }
}
