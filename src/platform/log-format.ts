// How log lines look: JSON lines as pino writes them, or pino-pretty's readable lines formatted off the event loop.
import { pino, type DestinationStream } from 'pino';

/** The words LOG_FORMAT accepts. */
export const logFormats: readonly string[] = ['auto', 'pretty', 'json'];

/** What is written: `auto` means pretty on a terminal (a person reads it) and JSON elsewhere (a collector does). */
export function chosenLogFormat(setting: string, stdoutIsTerminal: boolean): 'pretty' | 'json' {
  if (setting === 'pretty' || setting === 'json') return setting;
  return stdoutIsTerminal ? 'pretty' : 'json';
}

/**
 * Where the service's log lines go: undefined for JSON (pino's own fast stdout writer, untouched), or a pino-pretty
 * transport for readable lines. A transport formats in a worker thread and writes to stdout from there, so colouring
 * and laying out lines costs the event loop only the JSON pino writes anyway.
 */
export function logDestination(setting: string, stdout: { isTTY?: boolean } = process.stdout): DestinationStream | undefined {
  if (chosenLogFormat(setting, stdout.isTTY === true) === 'json') return undefined;
  return pino.transport({
    target: 'pino-pretty',
    options: {
      destination: 1,
      // The worker cannot see the terminal; colours only when stdout is one and NO_COLOR is not set.
      colorize: stdout.isTTY === true && !process.env.NO_COLOR,
      translateTime: 'SYS:HH:MM:ss.l',
      messageFormat: '{if instance}[{instance}] {end}{if reqId}({reqId}) {end}{msg}',
      ignore: 'pid,hostname,service,instance,reqId',
    },
  }) as DestinationStream;
}
