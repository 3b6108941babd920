// Runs operations of the n8n community node `n8n-nodes-evolution-api` (the published package's own code) against a server.
import { createRequire } from 'node:module';

/** A request as the node hands it to n8n's `helpers.request` (request-promise options). */
interface NodeRequest {
  method?: string;
  uri: string;
  body?: unknown;
  json?: boolean;
  qs?: Record<string, string | number | boolean>;
  headers?: Record<string, string>;
}

/** The error n8n's request helper throws for an answer of 400 or more (request-promise's StatusCodeError). */
class StatusCodeError extends Error {
  constructor(
    readonly statusCode: number,
    readonly error: unknown,
  ) {
    super(`${statusCode} - ${JSON.stringify(error)}`);
  }
}

const hasHeader = (headers: Record<string, string>, name: string) => Object.keys(headers).some((key) => key.toLowerCase() === name);

/** n8n's request helper as the node uses it: JSON in and out with `json: true`, an error for answers of 400 or more. */
async function request(options: NodeRequest): Promise<unknown> {
  const url = new URL(options.uri);
  for (const [name, value] of Object.entries(options.qs ?? {})) url.searchParams.set(name, String(value));
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = options.json ? JSON.stringify(options.body) : String(options.body);
    if (options.json && !hasHeader(headers, 'content-type')) headers['content-type'] = 'application/json';
  }
  if (options.json && !hasHeader(headers, 'accept')) headers.accept = 'application/json';
  const response = await fetch(url, { method: options.method ?? 'GET', headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  if (options.json && text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      // n8n hands a non-JSON answer over as text too.
    }
  }
  if (response.status >= 400) throw new StatusCodeError(response.status, parsed);
  return parsed;
}

/** Reads `a.b.c` of the parameters, as n8n resolves a collection's path. */
function parameterAt(parameters: Record<string, unknown>, path: string): unknown {
  let value: unknown = parameters;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A field of the node's form: its name, default, and the other fields' values that show it. */
interface NodeProperty {
  name: string;
  default?: unknown;
  displayOptions?: { show?: Record<string, unknown[]> };
}

/**
 * A parameter's value as n8n gives it to the node: the one set, else the default of the form field that the set
 * values show (n8n keeps the defaults of the fields a user left alone).
 */
function parameterValue(properties: NodeProperty[], parameters: Record<string, unknown>, name: string, depth = 0): unknown {
  const value = parameterAt(parameters, name);
  if (value !== undefined || depth > 3) return value;
  const shown = properties.find(
    (property) =>
      property.name === name &&
      Object.entries(property.displayOptions?.show ?? {}).every(([other, allowed]) =>
        allowed.includes(parameterValue(properties, parameters, other, depth + 1)),
      ),
  );
  return shown?.default;
}

/** The part of n8n's IExecuteFunctions the node calls. */
function executeContext(server: { url: string; apikey: string }, properties: NodeProperty[], parameters: Record<string, unknown>) {
  const node = { id: 'evolution-api-test', name: 'Evolution API', type: 'n8n-nodes-evolution-api.evolutionApi', typeVersion: 1, position: [0, 0], parameters };
  return {
    getNodeParameter(name: string, _item: number, fallback?: unknown): unknown {
      const value = parameterValue(properties, parameters, name);
      if (value !== undefined) return value;
      if (fallback !== undefined) return fallback;
      throw new Error(`Could not get parameter "${name}"`);
    },
    async getCredentials(type: string) {
      if (type !== 'evolutionApi') throw new Error(`no credentials of type ${type}`);
      return { 'server-url': `${server.url}/messenger`, apikey: server.apikey };
    },
    getInputData: () => [{ json: {} }],
    getNode: () => node,
    continueOnFail: () => false,
    helpers: {
      request,
      returnJsonArray: (data: unknown) =>
        (Array.isArray(data) ? data : [data]).map((item) => (item && typeof item === 'object' && 'json' in item ? item : { json: item })),
    },
  };
}

interface EvolutionNode {
  description: { properties: NodeProperty[] };
  execute(this: ReturnType<typeof executeContext>): Promise<{ json: unknown }[][]>;
}

// Installed apart from the project's own packages, in test/clients/n8n (`npm test` installs it first).
const require = createRequire(new URL('../clients/n8n/package.json', import.meta.url));
const { EvolutionApi } = require('n8n-nodes-evolution-api/dist/nodes/EvolutionApi/EvolutionApi.node.js') as { EvolutionApi: new () => EvolutionNode };

/**
 * Runs one operation of the node (its `resource` and `operation` parameters and the operation's own ones) and answers
 * the JSON of its first output item; the node throws (as it does in a workflow) when the server answers an error.
 */
export async function runNodeOperation(
  server: { url: string; apikey: string },
  resource: string,
  operation: string,
  parameters: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const node = new EvolutionApi();
  const context = executeContext(server, node.description.properties, { resource, operation, ...parameters });
  const output = await node.execute.call(context).catch((error: { message: string; description?: string }) => {
    // The node's error names the operation in Portuguese; its description holds the server's answer.
    throw new Error(`${error.message}: ${error.description ?? ''}`);
  });
  return output[0][0].json as Record<string, unknown>;
}
